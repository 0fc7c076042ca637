#!/usr/bin/env bash
# Builds a proposal-callback database as 18 months of callbacks: `proposal-callback migrate`
# and `seed`, then set-based SQL (callback-grow.sql), VACUUM ANALYZE and the invariant checks
# (check-callback.sql). Run by hand (not a test); see bench/scale/README.md:
#
#   bench/scale/build-callback.sh                       # 1,000,000 proposals, 5,000,000 receipts
#   PROPOSALS=20000 RECEIPTS=100000 bench/scale/build-callback.sh
#
# Environment: PGURL, TARGET_DIR (see lib.sh), BIN (a proposal-callback binary to use instead
# of building one), TENANTS (50), PROPOSALS (1000000), RECEIPTS (5000000), DB (database,
# scale_callback_<RECEIPTS>), ANCHOR (the moment the data ends, default now).
# Prints the seed's JSON (tokens of the demo integrations) into $DB.seed.json in the temporary
# directory; run-callback.sh reads it from there.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/scale/lib.sh
. bench/scale/lib.sh
TENANTS=${TENANTS:-50}
PROPOSALS=${PROPOSALS:-1000000}
RECEIPTS=${RECEIPTS:-5000000}
DB=${DB:-scale_callback_$RECEIPTS}
ANCHOR=${ANCHOR:-$(date -u +'%Y-%m-%d %H:%M:%S+00')}
SEED_JSON=${TMPDIR:-/tmp}/$DB.seed.json

if [ -z "${BIN:-}" ]; then
  build_release
  BIN=$TARGET_DIR/release/proposal-callback
fi
export DATABASE_URL=$PGURL/$DB

log "database $DB: migrate, seed"
recreate_db "$DB"
"$BIN" migrate > /dev/null
"$BIN" seed > "$SEED_JSON"
log "grow to $TENANTS tenants, $PROPOSALS proposals, $RECEIPTS receipts up to $ANCHOR"
psql -X -q -v tenants="$TENANTS" -v proposals="$PROPOSALS" -v receipts="$RECEIPTS" \
  -v anchor="$ANCHOR" -f "$HERE/callback-grow.sql" "$DATABASE_URL" \
  | grep -E '^Time' | awk '{s += $2} END {printf "  %d statements, %.0f s in SQL\n", NR, s / 1000}' >&2
log "VACUUM ANALYZE"
psql -X -q -c "SET maintenance_work_mem = '1GB'" -c "VACUUM (ANALYZE)" "$DATABASE_URL"
log "invariants (check-callback.sql)"
violations=$(psql -X -At -F ' | ' -f "$HERE/check-callback.sql" "$DATABASE_URL" | grep -v '^SET$' || true)
if [ -n "$violations" ]; then
  echo "invariants violated:" >&2
  echo "$violations" >&2
  exit 1
fi
log "done: $DB (seed output in $SEED_JSON)"
psql -X -q "$DATABASE_URL" <<'SQL'
SET search_path TO proposal, public;
SELECT relname AS "table", n_live_tup AS "rows",
       pg_size_pretty(pg_total_relation_size(relid)) AS "size with indexes"
  FROM pg_stat_user_tables
 WHERE schemaname = 'proposal' ORDER BY n_live_tup DESC;
SELECT status, count(*) FROM callback_receipts GROUP BY 1 ORDER BY 2 DESC;
SELECT status, count(*) FROM proposals GROUP BY 1 ORDER BY 2 DESC;
SQL
echo "database size: $(psql -X -At -c "SELECT pg_size_pretty(pg_database_size(current_database()))" "$DATABASE_URL")"
