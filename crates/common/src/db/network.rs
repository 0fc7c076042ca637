//! How long a database round trip may go unanswered: `DATABASE_TIMEOUT` (docs/operations.md,
//! "Network faults").
//!
//! A link that drops everything (a partition, a dead peer, a firewall that forgot the
//! connection) gives no error of its own: without a bound, a query waits for the kernel's TCP
//! retries (about 15 minutes). So every connection the services open (the pool's, the
//! `LISTEN` connection, the migrations') is made by [`super::tls::connect`], which applies
//! [`apply`] to the driver's configuration:
//! - `TCP_USER_TIMEOUT` = the bound: data sent and not acknowledged for that long makes the
//!   kernel drop the connection, so the waiting statement fails ("connection closed"), the
//!   request answers 503 `unavailable` and the broken connection is discarded by the pool
//!   (`is_broken`), never handed out again;
//! - TCP keepalive after 1 s of silence, every 1 s: a statement whose request was
//!   acknowledged but whose answer never comes is caught too (the unanswered probes count
//!   against `TCP_USER_TIMEOUT` on Linux, against `keepalives_retries` elsewhere);
//! - a connect timeout of at most the bound.
//!
//! Settings given in the URL itself (libpq's `tcp_user_timeout`, `keepalives_idle`,
//! `connect_timeout`, ...) win over these defaults. The `LISTEN` connection's heartbeat uses
//! the same bound as its deadline (`crate::listen`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The default of `DATABASE_TIMEOUT`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Silence before the first keepalive probe, and between probes.
const KEEPALIVE: Duration = Duration::from_secs(1);

/// The bound in milliseconds; one per process (every pool and listener of it).
static TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64);

/// Sets the bound for the connections opened from now on (a service's start, from
/// `DATABASE_TIMEOUT`).
pub fn set_timeout(bound: Duration) {
    let ms = u64::try_from(bound.as_millis())
        .unwrap_or(u64::MAX)
        .max(100);
    TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

/// How long a database round trip may go unanswered before its connection is dropped.
pub fn timeout() -> Duration {
    Duration::from_millis(TIMEOUT_MS.load(Ordering::Relaxed))
}

/// Parses `DATABASE_TIMEOUT`: a duration from 100 ms to 10 minutes.
pub fn parse(raw: &str) -> Result<Duration, String> {
    let d = crate::config::duration(raw)?;
    if d < Duration::from_millis(100) || d > Duration::from_secs(600) {
        return Err("must be from 100ms to 10m".into());
    }
    Ok(d)
}

/// The socket options of the bound on `config`, except those its URL set.
pub fn apply(config: &mut tokio_postgres::Config) {
    let bound = timeout();
    // `keepalives=0` in the URL is the operator's choice (the driver's default is on).
    let keepalives = config.get_keepalives();
    if keepalives && config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
        config.keepalives_idle(KEEPALIVE.min(bound));
    }
    if keepalives && config.get_keepalives_interval().is_none() {
        config.keepalives_interval(KEEPALIVE.min(bound));
    }
    if keepalives && config.get_keepalives_retries().is_none() {
        let probes = (bound.as_millis() / KEEPALIVE.as_millis()).clamp(1, 10) as u32;
        config.keepalives_retries(probes);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(bound);
    }
    match config.get_connect_timeout() {
        Some(given) if *given <= bound => {}
        Some(_) | None => {
            config.connect_timeout(bound);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn the_bound_sets_the_sockets_options_unless_the_url_does() {
        let mut config = tokio_postgres::Config::from_str("postgres://u@h/d").unwrap();
        apply(&mut config);
        assert_eq!(config.get_tcp_user_timeout(), Some(&timeout()));
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(1));
        assert_eq!(
            config.get_keepalives_interval(),
            Some(Duration::from_secs(1))
        );
        assert_eq!(config.get_connect_timeout(), Some(&timeout()));
        let mut config = tokio_postgres::Config::from_str(
            "postgres://u@h/d?tcp_user_timeout=9&keepalives_idle=30&connect_timeout=1",
        )
        .unwrap();
        apply(&mut config);
        assert_eq!(config.get_tcp_user_timeout(), Some(&Duration::from_secs(9)));
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(30));
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(1)));
    }

    #[test]
    fn the_bound_is_a_duration_within_reason() {
        assert_eq!(parse("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse("750ms"), Ok(Duration::from_millis(750)));
        assert!(parse("10ms").is_err());
        assert!(parse("1h").is_err());
        assert!(parse("soon").is_err());
    }
}
