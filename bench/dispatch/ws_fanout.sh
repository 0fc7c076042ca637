#!/usr/bin/env bash
# WebSocket fan-out benchmark, run by hand (not a test). From the workspace root:
#   bench/dispatch/ws_fanout.sh
# Two replicas of dispatch-api, each a `serve` process of its own on its own port, one
# database; the subscribers and the writer in a third process (`--example ws_fanout`), so the
# figure is the servers'. For each subscriber count (1,000 and 5,000, spread evenly over the
# replicas, all following one incident) it prints commit -> delivery p50/p90/p99/max, the
# time to a write's last subscriber, the p99's ratio to the target (50 ms), and each
# replica's memory (RSS) with no socket and with the round's sockets idle.
# Environment: PGURL (server, default postgres://postgres@127.0.0.1:5432), SUBSCRIBERS
# (1000,5000), WRITES (50), PORTS (18191 18192), CARGO_TARGET_DIR (target-dispatch);
# BIN=path serves that build of dispatch-api instead of building one (to compare two builds
# in one sitting); CLIENT=path runs that build of the client; REPLICA_CPUS, CLIENT_CPUS.
set -euo pipefail
cd "$(dirname "$0")/../.."
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=dispatch_wsfanout
read -r -a PORTS <<< "${PORTS:-18191 18192}"
TARGET_DIR=${CARGO_TARGET_DIR:-target-dispatch}
export SUBSCRIBERS=${SUBSCRIBERS:-1000,5000} WRITES=${WRITES:-50}
WORK=$(mktemp -d)

# Pinned (bench/README.md, "Pinned"): REPLICA_CPUS and CLIENT_CPUS (taskset lists, e.g. 0 and
# 1) put the replicas on one core and the client on the other; unset, both run anywhere.
replica_pin=(); client_pin=()
[ -n "${REPLICA_CPUS:-}" ] && replica_pin=(taskset -c "$REPLICA_CPUS")
[ -n "${CLIENT_CPUS:-}" ] && client_pin=(taskset -c "$CLIENT_CPUS")

# Every subscriber is a file descriptor in the client, and half of them in each replica.
most=$(tr ',' '\n' <<< "$SUBSCRIBERS" | sort -n | tail -1)
hard=$(ulimit -Hn)
want=$((most + 1024))
if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then
  echo "ulimit -Hn is $hard; $want file descriptors are needed for $most subscribers" >&2
  exit 1
fi
ulimit -n "$want"

if [ -z "${BIN:-}" ] || [ -z "${CLIENT:-}" ]; then
  CARGO_TARGET_DIR=$TARGET_DIR nice cargo build --release -q -p dispatch-api \
    --bin dispatch-api --example ws_fanout
fi
BIN=${BIN:-$TARGET_DIR/release/dispatch-api}
CLIENT=${CLIENT:-$TARGET_DIR/release/examples/ws_fanout}

export DATABASE_URL=$PGURL/$DB RUST_LOG=warn LOG_FORMAT=json
JWT_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export JWT_SECRET
psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
"$BIN" seed --scale test > /dev/null
TOKEN=$("$BIN" token --login tarm --ttl 1h)

PIDS=()
stop() { for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null && wait "$p" 2> /dev/null; done; PIDS=(); }
trap 'stop; rm -rf "$WORK"' EXIT
REPLICAS=
for port in "${PORTS[@]}"; do
  BIND=127.0.0.1:$port "${replica_pin[@]}" "$BIN" serve > "$WORK/replica-$port.log" 2>&1 &
  PIDS+=($!)
  REPLICAS+="${REPLICAS:+,}127.0.0.1:$port"
done
for port in "${PORTS[@]}"; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/readyz" > /dev/null || { echo "replica $port not ready"; cat "$WORK"/*.log; exit 1; }
done
# The listeners connect after readiness; give them a moment.
sleep 1

echo "binary: $BIN ($(stat -c %y "$BIN" | cut -d. -f1)); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
REPLICAS=$REPLICAS REPLICA_PIDS=$(IFS=,; echo "${PIDS[*]}") TOKEN=$TOKEN "${client_pin[@]}" "$CLIENT"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
