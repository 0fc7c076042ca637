#!/usr/bin/env bash
# The response-time report (GET /reports/response-times, docs/dispatch-routes.md "Response
# times") for a day and for a month, on the demo data and on the large database
# (build-dispatch.sh, 2,000,000 incidents), in the same run: the median and the slowest of
# each, and the ratio large/demo. The goals: a day within 200 ms, a month within 2 s at 2 M.
# Run by hand (not a test); see bench/scale/README.md:
#
#   bench/scale/report.sh                  # against scale_dispatch_2000000 (built if missing)
#   ROUNDS=5 bench/scale/report.sh
#
# Each measure is ROUNDS (default 11) requests one after another on one connection (after
# one warm-up): a manager asks one report at a time. Both servers run at once; the demo and
# the large one are measured alternately, request by request, so both share the machine's
# state of the moment. Environment: PGURL, TARGET_DIR, BIN (see lib.sh), N (2000000),
# SCALE_DB, DEMO_DB, PORT (18290; the large one PORT+1), ROUNDS, KEEP_DEMO.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/scale/lib.sh
. bench/scale/lib.sh
N=${N:-2000000}
SCALE_DB=${SCALE_DB:-scale_dispatch_$N}
DEMO_DB=${DEMO_DB:-scale_dispatch_report_demo}
PORT=${PORT:-18290}
ROUNDS=${ROUNDS:-11}
WORK=$(mktemp -d)
export JWT_SECRET=bench-secret-bench-secret-bench-secret-0 RUST_LOG=warn LOG_FORMAT=json

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
TOKEN=$(DATABASE_URL=$PGURL/$DEMO_DB "$BIN" token --login admin --ttl 2h)
[ "$TOKEN" ] || exit 1

# Each database's newest call: the ranges end there (the large one's was built up to its
# anchor, the demo's up to its seed).
newest() { psql -X -At -c "SELECT to_char(max(call_received_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM dispatch.incidents" "$PGURL/$1"; }
ago() { date -u -d "$1 - $2" +%Y-%m-%dT%H:%M:%SZ; }
END_DEMO=$(newest "$DEMO_DB")
END_SCALE=$(newest "$SCALE_DB")
count() { psql -X -At -c "SELECT count(*) FROM dispatch.incidents WHERE call_received_at >= '$2' AND call_received_at < '$3'" "$PGURL/$1"; }

once() { # port from to group_by -> seconds
  curl -s -o "$WORK/body" -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $TOKEN" \
    "http://127.0.0.1:$1/reports/response-times?from=$2&to=$3&group_by=$4" > "$WORK/out"
  read -r code secs < "$WORK/out"
  [ "$code" = 200 ] || { echo "HTTP $code on port $1: $(head -c 300 "$WORK/body")" >&2; exit 1; }
  echo "$secs"
}
stats() { sort -g | awk '{v[NR] = $1} END {printf "%.0f %.0f\n", v[int((NR + 1) / 2)] * 1000, v[NR] * 1000}'; }

printf '\n%-26s %10s %12s %12s %12s %12s %7s\n' "report" "calls" "demo p50 ms" "demo max ms" "2M p50 ms" "2M max ms" "ratio"
for span in "day:1 day" "month:30 days"; do
  name=${span%%:*} length=${span#*:}
  for group in priority day; do
    [ "$name" = day ] && [ "$group" = day ] && continue
    from_d=$(ago "$END_DEMO" "$length") from_s=$(ago "$END_SCALE" "$length")
    # The range ends one second after the newest call, so that call is in it.
    to_d=$(date -u -d "$END_DEMO + 1 second" +%Y-%m-%dT%H:%M:%SZ)
    to_s=$(date -u -d "$END_SCALE + 1 second" +%Y-%m-%dT%H:%M:%SZ)
    once "$PORT" "$from_d" "$to_d" "$group" > /dev/null
    once "$((PORT + 1))" "$from_s" "$to_s" "$group" > /dev/null
    : > "$WORK/demo" ; : > "$WORK/scale"
    for _ in $(seq "$ROUNDS"); do
      once "$PORT" "$from_d" "$to_d" "$group" >> "$WORK/demo"
      once "$((PORT + 1))" "$from_s" "$to_s" "$group" >> "$WORK/scale"
    done
    read -r dp50 dmax < <(stats < "$WORK/demo")
    read -r sp50 smax < <(stats < "$WORK/scale")
    calls="$(count "$DEMO_DB" "$from_d" "$to_d")/$(count "$SCALE_DB" "$from_s" "$to_s")"
    printf '%-26s %10s %12s %12s %12s %12s %7s\n' "$name, group_by=$group" "$calls" "$dp50" "$dmax" \
      "$sp50" "$smax" "$(awk -v a="$sp50" -v b="$dp50" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')"
  done
done
echo
echo "calls: demo/2M in the range; ratio: 2M p50 / demo p50 (same run)."
