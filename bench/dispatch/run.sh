#!/usr/bin/env bash
# Benchmark of dispatch-api, run by hand (not a test). From the workspace root:
#   bench/dispatch/run.sh
# Builds the release binary with the `bench` feature, loads the demo data into a database of
# its own, then measures with wrk (HTTP) and pgbench (SQL):
#   1. GET /health-unit?q=sao jose        vs GET /bench/constant (same bytes: framework ceiling)
#   2. GET /incident/{id} (random ids)    vs pgbench running that route's SQL (database ceiling)
# Environment: PGURL (server, default postgres://postgres@127.0.0.1:5432), DURATION (s, 15),
# CONNECTIONS (32), PORT (18090), TARGET_DIR (target-dispatch); BIN=path runs that binary
# (built with `--features bench`) instead of building one, to compare two builds in one sitting.
set -euo pipefail
cd "$(dirname "$0")/../.."
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=dispatch_bench
DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18090}
TARGET_DIR=${TARGET_DIR:-target-dispatch}
HERE=bench/dispatch
WORK=$(mktemp -d)
export DATABASE_URL=$PGURL/$DB JWT_SECRET=bench-secret-bench-secret-bench-secret-0 BIND=127.0.0.1:$PORT
export RUST_LOG=warn LOG_FORMAT=json DATABASE_POOL_SIZE=${DATABASE_POOL_SIZE:-16}

if [ -z "${BIN:-}" ]; then
  BIN=$TARGET_DIR/release/dispatch-api
  CARGO_TARGET_DIR=$TARGET_DIR cargo build --release -q -p dispatch-api --features bench
fi
psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
"$BIN" seed > /dev/null
psql -X -q "$DATABASE_URL" -c "VACUUM ANALYZE"
TOKEN=$("$BIN" token --login regulador --ttl 1h)

SERVER=
start() {
  BENCH_CONSTANT_FILE=$WORK/constant.json "$BIN" serve > "$WORK/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null && return; sleep 0.1; done
  echo "server did not start"; cat "$WORK/server.log"; exit 1
}
stop() { [ -n "$SERVER" ] && kill "$SERVER" && wait "$SERVER" 2> /dev/null || true; SERVER=; }
trap 'stop; rm -rf "$WORK"' EXIT

# The constant route answers the bytes of a real search response, so both move the same size.
echo '[]' > "$WORK/constant.json"
start
curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/health-unit?q=sao%20jose" > "$WORK/search.json"
cp "$WORK/search.json" "$WORK/constant.json"
stop
start

# The server's CPU time so far (user + system, clock ticks): what a request costs it, less
# sensitive to whatever else shares the cores than req/s (but not to their contention).
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }
TICK=$(getconf CLK_TCK)
wrk_run() { # name, then wrk arguments; prints "name rps p99 server-CPU-µs-per-request"
  local name=$1; shift
  wrk -t2 -c"$CONNECTIONS" -d3s "$@" > /dev/null  # warm-up
  local before after
  before=$(server_ticks)
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" > "$WORK/$name.txt"
  after=$(server_ticks)
  local rps p99 cpu
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/$name.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/$name.txt")
  cpu=$(awk -v t=$((after - before)) -v hz="$TICK" '/requests in/ {printf "%.1f", t / hz * 1e6 / $1}' "$WORK/$name.txt")
  echo "$name $rps $p99 $cpu"
}
AUTH=(-H "Authorization: Bearer $TOKEN")
R1=$(wrk_run constant "${AUTH[@]}" "http://127.0.0.1:$PORT/bench/constant")
R2=$(wrk_run health_unit "${AUTH[@]}" "http://127.0.0.1:$PORT/health-unit?q=sao%20jose")
R3=$(wrk_run incident "${AUTH[@]}" -s "$HERE/random_incident.lua" "http://127.0.0.1:$PORT")
stop

# pgbench: same SQL, prepared like diesel's, as many clients as the server's pool.
PGOPTIONS="-c search_path=dispatch,public" pgbench -n -M prepared -c "$DATABASE_POOL_SIZE" -j 2 \
  -T 3 -f "$HERE/incident_detail.sql" "$DATABASE_URL" > /dev/null
(cd "$WORK" && PGOPTIONS="-c search_path=dispatch,public" pgbench -n -M prepared \
  -c "$DATABASE_POOL_SIZE" -j 2 -T "$DURATION" -l --log-prefix=pgb \
  -f "$OLDPWD/$HERE/incident_detail.sql" "$DATABASE_URL" > pgbench.txt)
TPS=$(awk '/^tps/ {print $3}' "$WORK/pgbench.txt")
P99=$(cat "$WORK"/pgb* | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "%.2fms", a[int(NR*0.99)]/1000}')

bytes_search=$(wc -c < "$WORK/search.json")
echo
echo "bytes per response: /health-unit?q=sao%20jose and /bench/constant: $bytes_search"
printf '%-34s %12s %10s %16s\n' "measure" "req/s" "p99" "server CPU/req"
read -r _ c_rps c_p99 c_cpu <<< "$R1"
printf '%-34s %12s %10s %13s us\n' "GET /bench/constant" "$c_rps" "$c_p99" "$c_cpu"
read -r _ h_rps h_p99 h_cpu <<< "$R2"
printf '%-34s %12s %10s %13s us\n' "GET /health-unit?q=sao jose" "$h_rps" "$h_p99" "$h_cpu"
read -r _ i_rps i_p99 i_cpu <<< "$R3"
printf '%-34s %12s %10s %13s us\n' "GET /incident/{id}" "$i_rps" "$i_p99" "$i_cpu"
printf '%-34s %12s %10s\n' "pgbench (that route's SQL)" "$TPS" "$P99"
awk -v h="$h_rps" -v c="$c_rps" -v i="$i_rps" -v t="$TPS" -v hc="$h_cpu" -v cc="$c_cpu" 'BEGIN {
  printf "health-unit / constant = %.0f%% of req/s, %.0f%% by server CPU per request (target >= 80%%)\n", 100 * h / c, 100 * cc / hc
  printf "incident / pgbench     = %.0f%% (target >= 60%%)\n", 100 * i / t }'
