# pgbench running GET /incident/{id}'s SQL as the service does (incident_detail.sql, prepared
# like diesel's), with the access log's append of BATCH entries once per BATCH reads
# (access_log_append.sql): the database's side of the route, for run.sh and statements.sh.
# Sourced. route_sql_pgbench CLIENTS SECONDS BATCH [pgbench's own arguments...] against
# DATABASE_URL; with PIN set, pgbench runs on those CPUs (taskset -c PIN).
ROUTE_SQL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
route_sql_pgbench() {
  local clients=$1 seconds=$2 batch=$3
  shift 3
  local pin=()
  [ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
  PGOPTIONS="-c search_path=dispatch,public" "${pin[@]}" pgbench -n -M prepared -c "$clients" -j 2 \
    -T "$seconds" -D batch="$batch" -f "$ROUTE_SQL_DIR/incident_detail.sql@$batch" \
    -f "$ROUTE_SQL_DIR/access_log_append.sql@1" "$@" "$DATABASE_URL"
}
