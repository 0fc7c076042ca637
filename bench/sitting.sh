#!/usr/bin/env bash
# The whole performance sitting in one command (bench/README.md, "The targets, pinned"): every
# target of the table, one after another, with PostgreSQL as production runs it, on a core of
# its own. Run by hand on an otherwise idle machine (not a test; it takes about an hour
# once the release builds exist). From the workspace root:
#   bench/sitting.sh                       # every part
#   ONLY=detail,access_log bench/sitting.sh
# A private PostgreSQL (bench/lib/pinned.sh) runs on PG_CORE (0); each part's services and
# load generators run on APP_CORE (1) (taskset: their children inherit it, pgbench's client
# included). The fan-out puts its replicas on PG_CORE beside the database (which does one
# write per round there) and its client on APP_CORE. The report runs on the shared server's
# 2 M database (bench/scale/build-dispatch.sh), where that database is; it is not pinned.
# Each part's whole output is kept in OUT (default a new /tmp directory); a summary of the
# lines that carry the ratios is printed at the end.
# Parts: detail (search against the constant route, incident detail against pgbench:
# dispatch/run.sh), service_cpu (dispatch/service_cpu.sh), instructions (dispatch/callgrind.sh,
# the search and the incident detail), callbacks (callback/run.sh), access_log
# (access_log/run.sh at 32 and 256 connections), fanout (dispatch/ws_fanout.sh, 1,000 and
# 5,000 subscribers), idle_memory (dispatch/ws_idle_memory.sh), report (scale/report.sh),
# soak (soak/run.sh, SOAK_MINUTES (10) with 5,000 idle sockets).
# PROFILE=1 also samples both cores with perf while each part runs (bench/lib/profile.sh; the
# detail part only during its measured runs) and keeps where the time went in
# OUT/NAME.profile.txt (perf costs the parts a few per cent).
# Environment: PG_CORE, APP_CORE, PG_PORT (55432), ONLY, OUT, PROFILE, SHARED_PGURL (the report's
# server, default postgres://postgres@127.0.0.1:5432), SOAK_MINUTES, BIN (a release build of
# dispatch-api with the `bench` feature to measure instead of building one; then the
# fan-out's client is not built either, and the fan-out needs CLIENT), CALLBACK_BIN (a release
# build of proposal-callback for the callbacks, instead of building one).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/pinned.sh
source bench/lib/profile.sh
PG_CORE=${PG_CORE:-0}
APP_CORE=${APP_CORE:-1}
PG_PORT=${PG_PORT:-55432}
ONLY=${ONLY:-detail,service_cpu,instructions,callbacks,access_log,fanout,idle_memory,report,soak}
OUT=${OUT:-$(mktemp -d /tmp/sitting.XXXXXX)}
SHARED_PGURL=${SHARED_PGURL:-postgres://postgres@127.0.0.1:5432}
SOAK_MINUTES=${SOAK_MINUTES:-10}
mkdir -p "$OUT"

wanted() { [[ ",$ONLY," == *",$1,"* ]]; }
# part NAME COMMAND...: runs it, its output into OUT/NAME.txt and to the terminal.
part() {
  local name=$1; shift
  echo "=== $name: $* (load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S) UTC)" | tee -a "$OUT/summary.txt"
  # The detail part profiles only its measured runs itself (dispatch/run.sh, PROFILE_DIR).
  if [ "${PROFILE:-}" = 1 ] && [ "$name" != detail ]; then set -- profiled "$PG_CORE,$APP_CORE" "$OUT/$name.profile.txt" "$@"; fi
  if ! "$@" 2>&1 | tee "$OUT/$name.txt"; then echo "part $name failed" | tee -a "$OUT/summary.txt"; fi
}

echo "sitting of $(git rev-parse --short HEAD) on $(nproc) cores; PostgreSQL on core $PG_CORE, the rest on core $APP_CORE; output in $OUT"
# The release builds first, so no part's build runs while another part measures.
if [ -n "${BIN:-}" ]; then
  DBIN=$BIN
  unset BIN
elif wanted detail || wanted service_cpu || wanted instructions || wanted access_log || wanted fanout || wanted idle_memory; then
  CARGO_TARGET_DIR=target-dispatch cargo build --release -q -p dispatch-api --features bench --bin dispatch-api --example ws_fanout
  DBIN=$PWD/target-dispatch/release/dispatch-api
fi

trap pinned_pg_stop EXIT
pinned_pg_start "$PG_CORE" "$PG_PORT"

profile_dir=(); [ "${PROFILE:-}" = 1 ] && profile_dir=(PROFILE_DIR="$OUT" PROFILE_CPUS="$PG_CORE,$APP_CORE")
wanted detail && part detail pin "$APP_CORE" env BIN="$DBIN" "${profile_dir[@]}" bench/dispatch/run.sh
wanted service_cpu && part service_cpu pin "$APP_CORE" env BIN="$DBIN" bench/dispatch/service_cpu.sh
if wanted instructions; then
  # Each keeps its callgrind dumps in a directory of its own (callgrind.sh empties its OUT).
  part instructions_search env BIN="$DBIN" OUT="$OUT/instructions_search" bench/dispatch/callgrind.sh
  part instructions_detail env BIN="$DBIN" OUT="$OUT/instructions_detail" ROUTE=/incident/40 bench/dispatch/callgrind.sh
fi
wanted callbacks && part callbacks pin "$APP_CORE" env ${CALLBACK_BIN:+BIN="$CALLBACK_BIN"} bench/callback/run.sh
if wanted access_log; then
  part access_log_32 pin "$APP_CORE" env BIN="$DBIN" CONNECTIONS=32 ROUNDS=3 bench/access_log/run.sh
  part access_log_256 pin "$APP_CORE" env BIN="$DBIN" KEEP_DB=1 CONNECTIONS=256 ROUNDS=3 bench/access_log/run.sh
fi
wanted fanout && part fanout env BIN="$DBIN" CLIENT="${CLIENT:-$PWD/target-dispatch/release/examples/ws_fanout}" \
  REPLICA_CPUS="$PG_CORE" CLIENT_CPUS="$APP_CORE" bench/dispatch/ws_fanout.sh
wanted idle_memory && part idle_memory pin "$APP_CORE" env BIN="$DBIN" bench/dispatch/ws_idle_memory.sh
wanted report && part report env PGURL="$SHARED_PGURL" bench/scale/report.sh
wanted soak && part soak pin "$APP_CORE" env MINUTES="$SOAK_MINUTES" IDLE_SOCKETS=5000 bench/soak/run.sh

echo
echo "== summary (whole outputs in $OUT)"
grep -hiE "^=== |ratio|on / off|/ healthz|per request|per callback|p99|slope|kB per|failed" "$OUT"/summary.txt "$OUT"/*.txt 2> /dev/null | sort -u | head -80
