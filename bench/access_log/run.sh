#!/usr/bin/env bash
# The access log's cost (docs/dispatch-access-log.md), run by hand (not a test). From the
# workspace root:
#   bench/access_log/run.sh
# Builds the release binary with the `bench` feature (or runs BIN), loads the full demo data
# into a database of its own, then measures GET /incident/{id} on random ids (the route every
# screen's read is recorded like) with the access log off (BENCH_ACCESS_LOG=off, the
# baseline) and on, alternating ROUNDS times in one run (off first in odd rounds, on first in
# even ones), and prints on / off (target >= 0.9).
# After the run it checks that every request answered while the log was on was recorded.
# Where the time goes: the CPU the service and its PostgreSQL connections (the backends of
# the benchmark's database) used during each measured round, in ms per 1,000 reads.
# Before the rounds it measures what one durable commit costs on this machine (pgbench, one
# client, a one-row INSERT into a scratch table with synchronous_commit on): its latency bounds
# a closed loop whose every read waits for a commit (bench/access_log/README.md, "The disk's
# flush"), and its CPU is paid once per batch.
# Environment: PGURL (default postgres://postgres@127.0.0.1:5432), DB (the database, default
# dispatch_bench_access_log: one per build compared, with KEEP_DB=1), DURATION (s, 15),
# CONNECTIONS (32), ROUNDS (2), PORT (18091), TARGET_DIR (target-dispatch), BIN, KEEP_DB=1
# (reuse the database an earlier run seeded, its access log emptied: no 3-minute seed),
# ACCESS_LOG_LINGER, ACCESS_LOG_WRITERS and DATABASE_POOL_SIZE (the service's settings, passed
# through; unset: their defaults).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/lib/cpu.sh
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
DB=${DB:-dispatch_bench_access_log}
DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-18091}
TARGET_DIR=${TARGET_DIR:-target-dispatch}
WORK=$(mktemp -d)
export DATABASE_URL=$PGURL/$DB JWT_SECRET=bench-secret-bench-secret-bench-secret-0 BIND=127.0.0.1:$PORT
export RUST_LOG=warn LOG_FORMAT=json

if [ -z "${BIN:-}" ]; then
  BIN=$TARGET_DIR/release/dispatch-api
  CARGO_TARGET_DIR=$TARGET_DIR cargo build --release -q -p dispatch-api --features bench
fi
# The pool is the service's own default (docs/operations.md, "Sizing the pool"), as the
# binary computes it for this host and `serve --help` shows it, unless DATABASE_POOL_SIZE is
# set: what a deployment that sets nothing runs with.
POOL=${DATABASE_POOL_SIZE:-"the service's default, $("$BIN" serve --help | grep -o '2 x cores + 1 = [^]]*')"}
if [ "${KEEP_DB:-}" = 1 ] && psql -X -qtA "$DATABASE_URL" -c "SELECT 1 FROM dispatch.incidents LIMIT 1" 2> /dev/null | grep -q 1; then
  echo "KEEP_DB=1: the seeded $DB of an earlier run, its access log emptied"
  # A build from before the log was a row per batch has the table of rows (to compare them).
  psql -X -q "$DATABASE_URL" -c "DO \$\$ BEGIN
      IF to_regclass('dispatch.patient_access_batches') IS NOT NULL THEN DELETE FROM dispatch.patient_access_batches;
      ELSE DELETE FROM dispatch.patient_access_log; END IF; END \$\$" -c "VACUUM ANALYZE"
else
  psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
  "$BIN" seed > /dev/null
  psql -X -q "$DATABASE_URL" -c "VACUUM ANALYZE"
fi
TOKEN=$("$BIN" token --login regulador --ttl 1h)

SERVER=
start() { # BENCH_ACCESS_LOG value: on | off
  BENCH_ACCESS_LOG=$1 "$BIN" serve > "$WORK/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null && return; sleep 0.1; done
  echo "server did not start"; cat "$WORK/server.log"; exit 1
}
# SIGTERM: the server writes what its access log holds before it exits.
stop() { [ -n "$SERVER" ] && kill "$SERVER" && wait "$SERVER" 2> /dev/null || true; SERVER=; }
trap 'stop; rm -rf "$WORK"' EXIT
# CPU ticks (user + system) the service and the benchmark database's backends have used.
ticks() { # -> "service postgres"
  local pg=0 t
  for pid in $(psql -X -qtA "$DATABASE_URL" -c \
      "SELECT pid FROM pg_stat_activity WHERE datname = '$DB' AND pid <> pg_backend_pid()"); do
    t=$(pid_ticks "$pid"); pg=$((pg + t))
  done
  echo "$(pid_ticks "$SERVER") $pg"
}
logged() { psql -X -qtA "$DATABASE_URL" -c "SELECT count(*) FROM dispatch.patient_access_log"; }
# The INSERTs that wrote the log: each is one batch, one row (before, one transaction: its
# rows shared one xmin).
inserts() {
  if [ "$(psql -X -qtA "$DATABASE_URL" -c "SELECT to_regclass('dispatch.patient_access_batches') IS NOT NULL")" = t ]; then
    psql -X -qtA "$DATABASE_URL" -c "SELECT count(*) FROM dispatch.patient_access_batches"
  else
    psql -X -qtA "$DATABASE_URL" -c "SELECT count(DISTINCT xmin::text) FROM dispatch.patient_access_log"
  fi
}

# CPU ms per 1,000 reads from a tick difference: µs per read.
per_1k() { us_per "$@"; }
# Requests wrk counted as answered (all of them, less non-2xx/3xx) in its outputs.
answered() { awk '/requests in/ {n += $1} /Non-2xx/ {n -= $NF} END {print n}' "$@"; }

run() { # mode -> "rps p99 requests service-ms/1k postgres-ms/1k answered-with-warm-up"
  start "$1"
  wrk -t2 -c"$CONNECTIONS" -d3s -H "Authorization: Bearer $TOKEN" \
    -s bench/dispatch/random_incident.lua "http://127.0.0.1:$PORT" > "$WORK/$1-warm-up.txt"
  read -r svc0 pg0 <<< "$(ticks)"; local all0 st0; all0=$(pg_ticks); st0=$(steal); local b0; b0=$(busy)
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "Authorization: Bearer $TOKEN" \
    -s bench/dispatch/random_incident.lua "http://127.0.0.1:$PORT" > "$WORK/$1.txt"
  # The writer may still hold the round's last batch: its cost belongs to the round.
  sleep 0.5
  read -r svc1 pg1 <<< "$(ticks)"; local all1 st1 b1; all1=$(pg_ticks); st1=$(steal); b1=$(busy)
  stop
  local n; n=$(awk '/requests in/ {print $1}' "$WORK/$1.txt")
  echo "$(awk '/Requests\/sec/ {print $2}' "$WORK/$1.txt") $(awk '$1 == "99%" {print $2}' "$WORK/$1.txt") $n" \
    "$(per_1k $((svc1 - svc0)) "$n") $(per_1k $((pg1 - pg0)) "$n")" \
    "$(answered "$WORK/$1-warm-up.txt" "$WORK/$1.txt")" \
    "$(per_1k $((all1 - all0)) "$n") $(per_1k $((b1 - b0 - st1 + st0)) "$n") $(per_1k $((st1 - st0)) "$n")"
}

# One durable commit alone: its latency and PostgreSQL's CPU (the WAL's flush included).
commit_probe() {
  psql -X -q "$DATABASE_URL" -c "CREATE TABLE IF NOT EXISTS bench_commit_probe (x int)"
  echo "INSERT INTO bench_commit_probe VALUES (1);" > "$WORK/commit.sql"
  local p0 p1 out n
  p0=$(pg_ticks)
  out=$(PGOPTIONS="-c synchronous_commit=on" pgbench -n -c 1 -T 5 -M prepared -f "$WORK/commit.sql" "$DATABASE_URL" 2>&1)
  p1=$(pg_ticks)
  n=$(awk '/actually processed/ {print $NF}' <<< "$out" | cut -d/ -f1)
  psql -X -q "$DATABASE_URL" -c "DROP TABLE bench_commit_probe"
  echo "$(awk '/latency average/ {print $4}' <<< "$out") $(us_per $((p1 - p0)) "$n")"
}
read -r commit_ms commit_us <<< "$(commit_probe)"
echo "a durable commit alone (one-row INSERT, one client): $commit_ms ms, $commit_us µs of PostgreSQL's CPU"

echo "clients: $CONNECTIONS; the service's pool: $POOL"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-5s %12s %10s %10s %14s %14s %12s %14s %12s\n' round log "req/s" p99 requests \
  "service ms/1k" "backends ms/1k" "pg all ms/1k" "machine ms/1k" "steal ms/1k"

off_sum=0; on_sum=0; on_requests=0; on_answered=0; off_cpu=0; on_cpu=0; ratios=
before=$(logged); before_inserts=$(inserts)
row() { printf '%-8s %-5s %12s %10s %10s %14s %14s %12s %14s %12s\n' "$@"; }
off_round() {
  read -r rps p99 n svc pg _ all machine st <<< "$(run off)"
  row "$round" off "$rps" "$p99" "$n" "$svc" "$pg" "$all" "$machine" "$st"
  off_cpu=$((off_cpu + machine))
  off_sum=$(awk -v a="$off_sum" -v b="$rps" 'BEGIN {print a + b}'); off_rps=$rps
}
on_round() {
  local start_count answered; start_count=$(logged)
  read -r rps p99 n svc pg answered all machine st <<< "$(run on)"
  row "$round" on "$rps" "$p99" "$n" "$svc" "$pg" "$all" "$machine" "$st"
  on_cpu=$((on_cpu + machine))
  on_sum=$(awk -v a="$on_sum" -v b="$rps" 'BEGIN {print a + b}'); on_rps=$rps
  # wrk's count plus its warm-up: every answered read of the round is an entry (a read
  # still in flight when wrk stops may be answered and recorded too, so at least that many).
  on_requests=$((on_requests + $(logged) - start_count)); on_answered=$((on_answered + answered))
}
# Off then on in odd rounds, on then off in even ones: a machine that slows (or speeds up)
# through a run weighs on both alike.
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then off_round; on_round; else on_round; off_round; fi
  ratios="$ratios $(awk -v on="$on_rps" -v off="$off_rps" 'BEGIN {print on / off}')"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "entries written while on: $on_requests for $on_answered reads answered" \
  "(off rounds wrote $(( $(logged) - before - on_requests )))"
[ "$on_requests" -ge "$on_answered" ] || echo "MISSING: $((on_answered - on_requests)) answered reads not recorded"
# How many entries an INSERT carried while on (each round's last batch is written by its stop).
awk -v e="$on_requests" -v i="$(( $(inserts) - before_inserts ))" 'BEGIN {
  printf "INSERTs while on: %d, %.0f entries each on average\n", i, i ? e / i : 0 }'
awk -v on="$on_sum" -v off="$off_sum" 'BEGIN {
  printf "incident reads, access log on / off = %.3f (target >= 0.9)\n", on / off }'
# The machine's speed drifts over minutes (bench/access_log/README.md): each round's pair
# ran within half a minute, so the median of the rounds' ratios is the steadier figure.
tr ' ' '\n' <<< "$ratios" | sed '/^$/d' | sort -g | awk '{r[NR] = $1} END {
  m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
  printf "median of the rounds'"'"' on / off = %.3f (%d rounds, %.3f to %.3f)\n", m, NR, r[1], r[NR] }'
# On cores of its own (no steal), throughput follows the CPU a read costs the whole machine.
awk -v on="$on_cpu" -v off="$off_cpu" 'BEGIN {
  printf "the machine'"'"'s CPU per read, off / on = %.3f (the ratio the cores allow)\n", off / on }'
