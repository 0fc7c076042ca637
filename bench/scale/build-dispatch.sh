#!/usr/bin/env bash
# Builds a dispatch-api database of N incidents (default 2,000,000) as a large centre holds
# after 18 months: `dispatch-api migrate` and `seed` (the demo data), then set-based SQL
# (dispatch-grow.sql), VACUUM ANALYZE, and the invariant checks (check-dispatch.sql).
# Run by hand from anywhere (not a test); see bench/scale/README.md:
#
#   bench/scale/build-dispatch.sh            # 2,000,000 incidents into scale_dispatch_2000000
#   bench/scale/build-dispatch.sh 200000     # smaller
#
# Environment: PGURL, TARGET_DIR (see lib.sh), BIN (a dispatch-api binary to use instead of
# building one), DB (database, scale_dispatch_<N>), ANCHOR (the
# moment the data ends, default now: the open incidents are the last hours before it).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/scale/lib.sh
. bench/scale/lib.sh
N=${1:-2000000}
DB=${DB:-scale_dispatch_$N}
ANCHOR=${ANCHOR:-$(date -u +'%Y-%m-%d %H:%M:%S+00')}
[ "$N" -ge 6000 ] || { echo "N must be at least 6000 (the demo has 3,000 incidents)" >&2; exit 2; }

if [ -z "${BIN:-}" ]; then
  build_release
  BIN=$TARGET_DIR/release/dispatch-api
fi
export DATABASE_URL=$PGURL/$DB

log "database $DB: migrate, seed"
recreate_db "$DB"
"$BIN" migrate > /dev/null
"$BIN" seed > /dev/null
log "grow to $N incidents up to $ANCHOR"
psql -X -q -v n="$N" -v anchor="$ANCHOR" -f "$HERE/dispatch-grow.sql" "$DATABASE_URL" \
  | grep -E '^Time' | awk '{s += $2} END {printf "  %d statements, %.0f s in SQL\n", NR, s / 1000}' >&2
log "VACUUM ANALYZE"
psql -X -q -c "SET maintenance_work_mem = '1GB'" -c "VACUUM (ANALYZE)" "$DATABASE_URL"
log "invariants (check-dispatch.sql)"
violations=$(psql -X -At -F ' | ' -f "$HERE/check-dispatch.sql" "$DATABASE_URL" | grep -v '^SET$' || true)
if [ -n "$violations" ]; then
  echo "invariants violated:" >&2
  echo "$violations" >&2
  exit 1
fi
log "done: $DB"
psql -X -q "$DATABASE_URL" <<'SQL'
SET search_path TO dispatch, public;
SET TIME ZONE 'UTC';
SELECT relname AS "table", n_live_tup AS "rows",
       pg_size_pretty(pg_total_relation_size(relid)) AS "size with indexes"
  FROM pg_stat_user_tables
 WHERE relname IN ('incidents', 'incident_history', 'technical_decisions', 'dispatches',
                   'incident_intercurrences', 'prank_calls')
 ORDER BY n_live_tup DESC;
WITH days AS (
    SELECT created_at::date AS day, count(*) AS n FROM incidents GROUP BY 1),
inner_days AS (
    SELECT * FROM days WHERE day > (SELECT min(day) FROM days) AND day < (SELECT max(day) FROM days))
SELECT (SELECT min(created_at) FROM incidents) AS oldest,
       (SELECT max(created_at) FROM incidents) AS newest,
       min(n) AS "per day min", round(avg(n)) AS "avg", max(n) AS "max",
       (SELECT count(*) FROM incidents WHERE state NOT IN ('closed', 'cancelled', 'prank')) AS open,
       (SELECT max(created_at) - min(created_at) FROM incidents
         WHERE state NOT IN ('closed', 'cancelled', 'prank')) AS "open within"
  FROM inner_days;
SQL
echo "database size: $(psql -X -At -c "SELECT pg_size_pretty(pg_database_size(current_database()))" "$DATABASE_URL")"
