#!/usr/bin/env bash
# Memory per idle WebSocket, run by hand (not a test). From the workspace root:
#   bench/dispatch/ws_idle_memory.sh
#   BIN=/tmp/other-build bench/dispatch/ws_idle_memory.sh   # a given release build
# One release `dispatch-api serve`; a Python client (ws_idle_memory.py) opens 0, then 1,000,
# then 5,000 idle sockets (cumulative), each authenticated and following the `registering`
# queue, and reads the server's VmRSS once it is quiet at each step; prints kB per socket
# (the least-squares slope, and each step's). Environment: PGURL (default
# postgres://postgres@127.0.0.1:5432), PORT (18391), COUNTS (0,1000,5000), INCIDENT (follow
# that incident instead of the queue), CARGO_TARGET_DIR (target-dispatch), BIN.
set -euo pipefail
cd "$(dirname "$0")/../.."
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=dispatch_wsmemory
PORT=${PORT:-18391}
export COUNTS=${COUNTS:-0,1000,5000}
most=$(tr ',' '\n' <<< "$COUNTS" | sort -n | tail -1)
ulimit -n $((most + 1024))
if [ -z "${BIN:-}" ]; then
  TARGET_DIR=${CARGO_TARGET_DIR:-target-dispatch}
  CARGO_TARGET_DIR=$TARGET_DIR nice cargo build --release -q -p dispatch-api --bin dispatch-api
  BIN=$TARGET_DIR/release/dispatch-api
fi
WORK=$(mktemp -d)
export DATABASE_URL=$PGURL/$DB RUST_LOG=warn LOG_FORMAT=json BIND=127.0.0.1:$PORT
JWT_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export JWT_SECRET
psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
"$BIN" seed --scale test > /dev/null
TOKEN=$("$BIN" token --login tarm --ttl 1h)
"$BIN" serve > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2> /dev/null; wait $SERVER 2> /dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null || { echo "not ready"; cat "$WORK/server.log"; exit 1; }
echo "binary: $BIN ($(stat -c %y "$BIN" | cut -d. -f1)); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
ADDR=127.0.0.1:$PORT SERVER_PID=$SERVER TOKEN=$TOKEN python3 bench/dispatch/ws_idle_memory.py
