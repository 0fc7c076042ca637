#!/usr/bin/env bash
# A dispatch centre's shift against dispatch-api, run by hand (not a test): bench/shift/main.rs.
#   bench/shift/run.sh                 # CALL_TAKERS=8 REGULATORS=6 FLEET=4 INCIDENTS=25 by default
# Builds the release binary and the driver, seeds the demo data into a database of its own,
# starts the service, writes the people file (a token per active user of each profile) and
# runs the driver: a one-person baseline, then the shift, and the table of screens.
# Environment: PGURL (default postgres://postgres@127.0.0.1:5432), PORT (18095),
# TARGET_DIR (target-shift).
set -euo pipefail
cd "$(dirname "$0")/../.."
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=dispatch_shift
PORT=${PORT:-18095}
TARGET_DIR=${TARGET_DIR:-target-shift}
BIN=$TARGET_DIR/release/dispatch-api
WORK=$(mktemp -d)
export DATABASE_URL=$PGURL/$DB BIND=127.0.0.1:$PORT
export JWT_SECRET=${JWT_SECRET:-$(head -c 32 /dev/urandom | base64)}
export RUST_LOG=warn LOG_FORMAT=json DATABASE_POOL_SIZE=${DATABASE_POOL_SIZE:-16}

CARGO_TARGET_DIR=$TARGET_DIR cargo build --release -q -p dispatch-api --bin dispatch-api --example shift
psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
"$BIN" seed > /dev/null
psql -X -q "$DATABASE_URL" -c "VACUUM ANALYZE"

"$BIN" serve > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.1; done

# The people: every active user of the three profiles, each with a token of its own.
psql -X -q -t -A -F $'\t' "$DATABASE_URL" -c "
  SELECT u.id, u.login, u.descriptive_name, p.title
  FROM dispatch.users u JOIN dispatch.profiles p ON p.id = u.profile_id
  WHERE u.status = 'ativo' AND p.title IN ('TARM', 'MEDICO_REGULADOR', 'OPERADOR_FROTA')
  ORDER BY u.id" > "$WORK/users.tsv"
{
  echo "["
  first=1
  while IFS=$'\t' read -r id login name profile; do
    token=$("$BIN" token --login "$login" --ttl 2h)
    [ $first = 1 ] || echo ","
    first=0
    jq -n --argjson id "$id" --arg name "$name" --arg profile "$profile" --arg token "$token" \
      '{id: $id, name: $name, profile: $profile, token: $token}'
  done < "$WORK/users.tsv"
  echo "]"
} > "$WORK/people.json"

BASE=http://127.0.0.1:$PORT SHIFT_PEOPLE=$WORK/people.json "$TARGET_DIR/release/examples/shift"
