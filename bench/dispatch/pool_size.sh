#!/usr/bin/env bash
# Pool size benchmark of dispatch-api, run by hand (not a test). From the workspace root:
#   bench/dispatch/pool_size.sh
# GET /incident/{id} (random ids of the 3,000 demo incidents) at 32 connections against the
# release build, once with the old default pool (16) and once with the new one (2 x cores + 1,
# `common::db::pool_size`), DATABASE_POOL_SIZE set explicitly for each side; ROUNDS pairs,
# alternately (old, new, old, new...), in one run on a database of its own (dispatch_poolsize).
# Prints each side's req/s and p99, each pair's p99 ratio (new / old) and the ratio of the
# median p99s.
# Environment: PGURL (server, default postgres://postgres@127.0.0.1:5432), DURATION (s, 15),
# CONNECTIONS (32), ROUNDS (3), OLD (16), NEW (2 x nproc + 1), PORT (18091), TARGET_DIR
# (target-dispatch); BIN=path runs that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/../.."
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=dispatch_poolsize
DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-3}
OLD=${OLD:-16}
NEW=${NEW:-$((2 * $(nproc) + 1))}
PORT=${PORT:-18091}
TARGET_DIR=${TARGET_DIR:-target-dispatch}
HERE=bench/dispatch
WORK=$(mktemp -d)
export DATABASE_URL=$PGURL/$DB JWT_SECRET=bench-secret-bench-secret-bench-secret-0 BIND=127.0.0.1:$PORT
export RUST_LOG=info LOG_FORMAT=json

if [ -z "${BIN:-}" ]; then
  BIN=$TARGET_DIR/release/dispatch-api
  CARGO_TARGET_DIR=$TARGET_DIR cargo build --release -q -p dispatch-api
fi
psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
"$BIN" seed > /dev/null
psql -X -q "$DATABASE_URL" -c "VACUUM ANALYZE"
TOKEN=$("$BIN" token --login regulador --ttl 1h)

SERVER=
start() { # pool size
  DATABASE_POOL_SIZE=$1 "$BIN" serve > "$WORK/server-$1.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null || { echo "server did not start"; cat "$WORK/server-$1.log"; exit 1; }
  # The size the server chose, from its start-up line: the variable must have been taken.
  local chosen
  chosen=$(jq -rR 'fromjson? | select(.pool_size != null) | .pool_size' "$WORK/server-$1.log" | head -1)
  [ "$chosen" = "$1" ] || { echo "asked for a pool of $1, the server logged ${chosen:-nothing}"; exit 1; }
}
stop() { [ -n "$SERVER" ] && kill "$SERVER" && wait "$SERVER" 2> /dev/null || true; SERVER=; }
trap 'stop; rm -rf "$WORK"' EXIT

ms() { # a wrk latency (850.00us, 9.20ms, 1.02s) in ms
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) printf "%.3f", v / 1000; else if (v ~ /ms$/) printf "%.3f", v + 0;
    else if (v ~ /s$/) printf "%.3f", v * 1000; else printf "%.3f", v / 1000 }'
}
run() { # pool size, round; prints "rps p99-ms"
  start "$1"
  local args=(-t2 -c"$CONNECTIONS" -H "Authorization: Bearer $TOKEN" -s "$HERE/random_incident.lua" "http://127.0.0.1:$PORT")
  wrk -d3s "${args[@]}" > /dev/null  # warm-up: the pool fills, the caches warm
  wrk -d"${DURATION}s" --latency "${args[@]}" > "$WORK/wrk-$1-$2.txt"
  stop
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-$1-$2.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/wrk-$1-$2.txt")
  echo "$rps $(ms "$p99")"
}

echo "GET /incident/{id}, $CONNECTIONS connections, ${DURATION}s per side; pool $OLD (old default) vs $NEW (2 x $(nproc) cores + 1)"
printf '%-6s %-12s %12s %12s\n' round pool req/s "p99 (ms)"
OLD_P99=() NEW_P99=() PAIRS=()
for round in $(seq "$ROUNDS"); do
  read -r o_rps o_p99 <<< "$(run "$OLD" "$round")"
  read -r n_rps n_p99 <<< "$(run "$NEW" "$round")"
  printf '%-6s %-12s %12s %12s\n' "$round" "$OLD (old)" "$o_rps" "$o_p99" "$round" "$NEW (new)" "$n_rps" "$n_p99"
  OLD_P99+=("$o_p99") NEW_P99+=("$n_p99")
  PAIRS+=("$(awk -v n="$n_p99" -v o="$o_p99" 'BEGIN {printf "%.2f", n / o}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
o=$(median "${OLD_P99[@]}") n=$(median "${NEW_P99[@]}")
echo
echo "p99 new / old, pair by pair: ${PAIRS[*]}"
awk -v o="$o" -v n="$n" -v old="$OLD" -v new="$NEW" 'BEGIN {
  printf "median p99: pool %d %.2f ms, pool %d %.2f ms; new / old = %.2f\n", old, o, new, n, n / o }'
