#!/usr/bin/env bash
# Every read route of dispatch-api (docs/dispatch-routes.md) on the demo data and on a large
# database (build-dispatch.sh), in the same run: throughput and p99 of each route on each,
# and the ratio. Run by hand (not a test); see bench/scale/README.md:
#
#   bench/scale/run.sh                   # against scale_dispatch_2000000 (built if missing)
#   N=200000 DURATION=5 bench/scale/run.sh
#
# Both servers run at once (one per database); for each route wrk measures the demo server,
# then the large one, back to back, so the pair shares the machine's state of the moment.
# Routes that need an incident take random ids among the newest 1,000 incidents (the
# recent and open ones the screens show); prank calls take random phones with prank calls.
# wrk counts every answer: the non2xx column says how many were not 2xx (a 503 is a
# statement that ran past the 5 s statement_timeout), so read r/s together with it.
# Environment: PGURL, TARGET_DIR, BIN (see lib.sh and build-dispatch.sh), N (2000000),
# SCALE_DB (scale_dispatch_<N>), DEMO_DB (scale_dispatch_demo), DURATION (s per route, 10),
# CONNECTIONS (16), DATABASE_POOL_SIZE (each server's pool; unset, the service's default of
# 2 x cores + 1, docs/operations.md "Sizing the pool"), PORT (18190; the
# large database's server takes PORT+1), ROUTES (an egrep filter on the route names), ROUNDS
# (1: each route measured once per database; more: the median of that many, the order
# alternating), KEEP_DEMO (1 keeps the demo database).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/scale/lib.sh
. bench/scale/lib.sh
N=${N:-2000000}
SCALE_DB=${SCALE_DB:-scale_dispatch_$N}
DEMO_DB=${DEMO_DB:-scale_dispatch_demo}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-16}
PORT=${PORT:-18190}
ROUTES=${ROUTES:-.}
ROUNDS=${ROUNDS:-1}
WORK=$(mktemp -d)
export JWT_SECRET=bench-secret-bench-secret-bench-secret-0 RUST_LOG=warn LOG_FORMAT=json
# The pool is the service's own default unless DATABASE_POOL_SIZE is set: what a deployment
# that sets nothing gets.
DEFAULT_POOL="the default of the service (2 x $(nproc) cores + 1)"
POOL=${DATABASE_POOL_SIZE:-$DEFAULT_POOL}

if [ -z "${BIN:-}" ]; then
  build_release
  BIN=$TARGET_DIR/release/dispatch-api
fi
if ! db_exists "$SCALE_DB"; then
  log "$SCALE_DB missing: building it"
  DB=$SCALE_DB BIN=$BIN "$HERE/build-dispatch.sh" "$N"
fi
log "demo database $DEMO_DB"
recreate_db "$DEMO_DB"
DATABASE_URL=$PGURL/$DEMO_DB "$BIN" migrate > /dev/null
DATABASE_URL=$PGURL/$DEMO_DB "$BIN" seed > /dev/null
psql -X -q -c "VACUUM ANALYZE" "$PGURL/$DEMO_DB"

SERVERS=()
cleanup() {
  for pid in "${SERVERS[@]}"; do kill "$pid" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$WORK"
  [ "${KEEP_DEMO:-0}" = 1 ] || drop_db "$DEMO_DB"
}
trap cleanup EXIT

start() { # name db port
  DATABASE_URL=$PGURL/$2 BIND=127.0.0.1:$3 "$BIN" serve > "$WORK/$1.log" 2>&1 &
  SERVERS+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$3/healthz" > /dev/null && return; sleep 0.2; done
  echo "server $1 did not start"; cat "$WORK/$1.log"; exit 1
}
start demo "$DEMO_DB" "$PORT"
start scale "$SCALE_DB" "$((PORT + 1))"

# Per database: the ids, phones and user the routes take.
sql() { psql -X -At -c "SET search_path TO dispatch, public" -c "$2" "$PGURL/$1" | tail -n +2; }
for side in demo scale; do
  db=$DEMO_DB; [ $side = scale ] && db=$SCALE_DB
  { echo "return {"
    sql "$db" "SELECT id || ',' FROM incidents ORDER BY created_at DESC, id DESC LIMIT 1000"
    echo "}"; } > "$WORK/$side.ids.lua"
  { echo "return {"
    sql "$db" "SELECT '\"' || phone_key || '\",' FROM (SELECT DISTINCT phone_key FROM prank_calls) p ORDER BY 1 LIMIT 500"
    echo "}"; } > "$WORK/$side.phones.lua"
done
USER_ID=$(sql "$DEMO_DB" "SELECT id FROM users WHERE login = 'regulador'")
[ "$USER_ID" = "$(sql "$SCALE_DB" "SELECT id FROM users WHERE login = 'regulador'")" ]
# A phone prefix (area code and first five digits) of a recent incident; the demo city's
# common prefix (the five digits most of the demo's phones start with: its prank callers'
# and the city's mobiles, about one call in seven); and an incident number both databases
# have.
PHONE_PREFIX=$(sql "$SCALE_DB" "SELECT left(regexp_replace(caller_phone, '\\D', '', 'g'), 7) FROM incidents ORDER BY created_at DESC LIMIT 1 OFFSET 500")
COMMON_PREFIX=$(sql "$DEMO_DB" "SELECT left(regexp_replace(caller_phone, '\\D', '', 'g'), 5) FROM incidents GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
NUMBER=2026-000123
TOKENS=()
for login in regulador frota; do
  TOKENS+=("$(DATABASE_URL=$PGURL/$DEMO_DB "$BIN" token --login $login --ttl 2h)")
done

# name|token (r: regulator, f: fleet)|path, or path with %s and a value file (ids, phones)
ROUTE_LIST="GET /user|r|/user
GET /user/{id}|r|/user/$USER_ID
GET /user/search?q=ma|r|/user/search?q=ma
GET /employee/user_id/{id}|r|/employee/user_id/$USER_ID
GET /employee/search?query=jo|r|/employee/search?query=jo
GET /shared/default-values|r|/shared/default-values
GET /shared/possible-values|r|/shared/possible-values
GET /incident/mask|r|/incident/mask
GET /incident/mask?q=silva|r|/incident/mask?q=silva
GET /incident/mask?q=maria|r|/incident/mask?q=maria
GET /incident/mask?q=rua|r|/incident/mask?q=rua
GET /incident/mask?q=santos|r|/incident/mask?q=santos
GET /incident/mask?q=<phone prefix $PHONE_PREFIX>|r|/incident/mask?q=$PHONE_PREFIX
GET /incident/mask?q=<common prefix $COMMON_PREFIX>|r|/incident/mask?q=$COMMON_PREFIX
GET /incident/mask?q=<number $NUMBER>|r|/incident/mask?q=$NUMBER
GET /incident/mask?state=awaiting_regulation|r|/incident/mask?state=awaiting_regulation
GET /incident/mask?mine=true|r|/incident/mask?mine=true
GET /incident/{id}|r|/incident/%s|ids
GET /incident/{id}?include_history=true|r|/incident/%s?include_history=true|ids
GET /incident/prank-calls/{phone}|r|/incident/prank-calls/%s|phones
GET /incident/{id}/unit-selection|r|/incident/%s/unit-selection|ids
GET /incident/{id}/fleet-summary|f|/incident/%s/fleet-summary|ids
GET /incident/{id}/fleet-occurrence|f|/incident/%s/fleet-occurrence|ids
GET /incident/{id}/regulation|r|/incident/%s/regulation|ids
GET /incident/{id}/occurrence-view|r|/incident/%s/occurrence-view|ids
GET /technical-decision/incident/{id}|r|/technical-decision/incident/%s|ids
GET /mobile-unit/incident/{id}|r|/mobile-unit/incident/%s|ids
GET /dispatch/incident/{id}|r|/dispatch/incident/%s|ids
GET /dispatch/bff/dispatch-data/{id}|r|/dispatch/bff/dispatch-data/%s|ids
GET /mobile-unit|r|/mobile-unit
GET /mobile-unit/options|r|/mobile-unit/options
GET /mobile-unit-type|r|/mobile-unit-type
GET /technical-decision-action|r|/technical-decision-action
GET /intercurrence|r|/intercurrence
GET /health-unit?q=sao jose|r|/health-unit?q=sao%20jose
GET /professional-type|r|/professional-type
GET /unallocated|r|/unallocated"

to_ms() { # wrk latency (850.00us, 12.34ms, 1.20s) -> ms
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0;
                         else if (v ~ /s$/) n *= 1000; else if (v ~ /m$/) n *= 60000;
                         printf "%.1f", n }'
}
measure() { # side port token path [values] -> "rps p99ms errors"
  local side=$1 port=$2 token=$3 path=$4 values=${5:-} out=$WORK/wrk.txt
  # --timeout above the 5 s statement_timeout: a slow answer is measured, not dropped.
  local args=(-t2 -c"$CONNECTIONS" --timeout 10s -H "Authorization: Bearer $token")
  local url="http://127.0.0.1:$port$path"
  if [ -n "$values" ]; then
    export VALUES_FILE=$WORK/$side.$values.lua PATH_FMT=$path
    args+=(-s "$HERE/random_path.lua")
    url="http://127.0.0.1:$port"
  fi
  wrk "${args[@]}" -d1s "$url" > /dev/null
  wrk "${args[@]}" -d"${DURATION}s" --latency "$url" > "$out"
  local rps p99 errors
  rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$out")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")
  # not 2xx, plus requests without an answer (socket errors: connect, read, write, timeout)
  errors=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10}
                END {print n + 0}' "$out")
  echo "$rps $p99 $errors"
}

median() { # file of "rps p99 errors" lines -> "median rps, median p99, total errors"
  local rps p99
  rps=$(cut -d' ' -f1 "$1" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
  p99=$(cut -d' ' -f2 "$1" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
  echo "$rps $p99 $(awk '{n += $3} END {print n + 0}' "$1")"
}

log "measuring: $DURATION s per route and database, $ROUNDS round(s), $CONNECTIONS connections, pool $POOL"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
RESULTS=$WORK/results.txt
while IFS='|' read -r name who path values; do
  echo "$name" | grep -Eq -- "$ROUTES" || continue
  token=${TOKENS[0]}; [ "$who" = f ] && token=${TOKENS[1]}
  # Every route should answer 200 on both; one that does not (a 503 when its statement runs
  # past the pool's statement_timeout) is measured all the same and its answers counted.
  for side in demo scale; do
    port=$PORT; [ $side = scale ] && port=$((PORT + 1))
    p=$path
    [ -n "$values" ] && p=${path//%s/$(sed -n 2p "$WORK/$side.$values.lua" | tr -d '",')}
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$port$p")
    [ "$code" = 200 ] || echo "warning: $name on $side answered $code ($p)" >&2
  done
  # ROUNDS > 1: the pair is measured again, the order swapped every other round (demo first,
  # then the large database first), and each side reports its median r/s and median p99,
  # so a build starting on the shared machine during one measurement weighs less.
  rm -f "$WORK"/*.samples
  for round in $(seq "$ROUNDS"); do
    order="demo scale"; [ $((round % 2)) = 0 ] && order="scale demo"
    for side in $order; do
      port=$PORT; [ $side = scale ] && port=$((PORT + 1))
      measure $side "$port" "$token" "$path" "$values" >> "$WORK/$side.samples"
    done
  done
  read -r d_rps d_p99 d_err <<< "$(median "$WORK/demo.samples")"
  read -r s_rps s_p99 s_err <<< "$(median "$WORK/scale.samples")"
  echo "$name|$d_rps|$d_p99|$s_rps|$s_p99|$((d_err + s_err))" | tee -a "$RESULTS" >&2
done <<< "$ROUTE_LIST"

INCIDENTS=$(sql "$SCALE_DB" "SELECT count(*) FROM incidents")
echo
echo "$(date -u +'%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "demo: 3,000 incidents; scale: $INCIDENTS incidents ($SCALE_DB); $CONNECTIONS connections, pool $POOL, $DURATION s per route, median of $ROUNDS round(s)"
printf '| %-46s | %9s | %9s | %9s | %9s | %6s | %6s |\n' route "demo r/s" "demo p99" \
  "scale r/s" "scale p99" ratio non2xx
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..48})" "----------:" "----------:" \
  "----------:" "----------:" "-------:" "-------:"
while IFS='|' read -r name d_rps d_p99 s_rps s_p99 errors; do
  ratio=$(awk -v s="$s_rps" -v d="$d_rps" 'BEGIN { printf "%.3f", (d > 0 ? s / d : 0) }')
  printf '| %-46s | %9s | %6s ms | %9s | %6s ms | %6s | %6s |\n' "\`$name\`" "$d_rps" "$d_p99" \
    "$s_rps" "$s_p99" "$ratio" "$errors"
done < "$RESULTS"
