# Where a core's time goes while a benchmark runs, kept beside its figures (bench/README.md,
# issue 44's table: "what the profile shows"). Sourced:
#   profiled CPUS OUTFILE COMMAND...   runs COMMAND while `perf record` samples every process
#                                      on CPUS (a list: 0,1; 999 Hz, call graphs), then writes to OUTFILE
#                                      the processes' and the functions' shares of the samples
#                                      (`perf report --stdio`, over 0.5 %), the kernel's
#                                      included; COMMAND's exit status is returned.
# Needs `perf` (Debian's linux-perf) and kernel.perf_event_paranoid <= 2 as root; without
# them COMMAND runs unprofiled and OUTFILE says why.
profiled() {
  local cpus=$1 out=$2; shift 2
  local data
  data=$(mktemp /tmp/profile.XXXXXX.data)
  if ! command -v perf > /dev/null; then
    echo "no profile: perf is not installed" > "$out"
    "$@"
    return
  fi
  perf record -q -F 999 -g -C "$cpus" -o "$data" 2> "$data.err" &
  local rec=$! status=0
  sleep 0.5
  "$@" || status=$?
  kill -INT "$rec" 2> /dev/null || true
  wait "$rec" 2> /dev/null || true
  {
    echo "# perf record -F 999 -g -C $cpus during: $*"
    echo "# processes' shares of the samples"
    perf report -i "$data" --stdio --no-children --sort comm --percent-limit 0.5 -g none 2> /dev/null | grep -v "^#\|^$"
    echo "# functions' shares (self), over 0.5 %"
    perf report -i "$data" --stdio --no-children --sort comm,dso,sym --percent-limit 0.5 -g none 2> /dev/null | grep -v "^#\|^$"
  } > "$out" || echo "no profile: $(cat "$data.err")" > "$out"
  rm -f "$data" "$data.err" "$data.old"
  return "$status"
}
