# CPU accounting for the benchmarks (sourced): where a run's CPU went, in clock ticks.
#   busy        the machine's busy ticks, all cores (user, nice, system, irq, softirq, steal)
#   pg_ticks    every PostgreSQL process's ticks on this machine, the backends that have
#               exited included (the postmaster's children's ticks, counted when it reaps them)
#   pid_ticks P the ticks of process P (user + system)
# Differences taken around a run, divided by its requests and CLK_TCK, give µs per request;
# busy less PostgreSQL, the service and the load generator is the kernel's network work on
# loopback and whatever else ran.
CPU_HZ=$(getconf CLK_TCK)
busy() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
pid_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2> /dev/null || echo 0; }
pg_ticks() {
  local total=0 pid ppid t
  while read -r pid ppid; do
    if [ "$ppid" = 1 ] || ! ps -o comm= -p "$ppid" | grep -qx postgres; then
      # The postmaster: its own ticks and its reaped children's.
      t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2> /dev/null || echo 0)
    else
      t=$(pid_ticks "$pid")
    fi
    total=$((total + t))
  done < <(ps -C postgres -o pid=,ppid=)
  echo "$total"
}
# µs per request: ticks, requests.
us_per() { awk -v t="$1" -v n="$2" -v hz="$CPU_HZ" 'BEGIN {printf "%.0f", t * 1e6 / hz / n}'; }
# µs per request from `time`'s "user system" seconds (bash TIMEFORMAT='%U %S'), requests.
us_per_s() { awk -v n="$2" '{printf "%.0f", ($1 + $2) * 1e6 / n}' <<< "$1"; }
