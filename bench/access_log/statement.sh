#!/usr/bin/env bash
# The access log's append, PostgreSQL's side alone (docs/dispatch-access-log.md), run by hand
# (not a test). From the workspace root:
#   bench/access_log/statement.sh
# pgbench appends batches of BATCH entries to a table shaped as dispatch.patient_access_log
# (its columns and its four B-trees; no service, no network but loopback) with one client,
# alternating ROUNDS times between the two statements the writer has sent:
#   values  a multi-row INSERT, its text growing with the batch, parsed and planned each time
#           (the baseline: what `store::access_log::append` sent before);
#   unnest  one INSERT ... SELECT * FROM unnest(arrays), prepared once and then only bound
#           and run (what it sends now).
# It prints, per round, batches per second and the CPU all of PostgreSQL's processes used per
# entry, then unnest / values for both.
# Environment: PGURL (default postgres://postgres@127.0.0.1:5432), DURATION (s, 15),
# ROUNDS (4), BATCH (50, about the writer's batches under load: bench/access_log/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/lib/cpu.sh
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=dispatch_bench_access_log_statement
DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-4}
BATCH=${BATCH:-50}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT

psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
# As migrations 2026-11-26-100001 and 2026-11-27-100002 leave it (no foreign keys).
psql -X -q "$PGURL/$DB" <<'SQL'
CREATE TABLE patient_access_log (
    id BIGSERIAL PRIMARY KEY,
    incident_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    route TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ON patient_access_log (incident_id, at, id);
CREATE INDEX ON patient_access_log (user_id, at, id);
CREATE INDEX ON patient_access_log (at);
SQL

# Random incidents of the demo's 3,000, one reader, one route, now: as a regulator's reads.
for i in $(seq "$BATCH"); do echo "\\set i$i random(1, 3000)"; done > "$WORK/sets.sql"
{
  cat "$WORK/sets.sql"
  echo "INSERT INTO patient_access_log (incident_id, user_id, route, at) VALUES"
  for i in $(seq "$BATCH"); do
    printf "(:i%s, 3, 'GET /incident/{id}', now())%s\n" "$i" "$([ "$i" = "$BATCH" ] && echo ';' || echo ',')"
  done
} > "$WORK/values.sql"
{
  cat "$WORK/sets.sql"
  ids=$(seq -s, -f ':i%g' "$BATCH")
  echo "INSERT INTO patient_access_log (incident_id, user_id, route, at) SELECT * FROM unnest(" \
    "ARRAY[$ids]::int8[], array_fill(3::int8, ARRAY[$BATCH])," \
    "array_fill('GET /incident/{id}'::text, ARRAY[$BATCH]), array_fill(now(), ARRAY[$BATCH]));"
} > "$WORK/unnest.sql"

run() { # statement protocol -> "batches/s µs-per-entry"
  psql -X -q "$PGURL/$DB" -c "TRUNCATE patient_access_log" -c "CHECKPOINT"
  local p0 p1 out n
  p0=$(pg_ticks)
  out=$(pgbench -n -c 1 -T "$DURATION" -M "$2" -f "$WORK/$1.sql" "$PGURL/$DB" 2>&1)
  p1=$(pg_ticks)
  n=$(awk '/number of transactions actually processed/ {print $NF}' <<< "$out" | cut -d/ -f1)
  echo "$(awk -v n="$n" -v d="$DURATION" 'BEGIN {printf "%.0f", n / d}') $(us_per $((p1 - p0)) $((n * BATCH)))"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-8s %12s %20s\n' round statement "batches/s" "PostgreSQL µs/entry"
vb=0; ub=0; vc=0; uc=0
for round in $(seq "$ROUNDS"); do
  read -r b c <<< "$(run values extended)"; vb=$((vb + b)); vc=$((vc + c))
  printf '%-6s %-8s %12s %20s\n' "$round" values "$b" "$c"
  read -r b c <<< "$(run unnest prepared)"; ub=$((ub + b)); uc=$((uc + c))
  printf '%-6s %-8s %12s %20s\n' "$round" unnest "$b" "$c"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v vb="$vb" -v ub="$ub" -v vc="$vc" -v uc="$uc" 'BEGIN {
  printf "unnest / values: batches per second %.2f, PostgreSQL CPU per entry %.2f\n", ub / vb, uc / vc }'
