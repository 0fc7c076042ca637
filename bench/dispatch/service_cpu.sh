#!/usr/bin/env bash
# The service's own CPU per request (user + system of the dispatch-api process alone, from
# /proc/<pid>/stat) of GET /incident/{id} (random demo incidents) against GET /healthz on the
# same process, at 32 connections (wrk): issue 44's second row. Run by hand, not a test:
#   BIN=/tmp/some-build bench/dispatch/service_cpu.sh
# The figures in µs move with the machine's load (other processes' cache use); the ratio much
# less; instructions per request (callgrind.sh) not at all: state them beside.
# Environment: PGURL (default postgres://postgres@127.0.0.1:5432), DB (dispatch_callgrind, as
# callgrind.sh), BIN (a release build),
# PORT (18394), CONNECTIONS (32), DURATION (10 s), REUSE=1 (keep dispatch_callgrind's demo
# data, seeded by callgrind.sh, instead of seeding again: seeding takes minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=bench/dispatch
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=${DB:-dispatch_callgrind}
PORT=${PORT:-18394}
CONNECTIONS=${CONNECTIONS:-32}
DURATION=${DURATION:-10}
: "${BIN:?BIN=<a release build of dispatch-api>}"
export DATABASE_URL=$PGURL/$DB JWT_SECRET=bench-secret-bench-secret-bench-secret-0
export BIND=127.0.0.1:$PORT RUST_LOG=warn LOG_FORMAT=json
if [ "${REUSE:-0}" != 1 ]; then
  psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" -c "CREATE DATABASE \"$DB\""
  "$BIN" seed > /dev/null
fi
TOKEN=$("$BIN" token --login regulador --ttl 1h)
"$BIN" serve > /dev/null 2>&1 &
SERVER=$!
trap 'kill $SERVER 2> /dev/null; wait $SERVER 2> /dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null && break; sleep 0.1; done

ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
sys_ticks() { awk '{print $15}' "/proc/$SERVER/stat"; }
hz=$(getconf CLK_TCK)
run() { # name, wrk arguments: prints name, req/s, requests, µs of the server's CPU per request
  local name=$1; shift
  wrk -t2 -c"$CONNECTIONS" -d3s "$@" > /dev/null # warm-up
  local before; before=$(ticks)
  local sys_before; sys_before=$(sys_ticks)
  local out; out=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" "$@")
  local used=$(($(ticks) - before))
  local sys=$(($(sys_ticks) - sys_before))
  local n; n=$(awk '/requests in/ {print $1}' <<< "$out")
  local rps; rps=$(awk '/Requests\/sec/ {print $2}' <<< "$out")
  awk -v name="$name" -v n="$n" -v t="$used" -v s="$sys" -v hz="$hz" -v rps="$rps" \
    'BEGIN { printf "%-20s %10s req/s %9d requests (system %5.1f us) %7.1f us CPU per request\n", name, rps, n, s / hz * 1e6 / n, t / hz * 1e6 / n }'
}
echo "binary: $BIN; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
H=$(run "GET /healthz" "http://127.0.0.1:$PORT/healthz")
I=$(run "GET /incident/{id}" -H "Authorization: Bearer $TOKEN" -s "$HERE/random_incident.lua" "http://127.0.0.1:$PORT")
echo "$H"; echo "$I"
awk -v h="$(awk '{print $(NF-4)}' <<< "$H")" -v i="$(awk '{print $(NF-4)}' <<< "$I")" \
  'BEGIN { printf "incident / healthz = %.2f (by CPU per request)\n", i / h }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
