#!/usr/bin/env bash
# Where PostgreSQL's time goes per GET /incident/{id}, against pgbench running the route's SQL
# (bench/dispatch/README.md, "Issue 44, third sitting"), run by hand. From the workspace root:
#   BIN=<release build with --features bench> bench/dispatch/statements.sh
# A private PostgreSQL (bench/lib/pinned.sh) on PG_CORE (0) with pg_stat_statements; the
# demo data; then wrk (32 connections, 15 s) on the service, and pgbench (16 clients, the
# log's INSERT once per 500 reads, like run.sh), both on APP_CORE (1). Prints, for each side,
# PostgreSQL's CPU per read and each statement's calls and execution time per read: what is
# left over is outside the statements (protocol, commits, wake-ups).
# Environment: BIN (default target-dispatch/release/dispatch-api), PG_CORE, APP_CORE, PG_PORT
# (55433), PORT (18097).
set -uo pipefail
cd "$(dirname "$0")/../.."
PG_CORE=${PG_CORE:-0}
APP_CORE=${APP_CORE:-1}
source bench/lib/pinned.sh
source bench/lib/cpu.sh
source bench/dispatch/route_sql.sh
trap pinned_pg_stop EXIT
pinned_pg_start "$PG_CORE" "${PG_PORT:-55433}"
BIN=${BIN:-$PWD/target-dispatch/release/dispatch-api}
PORT=${PORT:-18097}
DB=pss
psql -X -q "$PGURL/postgres" -c "CREATE DATABASE $DB"
export DATABASE_URL=$PGURL/$DB JWT_SECRET=bench-secret-bench-secret-bench-secret-0 BIND=127.0.0.1:$PORT RUST_LOG=warn LOG_FORMAT=json DATABASE_POOL_SIZE=16
"$BIN" seed > /dev/null
psql -X -q "$DATABASE_URL" -c "VACUUM ANALYZE" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
TOKEN=$("$BIN" token --login regulador --ttl 1h)
# The benchmark database's statements by execution time: calls and µs per read of READS.
statements() { # reads, rows shown
  psql -X -P pager=off "$DATABASE_URL" -c "SELECT calls, round((calls::numeric / $1), 4) AS per_read, round(mean_exec_time::numeric * 1000, 1) AS mean_us, round((total_exec_time * 1000 / $1)::numeric, 1) AS us_per_read, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS query FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$DB') ORDER BY total_exec_time DESC LIMIT $2"
}
taskset -c "$APP_CORE" "$BIN" serve > /dev/null 2>&1 &
S=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.2; done
taskset -c "$APP_CORE" wrk -t2 -c32 -d3s -H "Authorization: Bearer $TOKEN" -s bench/dispatch/random_incident.lua http://127.0.0.1:$PORT > /dev/null
psql -X -q "$DATABASE_URL" -c "SELECT pg_stat_statements_reset()" > /dev/null
p0=$(pg_ticks)
taskset -c "$APP_CORE" wrk -t2 -c32 -d15s -H "Authorization: Bearer $TOKEN" -s bench/dispatch/random_incident.lua http://127.0.0.1:$PORT > "$PINNED_PG_DIR/wrk.txt"
p1=$(pg_ticks)
N=$(awk '/requests in/ {print $1}' "$PINNED_PG_DIR/wrk.txt")
echo "service: $N reads, PostgreSQL $(( (p1 - p0) * 1000000 / CPU_HZ / N )) us CPU per read"
statements "$N" 12
kill -TERM $S; wait $S 2>/dev/null
psql -X -q "$DATABASE_URL" -c "SELECT pg_stat_statements_reset()" > /dev/null
p0=$(pg_ticks)
(cd "$PINNED_PG_DIR" && PIN=$APP_CORE route_sql_pgbench 16 15 500 > "$PINNED_PG_DIR/pgbench.txt")
sleep 1
p1=$(pg_ticks)
T=$(awk '/^SQL script 1:/ {f = 1} f && / transactions \(/ {print $2; exit}' "$PINNED_PG_DIR/pgbench.txt")
echo "pgbench: $T reads, PostgreSQL $(( (p1 - p0) * 1000000 / CPU_HZ / T )) us CPU per read"
statements "$T" 8
