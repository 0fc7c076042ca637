# A private PostgreSQL pinned to one core, for the benchmarks that measure "as production
# runs it" (bench/README.md, "Pinned"): the database on a core of its own, the service and the
# load generator on the other. Sourced; the machine's shared server is never touched.
#   pinned_pg_start CORE PORT   initdb in a temporary directory, start it with every process
#                               on CORE (taskset: its backends inherit it), wait until it
#                               answers, export PGURL=postgres://postgres@127.0.0.1:PORT
#                               and PG_POSTMASTER (its postmaster's pid, for bench/lib/cpu.sh)
#   pinned_pg_stop              stop it (fast) and remove its directory
#   pin CORE COMMAND...         run COMMAND on CORE
# The settings are the Debian package's defaults that matter here (shared_buffers 128MB,
# synchronous_commit and fsync on), plus pg_stat_statements for the per-statement CPU.
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1)}
PINNED_PG_DIR=

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pinned_pg_start() { # core port
  local core=$1 port=$2
  PINNED_PG_DIR=$(mktemp -d /tmp/bench-pg.XXXXXX)
  [ "$(id -u)" = 0 ] && chown postgres "$PINNED_PG_DIR"
  as_postgres "$PG_BIN/initdb" -D "$PINNED_PG_DIR/data" -U postgres --auth=trust -E UTF8 \
    --locale=C.UTF-8 > "$PINNED_PG_DIR/initdb.log" 2>&1 || { cat "$PINNED_PG_DIR/initdb.log"; return 1; }
  as_postgres taskset -c "$core" "$PG_BIN/pg_ctl" -D "$PINNED_PG_DIR/data" -l "$PINNED_PG_DIR/server.log" -w \
    -o "-p $port -k $PINNED_PG_DIR -c listen_addresses=127.0.0.1 -c shared_buffers=128MB \
        -c max_connections=300 -c shared_preload_libraries=pg_stat_statements" start > /dev/null ||
    { cat "$PINNED_PG_DIR/server.log"; return 1; }
  export PGURL=postgres://postgres@127.0.0.1:$port
  # Only this cluster's processes count as PostgreSQL's CPU (bench/lib/cpu.sh).
  PG_POSTMASTER=$(head -1 "$PINNED_PG_DIR/data/postmaster.pid")
  export PG_POSTMASTER
  echo "private PostgreSQL on core $core at $PGURL ($PINNED_PG_DIR)"
}

pinned_pg_stop() {
  [ -n "$PINNED_PG_DIR" ] || return 0
  as_postgres "$PG_BIN/pg_ctl" -D "$PINNED_PG_DIR/data" -m fast -w stop > /dev/null 2>&1 || true
  rm -rf "$PINNED_PG_DIR"
  PINNED_PG_DIR=
}

pin() { local core=$1; shift; taskset -c "$core" "$@"; }
