#!/usr/bin/env bash
# The callback benchmark (as bench/callback: every request a real Porto approval, end to end)
# on the demo data and on a large database (build-callback.sh), then on the large one again
# while `proposal-callback prune --older-than $PRUNE_OLDER_THAN` deletes old receipts.
# Prints callbacks/s and p99 of each run, the ratio large/demo and the p99 with prune against
# without. Run by hand (not a test); see bench/scale/README.md:
#
#   bench/scale/run-callback.sh          # against scale_callback_5000000 (built if missing)
#
# Environment: PGURL, TARGET_DIR, BIN (see lib.sh), RECEIPTS (5000000: picks the database
# scale_callback_<RECEIPTS>; SCALE_DB overrides), DURATION (s, 10), CONNECTIONS (16),
# PER_THREAD (20000 proposals per wrk thread and run), PRUNE_OLDER_THAN (365d), PRUNE_DURATION
# (s of the run with prune, DURATION), PORT (18195).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/scale/lib.sh
. bench/scale/lib.sh
RECEIPTS=${RECEIPTS:-5000000}
SCALE_DB=${SCALE_DB:-scale_callback_$RECEIPTS}
DEMO_DB=scale_callback_demo
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-16}
PER_THREAD=${PER_THREAD:-20000}
PRUNE_OLDER_THAN=${PRUNE_OLDER_THAN:-365d}
PRUNE_DURATION=${PRUNE_DURATION:-$DURATION}
PORT=${PORT:-18195}
WORK=$(mktemp -d)
export JWT_SECRET=bench-secret-bench-secret-bench-secret-00 RUST_LOG=warn LOG_FORMAT=json
export DATABASE_POOL_SIZE=$CONNECTIONS PER_THREAD

if [ -z "${BIN:-}" ]; then
  build_release
  BIN=$TARGET_DIR/release/proposal-callback
fi
if ! db_exists "$SCALE_DB"; then
  log "$SCALE_DB missing: building it"
  DB=$SCALE_DB BIN=$BIN RECEIPTS=$RECEIPTS "$HERE/build-callback.sh"
fi
SCALE_SEED=${TMPDIR:-/tmp}/$SCALE_DB.seed.json
[ -f "$SCALE_SEED" ] || { echo "no $SCALE_SEED: rebuild $SCALE_DB with build-callback.sh" >&2; exit 1; }
log "demo database $DEMO_DB"
recreate_db "$DEMO_DB"
DATABASE_URL=$PGURL/$DEMO_DB "$BIN" migrate > /dev/null
DATABASE_URL=$PGURL/$DEMO_DB "$BIN" seed > "$WORK/demo.seed.json"

# Fresh under_analysis proposals <PREFIX>-<n> for three runs of two wrk threads. The prefix
# is new on every invocation: a run again on the same large database never meets the
# proposals (and event ids) an earlier run applied, which would answer `duplicate`. The
# proposals a run leaves unused stay (the service never deletes proposals, and
# applied_callbacks.proposal_id has no index for a DELETE to check against).
export PREFIX=B$(date +%s)
NPROP=$((3 * 2 * PER_THREAD))
for db in "$DEMO_DB" "$SCALE_DB"; do
  psql -X -q "$PGURL/$db" <<SQL
SET search_path TO proposal;
INSERT INTO proposals (tenant_id, proposal_id, status, contact_email)
  SELECT 'demo-a', '$PREFIX-' || n, 'under_analysis', 'locatario' || n || '@example.com'
  FROM generate_series(1, $NPROP) AS n;
VACUUM ANALYZE proposals;
SQL
done

SERVER=
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2> /dev/null || true; fi
  if [ -n "${PRUNE:-}" ]; then kill "$PRUNE" 2> /dev/null || true; fi
  wait 2> /dev/null || true
  cancel_prune "$SCALE_DB"
  rm -rf "$WORK"
  drop_db "$DEMO_DB"
}
# A DELETE whose client went away runs on in the server: cancel it.
cancel_prune() {
  psql -X -At "$PGURL/postgres" -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
    WHERE datname = '$1' AND query LIKE 'DELETE FROM%callback_receipts%'" > /dev/null
}
trap cleanup EXIT

run() { # name db seed-json offset [seconds] -> "rps p99ms applied"
  local name=$1 db=$2 seed=$3 offset=$4 secs=${5:-$DURATION} basic token
  DATABASE_URL=$PGURL/$db BIND=127.0.0.1:$PORT "$BIN" serve > "$WORK/$name.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.2; done
  basic=$(jq -r '.integrations[] | select(.tenant=="demo-a" and .insurer=="porto") | .token' "$seed")
  token=$(curl -sf -X POST -H "Authorization: Basic $basic" "http://127.0.0.1:$PORT/callback/auth" | jq -r .access_token)
  TOKEN=$token OFFSET=$offset wrk -t2 -c"$CONNECTIONS" -d"${secs}s" --latency \
    -s bench/callback/callback.lua "http://127.0.0.1:$PORT/callback/demo-a/porto" > "$WORK/$name.wrk"
  kill "$SERVER"; wait "$SERVER" 2> /dev/null || true; SERVER=
  local rps p99 non2xx
  rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$WORK/$name.wrk")
  p99=$(awk '$1 == "99%" {print $2}' "$WORK/$name.wrk")
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$WORK/$name.wrk")
  echo "$rps $p99 ${non2xx:-0}"
}

RECEIPTS_NOW=$(psql -X -At -c "SELECT count(*) FROM proposal.callback_receipts" "$PGURL/$SCALE_DB")
log "callbacks on the demo data"
read -r d_rps d_p99 d_err <<< "$(run demo "$DEMO_DB" "$WORK/demo.seed.json" 0)"
log "callbacks with $RECEIPTS_NOW receipts"
read -r s_rps s_p99 s_err <<< "$(run scale "$SCALE_DB" "$SCALE_SEED" $((2 * PER_THREAD)))"
log "callbacks while prune --older-than $PRUNE_OLDER_THAN runs"
count_receipts() { psql -X -At -c "SELECT count(*) FROM proposal.callback_receipts" "$PGURL/$SCALE_DB"; }
BEFORE_PRUNE=$(count_receipts)
started=$SECONDS
(DATABASE_URL=$PGURL/$SCALE_DB "$BIN" prune --older-than "$PRUNE_OLDER_THAN" > "$WORK/prune.out" 2>&1
 echo "$((SECONDS - started))" > "$WORK/prune.secs") &
PRUNE=$!
sleep 1
read -r p_rps p_p99 p_err <<< "$(run prune "$SCALE_DB" "$SCALE_SEED" $((4 * PER_THREAD)) "$PRUNE_DURATION")"
if [ -f "$WORK/prune.secs" ]; then
  PRUNE_RESULT="prune finished in $(cat "$WORK/prune.secs") s: $(cat "$WORK/prune.out")"
else
  PRUNE_RESULT="prune still running after the ${PRUNE_DURATION} s run: stopped (its committed batches stay deleted)"
  kill "$PRUNE" 2> /dev/null || true
  cancel_prune "$SCALE_DB"
fi
wait "$PRUNE" 2> /dev/null || true
PRUNE=
# The callbacks of the run added receipts too: count what prune removed by the old ones left.
DELETED=$((BEFORE_PRUNE + $(awk '/requests in/ {print $1}' "$WORK/prune.wrk") - $(count_receipts)))

echo
echo "$(date -u +'%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$CONNECTIONS connections, $DURATION s per run ($PRUNE_DURATION s with prune); $PRUNE_RESULT"
echo "prune deleted about $DELETED receipts during its run (of $BEFORE_PRUNE)"
printf '| %-44s | %11s | %9s | %6s |\n' run "callbacks/s" p99 non2xx
printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "------------:" "----------:" "-------:"
printf '| %-44s | %11s | %9s | %6s |\n' "demo data" "$d_rps" "$d_p99" "$d_err"
printf '| %-44s | %11s | %9s | %6s |\n' "$RECEIPTS_NOW receipts" "$s_rps" "$s_p99" "$s_err"
printf '| %-44s | %11s | %9s | %6s |\n' "same, prune --older-than $PRUNE_OLDER_THAN running" "$p_rps" "$p_p99" "$p_err"
awk -v s="$s_rps" -v d="$d_rps" 'BEGIN { printf "throughput large/demo: %.2f\n", s / d }'
echo "p99 with prune / without: $p_p99 / $s_p99"
