#!/usr/bin/env bash
# The access log's append, PostgreSQL's side alone (docs/dispatch-access-log.md), run by hand
# (not a test). From the workspace root:
#   bench/access_log/statement.sh           the two statements, batches of BATCH
#   COMPARE=sizes bench/access_log/statement.sh   one statement, batches of BATCH and LARGE
# pgbench appends batches to a table shaped as dispatch.patient_access_log (its columns and
# its four B-trees; no service, no network but loopback) with one client, alternating ROUNDS
# times between two ways of appending:
#   COMPARE=statements (the default), the two statements the writer has sent:
#     values  a multi-row INSERT, its text growing with the batch, parsed and planned each
#             time (what `store::access_log::append` sent before);
#     unnest  one INSERT ... SELECT * FROM unnest(arrays), prepared once and then only bound
#             and run (what it sends now);
#   COMPARE=sizes, the unnest statement with batches of BATCH (what the writer gathered under
#     load without lingering) and of LARGE (what a tenth of a second's linger gathers); the
#     incident ids are drawn by PostgreSQL (pgbench binds at most 255 values), for both.
#   COMPARE=layout, batches of BATCH in the two layouts of the log: a row per entry (the
#     table above, its four B-trees) and a row per batch (arrays, GIN indexes on the incident
#     and user ids, a B-tree on the batch's time: patient_access_batches); ids drawn as in
#     sizes.
# It prints, per round, batches per second and the CPU all of PostgreSQL's processes used per
# entry, then the second / the first for both.
# Environment: PGURL (default postgres://postgres@127.0.0.1:5432), DURATION (s, 15),
# ROUNDS (4), BATCH (50, about the writer's batches under load without a linger:
# bench/access_log/README.md), LARGE (500), COMPARE (statements).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/lib/cpu.sh
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=dispatch_bench_access_log_statement
DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-4}
BATCH=${BATCH:-50}
LARGE=${LARGE:-500}
COMPARE=${COMPARE:-statements}
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
CREATE TABLE patient_access_batches (
    id BIGSERIAL PRIMARY KEY,
    at TIMESTAMPTZ NOT NULL,
    incident_ids BIGINT[] NOT NULL,
    user_ids BIGINT[] NOT NULL,
    routes TEXT[] NOT NULL,
    ats TIMESTAMPTZ[] NOT NULL
);
CREATE INDEX ON patient_access_batches USING gin (incident_ids);
CREATE INDEX ON patient_access_batches USING gin (user_ids);
CREATE INDEX ON patient_access_batches (at);
SQL

# Random incidents of the demo's 3,000, one reader, one route, now: as a regulator's reads.
INSERT="INSERT INTO patient_access_log (incident_id, user_id, route, at)"
rest() { echo "array_fill(3::int8, ARRAY[$1]), array_fill('GET /incident/{id}'::text, ARRAY[$1]), array_fill(now(), ARRAY[$1])"; }
for i in $(seq "$BATCH"); do echo "\\set i$i random(1, 3000)"; done > "$WORK/sets.sql"
{
  cat "$WORK/sets.sql"
  echo "$INSERT VALUES"
  for i in $(seq "$BATCH"); do
    printf "(:i%s, 3, 'GET /incident/{id}', now())%s\n" "$i" "$([ "$i" = "$BATCH" ] && echo ';' || echo ',')"
  done
} > "$WORK/values.sql"
{
  cat "$WORK/sets.sql"
  echo "$INSERT SELECT * FROM unnest(ARRAY[$(seq -s, -f ':i%g' "$BATCH")]::int8[], $(rest "$BATCH"));"
} > "$WORK/unnest.sql"
drawn() { # size: the ids drawn by PostgreSQL
  echo "$INSERT SELECT * FROM unnest((SELECT array_agg(1 + (random() * 2999)::int8)" \
    "FROM generate_series(1, $1)), $(rest "$1"));"
}
drawn "$BATCH" > "$WORK/small.sql"
drawn "$LARGE" > "$WORK/large.sql"
echo "INSERT INTO patient_access_batches (at, incident_ids, user_ids, routes, ats)" \
  "SELECT now(), (SELECT array_agg(1 + (random() * 2999)::int8) FROM generate_series(1, $BATCH))," \
  "$(rest "$BATCH");" > "$WORK/batch.sql"

run() { # script protocol entries-per-batch -> "batches/s µs-per-entry"
  psql -X -q "$PGURL/$DB" -c "TRUNCATE patient_access_log, patient_access_batches" -c "CHECKPOINT"
  local p0 p1 out n
  p0=$(pg_ticks)
  out=$(pgbench -n -c 1 -T "$DURATION" -M "$2" -f "$WORK/$1.sql" "$PGURL/$DB" 2>&1)
  p1=$(pg_ticks)
  n=$(awk '/number of transactions actually processed/ {print $NF}' <<< "$out" | cut -d/ -f1)
  echo "$(awk -v n="$n" -v d="$DURATION" 'BEGIN {printf "%.0f", n / d}') $(us_per $((p1 - p0)) $((n * $3)))"
}

case $COMPARE in
  statements) A=(values extended "$BATCH"); B=(unnest prepared "$BATCH") ;;
  sizes) A=(small prepared "$BATCH"); B=(large prepared "$LARGE") ;;
  layout) A=(small prepared "$BATCH"); B=(batch prepared "$BATCH") ;;
  *) echo "COMPARE is statements, sizes or layout"; exit 2 ;;
esac
name() { [ "$COMPARE" = statements ] && echo "$1" || echo "$1 of $3"; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-12s %12s %20s\n' round append "batches/s" "PostgreSQL µs/entry"
ab=0; bb=0; ac=0; bc=0
for round in $(seq "$ROUNDS"); do
  read -r b c <<< "$(run "${A[@]}")"; ab=$((ab + b)); ac=$((ac + c))
  printf '%-6s %-12s %12s %20s\n' "$round" "$(name "${A[@]}")" "$b" "$c"
  read -r b c <<< "$(run "${B[@]}")"; bb=$((bb + b)); bc=$((bc + c))
  printf '%-6s %-12s %12s %20s\n' "$round" "$(name "${B[@]}")" "$b" "$c"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v ab="$ab" -v bb="$bb" -v ac="$ac" -v bc="$bc" -v na="${A[2]}" -v nb="${B[2]}" \
  -v a="$(name "${A[@]}")" -v b="$(name "${B[@]}")" 'BEGIN {
  printf "%s / %s: entries per second %.2f, PostgreSQL CPU per entry %.2f\n", b, a, bb * nb / (ab * na), bc / ac }'
