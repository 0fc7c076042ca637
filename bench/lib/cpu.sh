# CPU accounting for the benchmarks (sourced): where a run's CPU went, in clock ticks.
#   busy        the machine's busy ticks, all cores (user, nice, system, irq, softirq, steal)
#   steal       the part of busy the host took from this machine's cores
#   pg_ticks    every PostgreSQL process's ticks on this machine, the backends that have
#               exited included (the postmaster's children's ticks, counted when it reaps them);
#               with PG_POSTMASTER=<pid> only that cluster's (a private server, so that other
#               clusters' work on a shared machine is not counted)
#   pid_ticks P the ticks of process P (user + system)
# Differences taken around a run, divided by its requests and CLK_TCK, give µs per request;
# busy less PostgreSQL, the service and the load generator is the kernel's network work on
# loopback and whatever else ran.
CPU_HZ=$(getconf CLK_TCK)
busy() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
# The ticks the machine's cores were taken by its host (steal): part of busy, not of any process.
steal() { awk '$1 == "cpu" {print $9}' /proc/stat; }
pid_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2> /dev/null || echo 0; }
pg_ticks() {
  local total=0 pid postmaster t
  # A postmaster is a postgres process whose parent is not one (one per cluster running).
  while read -r pid postmaster; do
    if [ "$postmaster" = 1 ]; then
      # Its own ticks and its reaped children's.
      t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2> /dev/null || echo 0)
    else
      t=$(pid_ticks "$pid")
    fi
    total=$((total + t))
  done < <(ps -C postgres -o pid=,ppid= | awk -v only="${PG_POSTMASTER:-}" '{pid[NR] = $1; ppid[NR] = $2; is[$1] = 1}
    END {for (i = 1; i <= NR; i++) {
      m = (ppid[i] in is) ? 0 : 1
      if (only == "" || pid[i] == only || ppid[i] == only) print pid[i], m
    }}')
  echo "$total"
}
# Ticks of the rest of the machine: busy, PostgreSQL's and the service's ticks, then the load
# generator's "user system" seconds (bash TIMEFORMAT='%U %S').
rest_ticks() { awk -v b="$1" -v p="$2" -v s="$3" -v hz="$CPU_HZ" '{printf "%.0f", b - p - s - ($1 + $2) * hz}' <<< "$4"; }
# µs per request: ticks, requests.
us_per() { awk -v t="$1" -v n="$2" -v hz="$CPU_HZ" 'BEGIN {printf "%.0f", t * 1e6 / hz / n}'; }
# µs per request from `time`'s "user system" seconds (bash TIMEFORMAT='%U %S'), requests.
us_per_s() { awk -v n="$2" '{printf "%.0f", ($1 + $2) * 1e6 / n}' <<< "$1"; }
