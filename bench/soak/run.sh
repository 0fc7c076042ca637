#!/usr/bin/env bash
# Soak: both services under mixed load from wrk (a second process) for a few minutes.
# Reports each service's RSS (VmRSS) at the start and the end, the p99 of the first minute
# against the last, and the count of 5xx (must be 0). Run by hand, not in CI:
#
#   bench/soak/run.sh                      # MINUTES=3 by default
#   MINUTES=10 DISPATCH_CONNECTIONS=16 bench/soak/run.sh
#   MINUTES=10 IDLE_SOCKETS=5000 bench/soak/run.sh   # with 5,000 idle WebSockets held open
# At the end it prints the slope of each RSS and p99 after the first minute (per minute).
#
# Needs: PostgreSQL at $PGURL (default the local server), psql, wrk, jq, curl. Builds both
# services with PROFILE (default `release`, thin LTO off to keep the build short; `debug`
# reuses a test build). Load runs in one-minute wrk segments, so each minute has its own p99.
set -euo pipefail
cd "$(dirname "$0")/../.."

PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=${SOAK_DB:-soak}
MINUTES=${MINUTES:-3}
DISPATCH_CONNECTIONS=${DISPATCH_CONNECTIONS:-8}
CALLBACK_CONNECTIONS=${CALLBACK_CONNECTIONS:-4}
# Idle WebSockets held open on dispatch-api through the soak (authenticated, following the
# `registering` queue; bench/dispatch/ws_idle_memory.py), opened before the start RSS.
IDLE_SOCKETS=${IDLE_SOCKETS:-0}
THREADS=1
PER_THREAD=${PER_THREAD:-150000}
PROFILE=${PROFILE:-release}
DISPATCH_BIND=${DISPATCH_BIND:-127.0.0.1:18180}
CALLBACK_BIND=${CALLBACK_BIND:-127.0.0.1:18181}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target-soak}
OUT=$(mktemp -d /tmp/soak.XXXXXX)
SECRET=soak-secret-soak-secret-soak-secret-0000

if [ "$PROFILE" = release ]; then
  CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo build --release -q -p dispatch-api -p proposal-callback
else
  cargo build -q -p dispatch-api -p proposal-callback
fi
BIN=$CARGO_TARGET_DIR/$PROFILE

psql "$PGURL/postgres" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
export DATABASE_URL="$PGURL/$DB" JWT_SECRET=$SECRET LOG_FORMAT=json RUST_LOG=warn
"$BIN/dispatch-api" seed >/dev/null
"$BIN/proposal-callback" seed >"$OUT/seed.json"
BASIC=$(jq -r '.integrations[] | select(.tenant=="demo-a" and .insurer=="porto") | .token' "$OUT/seed.json")
NPROP=$((MINUTES * PER_THREAD))
psql "$DATABASE_URL" -q -v ON_ERROR_STOP=1 <<SQL
SET search_path TO dispatch, proposal, public;
INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email)
  SELECT 'demo-a', 'S-' || n, 'under_analysis', 'soak' || n || '@example.com'
  FROM generate_series(1, $NPROP) AS n;
VACUUM ANALYZE;
SQL

BIND=$DISPATCH_BIND "$BIN/dispatch-api" serve >"$OUT/dispatch.log" 2>&1 &
DPID=$!
BIND=$CALLBACK_BIND "$BIN/proposal-callback" serve >"$OUT/callback.log" 2>&1 &
CPID=$!
APID=
IPID=
trap 'kill $DPID $CPID $APID $IPID 2>/dev/null || true' EXIT

# Production runs with autovacuum on (PostgreSQL's default). Some development servers turn it
# off; then nothing re-analyses the callback tables as they grow, the pooled connections keep
# the plans they made while the tables were empty (sequential scans in every foreign-key
# check), and callbacks slow down minute by minute. Stand in for autoanalyze in that case.
if [ "$(psql "$DATABASE_URL" -tAc 'SHOW autovacuum')" = off ] && [ "${SOAK_ANALYZE:-1}" = 1 ]; then
  echo "autovacuum is off on this server: running ANALYZE every 20 s in its place (SOAK_ANALYZE=0 to skip)"
  (while sleep 20; do psql "$DATABASE_URL" -qc 'ANALYZE proposal.callback_receipts, proposal.integration_history, proposal.applied_callbacks, proposal.proposal_events, proposal.email_outbox, proposal.proposals' >/dev/null 2>&1; done) &
  APID=$!
fi
for bind in $DISPATCH_BIND $CALLBACK_BIND; do
  for _ in $(seq 100); do curl -sf "http://$bind/readyz" >/dev/null && break; sleep 0.2; done
done
DTOKEN=$("$BIN/dispatch-api" token --login regulador --ttl 2h)
CTOKEN=$(curl -sf -X POST -H "Authorization: Basic $BASIC" "http://$CALLBACK_BIND/callback/auth" | jq -r .access_token)

rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
field() { grep ^SOAK "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1==k {print $2}'; }
if [ "$IDLE_SOCKETS" -gt 0 ]; then
  ulimit -n $((IDLE_SOCKETS + 1024))
  ITOKEN=$("$BIN/dispatch-api" token --login tarm --ttl 2h)
  ADDR=$DISPATCH_BIND SERVER_PID=$DPID TOKEN=$ITOKEN COUNTS=$IDLE_SOCKETS HOLD=1 \
    python3 bench/dispatch/ws_idle_memory.py >"$OUT/idle.txt" 2>&1 &
  IPID=$!
  until grep -q "^holding" "$OUT/idle.txt"; do
    kill -0 $IPID 2>/dev/null || { echo "idle sockets failed:"; cat "$OUT/idle.txt"; exit 1; }
    sleep 1
  done
  echo "$(grep 'idle sockets:' "$OUT/idle.txt" | tail -1)"
fi
# A short warm-up so the start RSS is the running service, not the empty one.
MODE=dispatch TOKEN=$DTOKEN THREADS=1 wrk -t 1 -c 2 -d 5s -s bench/soak/soak.lua "http://$DISPATCH_BIND" >/dev/null
D_RSS0=$(rss $DPID); C_RSS0=$(rss $CPID)
echo "start RSS: dispatch-api ${D_RSS0} kB, proposal-callback ${C_RSS0} kB"

for m in $(seq 0 $((MINUTES - 1))); do
  MODE=dispatch TOKEN=$DTOKEN THREADS=1 wrk -t 1 -c "$DISPATCH_CONNECTIONS" -d 60s --timeout 10s \
    -s bench/soak/soak.lua "http://$DISPATCH_BIND" >"$OUT/dispatch-$m.txt" &
  W1=$!
  MODE=callback SEGMENT=$m TOKEN=$CTOKEN THREADS=1 PER_THREAD=$PER_THREAD wrk -t 1 \
    -c "$CALLBACK_CONNECTIONS" -d 60s --timeout 10s \
    -s bench/soak/soak.lua "http://$CALLBACK_BIND/callback/demo-a/porto" >"$OUT/callback-$m.txt" &
  W2=$!
  wait $W1 $W2
  echo "minute $((m + 1)): dispatch $(grep ^SOAK "$OUT/dispatch-$m.txt" | cut -c6-)"
  echo "minute $((m + 1)): callback $(grep ^SOAK "$OUT/callback-$m.txt" | cut -c6-)"
  echo "  RSS dispatch-api $(rss $DPID) kB, proposal-callback $(rss $CPID) kB"
  echo "$((m + 1)) $(rss $DPID) $(rss $CPID) $(field "$OUT/dispatch-$m.txt" p99_ms) $(field "$OUT/callback-$m.txt" p99_ms)" >>"$OUT/minutes.txt"
done
D_RSS1=$(rss $DPID); C_RSS1=$(rss $CPID)

sum5xx=0
for f in "$OUT"/dispatch-*.txt "$OUT"/callback-*.txt; do sum5xx=$((sum5xx + $(field "$f" 5xx))); done
last=$((MINUTES - 1))
APPLIED=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM proposal.proposals WHERE proposal_id LIKE 'S-%' AND status = 'approved'")
SENT=0
for f in "$OUT"/callback-*.txt; do SENT=$((SENT + $(field "$f" requests))); done

kill -TERM $DPID $CPID $APID 2>/dev/null || true
wait $DPID $CPID 2>/dev/null || true
trap - EXIT

echo
echo "== soak summary ($(nproc) cores, $MINUTES min, $PROFILE build, dispatch $DISPATCH_CONNECTIONS + callback $CALLBACK_CONNECTIONS connections)"
printf "%-18s %12s %12s %14s %14s\n" service "RSS start kB" "RSS end kB" "p99 min 1 ms" "p99 min $MINUTES ms"
printf "%-18s %12s %12s %14s %14s\n" dispatch-api "$D_RSS0" "$D_RSS1" "$(field "$OUT/dispatch-0.txt" p99_ms)" "$(field "$OUT/dispatch-$last.txt" p99_ms)"
printf "%-18s %12s %12s %14s %14s\n" proposal-callback "$C_RSS0" "$C_RSS1" "$(field "$OUT/callback-0.txt" p99_ms)" "$(field "$OUT/callback-$last.txt" p99_ms)"
echo "5xx: $sum5xx; callbacks sent $SENT, applied $APPLIED; idle sockets held: $IDLE_SOCKETS"
# The slopes after the first minute (least squares over minutes 2..MINUTES): flat is ~0.
awk 'NR > 1 {n++; x += $1; xx += $1 * $1; for (i = 2; i <= 5; i++) {y[i] += $i; xy[i] += $1 * $i}}
  END {if (n < 2) exit; d = n * xx - x * x;
    printf "slope after minute 1, per minute: dispatch-api RSS %+.1f kB, proposal-callback RSS %+.1f kB, dispatch p99 %+.2f ms, callback p99 %+.2f ms\n",
      (n * xy[2] - x * y[2]) / d, (n * xy[3] - x * y[3]) / d, (n * xy[4] - x * y[4]) / d, (n * xy[5] - x * y[5]) / d}' "$OUT/minutes.txt"
echo "raw output in $OUT"
[ "$sum5xx" -eq 0 ]
