//! The default size of a service's pool, computed from the host: `2 x cores + 1`
//! (HikariCP's "About Pool Sizing", after the PostgreSQL wiki's "Number Of Database
//! Connections": about twice the cores, plus one). `DATABASE_POOL_SIZE` overrides it
//! (docs/operations.md, "Deploying on real PostgreSQL" > "Sizing the pool").
//!
//! The cores are [`std::thread::available_parallelism`]: the CPUs the process may run on,
//! bounded by a cgroup CPU quota (a container's CPU limit, rounded up), so a replica limited
//! to one CPU gets 3 connections on a 64-core node. The formula sizes for a PostgreSQL with
//! as many cores as the service sees (the same host, or one alike): a database on a larger
//! host of its own wants `DATABASE_POOL_SIZE` set.

use std::num::NonZeroUsize;

/// The formula, as `serve --help`, the start-up log and the documentation write it.
pub const FORMULA: &str = "2 x cores + 1";

/// The smallest pool `DATABASE_POOL_SIZE` accepts.
pub const MIN: usize = 1;
/// The largest pool `DATABASE_POOL_SIZE` accepts (and the formula gives).
pub const MAX: usize = 256;

/// [`FORMULA`] for `cores`, within [`MIN`]..=[`MAX`].
pub fn for_cores(cores: usize) -> usize {
    cores.saturating_mul(2).saturating_add(1).clamp(MIN, MAX)
}

/// The cores this process may use ([`std::thread::available_parallelism`]; 1 when it cannot
/// tell).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// The pool size when `DATABASE_POOL_SIZE` is unset: [`for_cores`] of this host's [`cores`].
pub fn default() -> usize {
    for_cores(cores())
}

/// The default as `serve --help` shows it: `2 x cores + 1 = 5 on this host (2 cores)`.
pub fn shown_default() -> String {
    let cores = cores();
    let unit = if cores == 1 { "core" } else { "cores" };
    format!(
        "{FORMULA} = {} on this host ({cores} {unit})",
        for_cores(cores)
    )
}

/// The start-up log's account of the size chosen: where it comes from, so that an operator
/// reading it knows whether the host or `DATABASE_POOL_SIZE` decided.
pub fn chosen(size: usize, is_default: bool) -> String {
    if is_default {
        format!(
            "{size} connections at most (DATABASE_POOL_SIZE unset: {})",
            shown_default()
        )
    } else {
        format!("{size} connections at most (DATABASE_POOL_SIZE)")
    }
}

/// `DATABASE_POOL_SIZE`: a whole number from [`MIN`] to [`MAX`].
pub fn parse(raw: &str) -> Result<usize, String> {
    let size: usize = raw.trim().parse().map_err(|e| format!("{e}"))?;
    if !(MIN..=MAX).contains(&size) {
        return Err(format!("must be between {MIN} and {MAX}"));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twice_the_cores_plus_one() {
        assert_eq!(for_cores(1), 3);
        assert_eq!(for_cores(2), 5);
        assert_eq!(for_cores(4), 9);
        assert_eq!(for_cores(16), 33);
        assert_eq!(for_cores(127), 255);
    }

    #[test]
    fn within_the_bounds_of_the_variable() {
        assert_eq!(for_cores(0), 1);
        assert_eq!(for_cores(128), MAX);
        assert_eq!(for_cores(1_000), MAX);
        assert_eq!(for_cores(usize::MAX), MAX);
    }

    #[test]
    fn the_default_is_the_formula_for_this_host() {
        let n = std::thread::available_parallelism().unwrap().get();
        assert_eq!(cores(), n);
        assert_eq!(default(), (2 * n + 1).min(MAX));
        let shown = shown_default();
        assert!(
            shown.starts_with(&format!("2 x cores + 1 = {} on this host (", default())),
            "{shown}"
        );
        assert!(shown.contains(&format!("({n} core")), "{shown}");
    }

    #[test]
    fn the_log_says_where_the_size_comes_from() {
        assert_eq!(
            chosen(16, false),
            "16 connections at most (DATABASE_POOL_SIZE)"
        );
        assert_eq!(
            chosen(default(), true),
            format!(
                "{} connections at most (DATABASE_POOL_SIZE unset: {})",
                default(),
                shown_default()
            )
        );
    }

    #[test]
    fn parse_takes_1_to_256() {
        assert_eq!(parse("1"), Ok(1));
        assert_eq!(parse(" 16 "), Ok(16));
        assert_eq!(parse("256"), Ok(256));
        for bad in ["0", "257", "-1", "lots", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
