# shellcheck shell=bash
# Shared by the scripts of bench/scale (sourced, not run). From the workspace root.
# Environment: PGURL (server, default postgres://postgres@127.0.0.1:5432), TARGET_DIR
# (cargo target directory of the release binaries, default target-scale).
PGURL=${PGURL:-postgres://postgres@127.0.0.1:5432}
TARGET_DIR=${TARGET_DIR:-${CARGO_TARGET_DIR:-target-scale}}
export HERE=bench/scale
STARTED=$SECONDS

log() { printf '[%4ss] %s\n' "$((SECONDS - STARTED))" "$*" >&2; }

# Release build of both services, as bench/callback does (thin LTO off keeps it short on two
# cores). Always both together: built alone, a crate may unify its dependencies' features
# differently and rebuild them. Cargo does nothing when they are up to date.
build_release() {
  log "cargo build --release -p dispatch-api -p proposal-callback"
  CARGO_TARGET_DIR=$TARGET_DIR CARGO_PROFILE_RELEASE_LTO=off \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo build --release -q -p dispatch-api -p proposal-callback
}

# Only databases named scale_* are created or dropped here.
check_db_name() {
  case $1 in scale_*) ;; *) echo "database name must start with scale_: $1" >&2; exit 2 ;; esac
}
recreate_db() { # name
  check_db_name "$1"
  psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1"
}
drop_db() { # name
  check_db_name "$1"
  psql -X -q "$PGURL/postgres" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"
}
db_exists() { # name
  [ "$(psql -X -At "$PGURL/postgres" -c "SELECT 1 FROM pg_database WHERE datname = '$1'")" = 1 ]
}
