#!/usr/bin/env bash
# Callbacks/s and p99 of proposal-callback end to end (wrk -> HTTP -> PostgreSQL), against
# pgbench running the same database work directly (the ceiling). Run by hand, not in CI:
#
#   bench/callback/run.sh            # DURATION=20s CONNECTIONS=16 by default
#
#   BIN=/tmp/other-build bench/callback/run.sh   # a given binary, no build
#
# Needs: PostgreSQL at $PGURL (default the local server), wrk, pgbench, jq, and a release
# build (built here with thin LTO off to keep the build short on small machines).
#
# Also prints where the CPU went per transaction on each side (bench/lib/cpu.sh): PostgreSQL's
# (every postgres process), the load generator's (pgbench, wrk), the service's, and the rest
# of the machine's busy time (mostly the kernel's loopback networking). On cores shared by
# all of them, the ratio cannot pass what that budget allows. On a machine whose PostgreSQL
# other people use, run a private server and count only its processes:
#
#   PGURL=postgres://postgres@127.0.0.1:18710 PG_POSTMASTER=$(head -1 $PGDATA/postmaster.pid) \
#     BENCH_DB=callback-cost_bench BENCH_BIND=127.0.0.1:18712 bench/callback/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/lib/cpu.sh
TIMEFORMAT='%U %S'

PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=${BENCH_DB:-pcb_bench}
DURATION=${DURATION:-20s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
PER_THREAD=${PER_THREAD:-100000}
BIND=${BENCH_BIND:-127.0.0.1:18081}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target-callback}
OUT=$(mktemp -d /tmp/pcb-bench.XXXXXX)

# BIN=path runs that binary instead of building one (to compare two builds in one sitting:
# each run measures its own pgbench ceiling next to it).
if [ -z "${BIN:-}" ]; then
  BIN=$CARGO_TARGET_DIR/release/proposal-callback
  CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo build --release -q -p proposal-callback
fi

psql "$PGURL/postgres" -qc "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" -c "CREATE DATABASE \"$DB\""
export DATABASE_URL="$PGURL/$DB"
"$BIN" migrate >/dev/null
"$BIN" seed >"$OUT/seed.json"
BASIC=$(jq -r '.integrations[] | select(.tenant=="demo-a" and .insurer=="porto") | .token' "$OUT/seed.json")
NPROP=$((THREADS * PER_THREAD))
# B-* for the service, G-* for pgbench: the same number of under_analysis proposals each.
psql "$DATABASE_URL" -q <<SQL
SET search_path TO proposal;
INSERT INTO proposals (tenant_id, proposal_id, status, contact_email)
  SELECT 'demo-a', p || '-' || n, 'under_analysis', 'locatario' || n || '@example.com'
  FROM generate_series(1, $NPROP) AS n, unnest(ARRAY['B', 'G']) AS p;
VACUUM ANALYZE;
SQL

echo "== pgbench: the same database work, $CONNECTIONS clients, $DURATION"
psql "$DATABASE_URL" -qc "ALTER DATABASE \"$DB\" SET search_path TO proposal"
PGB_SECS=${DURATION%s}
B0=$(busy) P0=$(pg_ticks)
{ time (cd "$OUT" && pgbench -n -M prepared -c "$CONNECTIONS" -j "$THREADS" -T "$PGB_SECS" \
  -D nprop="$NPROP" -f "$OLDPWD/bench/callback/equivalent.sql" -l --log-prefix=pgb \
  "$DATABASE_URL" >"$OUT/pgbench.txt"); } 2>"$OUT/pgbench.time"
# pgbench's backends are counted through the postmaster once it has reaped them: wait for
# them to be gone, or their last ticks would be missed (a run once read 446 µs for ~1,000).
until [ "$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'")" = 0 ]; do
  sleep 0.1
done
sleep 0.5
B1=$(busy) P1=$(pg_ticks)
PGB_TPS=$(awk '/^tps/ {print int($3)}' "$OUT/pgbench.txt")
PGB_P99=$(cat "$OUT"/pgb.* | awk '{print $3/1000}' | sort -n | awk '{a[NR]=$1} END {print a[int(NR*0.99)]}')
grep -E "^(tps|latency)" "$OUT/pgbench.txt"
echo "pgbench p99: ${PGB_P99} ms"

echo "== proposal-callback: wrk, $CONNECTIONS connections, $DURATION"
JWT_SECRET=bench-secret-bench-secret-bench-secret-00 BIND=$BIND LOG_FORMAT=json RUST_LOG=warn \
  DATABASE_POOL_SIZE=$CONNECTIONS "$BIN" serve >"$OUT/serve.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf "http://$BIND/readyz" >/dev/null && break; sleep 0.2; done
TOKEN=$(curl -sf -X POST -H "Authorization: Basic $BASIC" "http://$BIND/callback/auth" | jq -r .access_token)
B2=$(busy) P2=$(pg_ticks) S2=$(pid_ticks $SERVER)
{ time (TOKEN=$TOKEN PER_THREAD=$PER_THREAD wrk -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" --latency \
  -s bench/callback/callback.lua "http://$BIND/callback/demo-a/porto" >"$OUT/wrk.txt"); } 2>"$OUT/wrk.time"
B3=$(busy) P3=$(pg_ticks) S3=$(pid_ticks $SERVER)
cat "$OUT/wrk.txt"
kill $SERVER; wait $SERVER 2>/dev/null || true
trap - EXIT

SVC_RPS=$(awk '/^Requests\/sec/ {print int($2)}' "$OUT/wrk.txt")
SVC_P99=$(awk '$1=="99%" {print $2}' "$OUT/wrk.txt")
APPLIED=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM proposals WHERE proposal_id LIKE 'B-%' AND status = 'approved'")
SENT=$(awk '/requests in/ {print $1}' "$OUT/wrk.txt")
NON2XX=$(awk '/Non-2xx/ {print $5}' "$OUT/wrk.txt")
echo
echo "== summary ($(nproc) cores, $CONNECTIONS connections, $DURATION)"
echo "pgbench ceiling:   ${PGB_TPS} tx/s, p99 ${PGB_P99} ms"
echo "proposal-callback: ${SVC_RPS} callbacks/s, p99 ${SVC_P99}; ${SENT} sent, ${APPLIED} applied, ${NON2XX:-0} non-2xx"
PGB_TX=$(awk '/^number of transactions actually processed/ {print $NF}' "$OUT/pgbench.txt")
PGB_TX=${PGB_TX#*/}
PGB_SELF=$(tail -n1 "$OUT/pgbench.time") WRK_SELF=$(tail -n1 "$OUT/wrk.time")
echo "CPU per transaction (µs): pgbench: PostgreSQL $(us_per $((P1 - P0)) "$PGB_TX"), pgbench $(us_per_s "$PGB_SELF" "$PGB_TX")," \
  "rest $(us_per "$(rest_ticks $((B1 - B0)) $((P1 - P0)) 0 "$PGB_SELF")" "$PGB_TX");" \
  "service: PostgreSQL $(us_per $((P3 - P2)) "$SENT"), service $(us_per $((S3 - S2)) "$SENT")," \
  "wrk $(us_per_s "$WRK_SELF" "$SENT"), rest $(us_per "$(rest_ticks $((B3 - B2)) $((P3 - P2)) $((S3 - S2)) "$WRK_SELF")" "$SENT")"
echo "ratio:             $(awk -v a="$SVC_RPS" -v b="$PGB_TPS" 'BEGIN {printf "%.0f%%", 100*a/b}') of the ceiling"
echo "raw output in $OUT"
