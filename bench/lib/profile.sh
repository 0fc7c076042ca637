# Where the cores' time goes while a benchmark measures, kept beside its figures
# (bench/README.md, issue 44's table: "what the profile shows"). Sourced:
#   profile_start CPUS           `perf record` (999 Hz, call graphs) of every process on CPUS
#                                (a list: 0,1) from now on
#   profile_stop OUTFILE         stops it and writes to OUTFILE the processes' and the
#                                functions' shares of the samples (`perf report --stdio`, over
#                                0.5 %), the kernel's included; run it after a measurement's
#                                CPU figures are read, as the report costs CPU of its own
#   profiled CPUS OUTFILE CMD... both around CMD (a whole part, set-up included); CMD's exit
#                                status is returned
# Needs `perf` (Debian's linux-perf) and kernel.perf_event_paranoid <= 2 as root; without
# them the commands run unprofiled and OUTFILE says why.
PROFILE_PID=
PROFILE_DATA=
PROFILE_WHAT=

profile_start() {
  PROFILE_WHAT="perf record -F 999 -g -C $1"
  command -v perf > /dev/null || { PROFILE_PID=; return 0; }
  PROFILE_DATA=$(mktemp /tmp/profile.XXXXXX.data)
  perf record -q -F 999 -g -C "$1" -o "$PROFILE_DATA" 2> "$PROFILE_DATA.err" &
  PROFILE_PID=$!
  sleep 0.5
}

profile_stop() {
  local out=$1
  if [ -z "$PROFILE_PID" ]; then
    echo "no profile: perf is not installed" > "$out"
    return 0
  fi
  kill -INT "$PROFILE_PID" 2> /dev/null || true
  wait "$PROFILE_PID" 2> /dev/null || true
  PROFILE_PID=
  {
    echo "# $PROFILE_WHAT${PROFILE_LABEL:+ during: $PROFILE_LABEL}"
    echo "# processes' shares of the samples"
    perf report -i "$PROFILE_DATA" --stdio --no-children --sort comm --percent-limit 0.5 -g none 2> /dev/null | grep -v "^#\|^$"
    echo "# functions' shares (self), over 0.5 %"
    perf report -i "$PROFILE_DATA" --stdio --no-children --sort comm,dso,sym --percent-limit 0.5 -g none 2> /dev/null | grep -v "^#\|^$"
  } > "$out" || echo "no profile: $(cat "$PROFILE_DATA.err")" > "$out"
  rm -f "$PROFILE_DATA" "$PROFILE_DATA.err" "$PROFILE_DATA.old"
}

profiled() {
  local cpus=$1 out=$2 status=0; shift 2
  PROFILE_LABEL="$*" profile_start "$cpus"
  "$@" || status=$?
  PROFILE_LABEL="$*" profile_stop "$out"
  return "$status"
}
