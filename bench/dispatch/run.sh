#!/usr/bin/env bash
# Benchmark of dispatch-api, run by hand (not a test). From the workspace root:
#   bench/dispatch/run.sh
# Builds the release binary with the `bench` feature, loads the demo data into a database of
# its own, then measures with wrk (HTTP) and pgbench (SQL):
#   1. GET /health-unit?q=sao jose        vs GET /bench/constant (same bytes: framework ceiling)
#   2. GET /incident/{id} (random ids)    vs pgbench running that route's SQL (database ceiling)
# For the incident route and pgbench it also prints the CPU per request on each side
# (bench/lib/cpu.sh): PostgreSQL's, the server's, the load generator's and the rest of the
# machine's. On two cores shared by all of them, the ratio cannot pass what that allows.
# Environment: PGURL (server, default postgres://postgres@127.0.0.1:5432), DURATION (s, 15),
# CONNECTIONS (32), PORT (18090), TARGET_DIR (target-dispatch), LOG_BATCH (500); BIN=path runs
# that binary (built with `--features bench`) instead of building one, to compare two builds in
# one sitting. PROFILE_DIR=dir samples PROFILE_CPUS (0,1) with perf during each measured run
# (not the warm-ups) and keeps where the time went in dir/NAME.profile.txt (bench/lib/profile.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/lib/cpu.sh
source bench/lib/profile.sh
source bench/dispatch/route_sql.sh
PROFILE_CPUS=${PROFILE_CPUS:-0,1}
TIMEFORMAT='%U %S'
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
server_ticks() { pid_ticks "$SERVER"; }
wrk_run() { # name, then wrk arguments; prints "name rps p99 server-CPU-µs-per-request"
  local name=$1; shift
  wrk -t2 -c"$CONNECTIONS" -d3s "$@" > /dev/null  # warm-up
  local before after b0 b1 p0 p1
  [ -n "${PROFILE_DIR:-}" ] && profile_start "$PROFILE_CPUS"
  before=$(server_ticks) b0=$(busy) p0=$(pg_ticks)
  { time wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" > "$WORK/$name.txt"; } 2> "$WORK/$name.time"
  after=$(server_ticks) b1=$(busy) p1=$(pg_ticks)
  [ -n "${PROFILE_DIR:-}" ] && PROFILE_LABEL="wrk $name" profile_stop "$PROFILE_DIR/$name.profile.txt"
  # PostgreSQL, wrk and the rest, in ticks and wrk's "user system" seconds.
  local self; self=$(tail -n1 "$WORK/$name.time")
  echo "$((p1 - p0)) $self $(rest_ticks $((b1 - b0)) $((p1 - p0)) $((after - before)) "$self")" > "$WORK/$name.cpu"
  local rps p99 cpu
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/$name.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/$name.txt")
  cpu=$(awk -v t=$((after - before)) -v hz="$CPU_HZ" '/requests in/ {printf "%.1f", t / hz * 1e6 / $1}' "$WORK/$name.txt")
  echo "$name $rps $p99 $cpu"
}
AUTH=(-H "Authorization: Bearer $TOKEN")
R1=$(wrk_run constant "${AUTH[@]}" "http://127.0.0.1:$PORT/bench/constant")
R2=$(wrk_run health_unit "${AUTH[@]}" "http://127.0.0.1:$PORT/health-unit?q=sao%20jose")
R3=$(wrk_run incident "${AUTH[@]}" -s "$HERE/random_incident.lua" "http://127.0.0.1:$PORT")
stop

# pgbench: same SQL, prepared like diesel's, as many clients as the server's pool, and the
# access log's append of LOG_BATCH entries once per LOG_BATCH reads (route_sql.sh).
LOG_BATCH=${LOG_BATCH:-500}
route_sql_pgbench "$DATABASE_POOL_SIZE" 3 "$LOG_BATCH" > /dev/null
[ -n "${PROFILE_DIR:-}" ] && profile_start "$PROFILE_CPUS"
B0=$(busy) P0=$(pg_ticks)
{ time (cd "$WORK" && route_sql_pgbench "$DATABASE_POOL_SIZE" "$DURATION" "$LOG_BATCH" \
  -l --log-prefix=pgb > pgbench.txt); } 2> "$WORK/pgbench.time"
B1=$(busy) P1=$(pg_ticks)
[ -n "${PROFILE_DIR:-}" ] && PROFILE_LABEL="pgbench, the route's SQL" profile_stop "$PROFILE_DIR/pgbench.profile.txt"
# The detail reads' own rate and count (script 1; script 2 is the access log's append).
TPS=$(awk '/^SQL script 1:/ {f = 1} f && /tps = / {sub(/.*tps = /, ""); sub(/\).*/, ""); print; exit}' "$WORK/pgbench.txt")
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
printf '%-34s %12s %10s\n' "pgbench (route's SQL + log share)" "$TPS" "$P99"
# CPU per request (µs) of the incident route's run and of pgbench's.
I_N=$(awk '/requests in/ {print $1}' "$WORK/incident.txt")
read -r i_pg i_wu i_ws i_rest < "$WORK/incident.cpu"
PGB_N=$(awk '/^SQL script 1:/ {f = 1} f && / transactions \(/ {print $2; exit}' "$WORK/pgbench.txt")
PGB_SELF=$(tail -n1 "$WORK/pgbench.time")
PGB_REST=$(rest_ticks $((B1 - B0)) $((P1 - P0)) 0 "$PGB_SELF")
echo "CPU per request (us): GET /incident/{id}: PostgreSQL $(us_per "$i_pg" "$I_N"), server $i_cpu," \
  "wrk $(us_per_s "$i_wu $i_ws" "$I_N"), rest $(us_per "$i_rest" "$I_N");" \
  "pgbench: PostgreSQL $(us_per $((P1 - P0)) "$PGB_N"), pgbench $(us_per_s "$PGB_SELF" "$PGB_N"), rest $(us_per "$PGB_REST" "$PGB_N")"
awk -v h="$h_rps" -v c="$c_rps" -v i="$i_rps" -v t="$TPS" -v hc="$h_cpu" -v cc="$c_cpu" 'BEGIN {
  printf "health-unit / constant = %.0f%% of req/s, %.0f%% by server CPU per request (target >= 80%%)\n", 100 * h / c, 100 * cc / hc
  printf "incident / pgbench     = %.0f%% (target >= 60%%)\n", 100 * i / t }'
