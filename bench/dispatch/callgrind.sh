#!/usr/bin/env bash
# Instructions per request of GET /health-unit?q=sao jose (or ROUTE) against GET /bench/constant
# (the same bytes through the same App and middleware), counted by valgrind's callgrind:
# repeatable whatever else the machine runs, unlike run.sh's req/s. From the workspace root:
#   bench/dispatch/callgrind.sh                 # builds, then N=200 requests of each route
#   BIN=/tmp/other-build bench/dispatch/callgrind.sh   # a given binary (built with `bench`)
#   ROUTE=/incident/2704 bench/dispatch/callgrind.sh   # another GET route (path and query)
# Then N GET /healthz on the same process (dump .3), the baseline issue 44 holds the incident
# detail to (route / healthz).
# Prints instructions per request of each route, constant / route and route / healthz: what the
# health-unit search reaches of the framework ceiling in user-space work (the kernel's share
# of a request, the same for both routes, is not counted, so req/s ratios come out higher).
# The dumps stay in $OUT (default a temporary directory, printed) for callgrind_annotate.
# Environment: PGURL (default postgres://postgres@127.0.0.1:5432), DB (dispatch_callgrind: the
# database it seeds), N (200), PORT (18091), ROUTE,
# TARGET_DIR (target-dispatch), OUT, CALLGRIND_ARGS (more valgrind options, such as
# --cache-sim=yes for L1 misses).
set -euo pipefail
cd "$(dirname "$0")/../.."
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=${DB:-dispatch_callgrind}
N=${N:-200}
PORT=${PORT:-18091}
TARGET_DIR=${TARGET_DIR:-target-dispatch}
OUT=${OUT:-$(mktemp -d /tmp/dispatch-callgrind.XXXXXX)}
mkdir -p "$OUT"
rm -f "$OUT"/callgrind.out.*
export DATABASE_URL=$PGURL/$DB JWT_SECRET=bench-secret-bench-secret-bench-secret-0 BIND=127.0.0.1:$PORT
export LOG_FORMAT=json DATABASE_POOL_SIZE=4
# Warnings only, and the user cache's line saying it serves (a request must not read its user
# from the database while counted).
export RUST_LOG=warn,dispatch_api::user_cache=info

if [ -z "${BIN:-}" ]; then
  BIN=$TARGET_DIR/release/dispatch-api
  # Line tables (and no stripping) so that callgrind_annotate names inlined functions and lines.
  CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_PROFILE_RELEASE_STRIP=none \
    CARGO_TARGET_DIR=$TARGET_DIR cargo build --release -q -p dispatch-api --features bench
fi

psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" -c "CREATE DATABASE \"$DB\""
"$BIN" seed > /dev/null
TOKEN=$("$BIN" token --login regulador --ttl 1h)
BASE=http://127.0.0.1:$PORT
ROUTE=${ROUTE:-/health-unit?q=sao%20jose}
SEARCH="$BASE$ROUTE"

SERVER=
wait_up() {
  for _ in $(seq 600); do curl -sf "$BASE/healthz" > /dev/null && return; sleep 0.2; done
  echo "server did not start"; cat "$OUT/server.log"; exit 1
}
stop() { [ -n "$SERVER" ] && kill "$SERVER" && wait "$SERVER" 2> /dev/null || true; SERVER=; }
trap stop EXIT

# The constant route answers the bytes of the search, as in run.sh.
echo '[]' > "$OUT/constant.json"
BENCH_CONSTANT_FILE=$OUT/constant.json "$BIN" serve > "$OUT/server.log" 2>&1 &
SERVER=$!
wait_up
curl -sf -H "Authorization: Bearer $TOKEN" "$SEARCH" > "$OUT/constant.json"
stop

# Instrumented from the first request on; counted from a zeroing after the warm-up.
BENCH_CONSTANT_FILE=$OUT/constant.json valgrind --tool=callgrind --instr-atstart=no ${CALLGRIND_ARGS:-} \
  --callgrind-out-file="$OUT/callgrind.out.%p" "$BIN" serve > "$OUT/server.log" 2>&1 &
SERVER=$!
wait_up
for _ in $(seq 100); do grep -q "caching authenticated users" "$OUT/server.log" && break; sleep 0.2; done
grep -q "caching authenticated users" "$OUT/server.log" || { echo "user cache not live"; exit 1; }
callgrind_control -i on "$SERVER" > /dev/null 2>&1

requests() { # url, count: one keep-alive connection
  local config=$OUT/curl.cfg
  : > "$config"
  for _ in $(seq "$2"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$1" >> "$config"; done
  curl -sf -H "Authorization: Bearer $TOKEN" --config "$config"
}
requests "$BASE/bench/constant" 20
requests "$SEARCH" 20
cmp <(curl -sf -H "Authorization: Bearer $TOKEN" "$SEARCH") "$OUT/constant.json"
# The listener reloads the reference data when it connects: wait until the server has used no
# CPU for a second, so that nothing but the requests is counted.
ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
for _ in $(seq 120); do
  before=$(ticks); sleep 1; [ "$(ticks)" = "$before" ] && break
done
callgrind_control -z "$SERVER" > /dev/null 2>&1
requests "$BASE/bench/constant" "$N"
callgrind_control -d constant "$SERVER" > /dev/null 2>&1
requests "$SEARCH" "$N"
callgrind_control -d route "$SERVER" > /dev/null 2>&1
requests "$BASE/healthz" "$N"
callgrind_control -d healthz "$SERVER" > /dev/null 2>&1
stop

# Each dump's total (the `summary:` line) over N.
total() { grep -lx "desc: Trigger: dump $1" "$OUT"/callgrind.out.* | head -1 | xargs awk '/^summary:/ {print $2; exit}'; }
C=$(total constant)
H=$(total route)
Z=$(total healthz)
awk -v c="$C" -v h="$H" -v z="$Z" -v n="$N" -v out="$OUT" -v route="$ROUTE" 'BEGIN {
  printf "instructions per request, %d requests each (dumps in %s):\n", n, out
  printf "  GET /bench/constant  %10.0f\n", c / n
  printf "  GET %-16s %10.0f\n", route, h / n
  printf "  GET /healthz         %10.0f\n", z / n
  printf "constant / route = %.2f\n", c / h
  printf "route / healthz = %.2f\n", h / z }'
