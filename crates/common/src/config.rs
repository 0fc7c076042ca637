//! Where settings come from ([`Source`]), how a secret is read from a file (`NAME_FILE`), the
//! errors that name a variable, and the configuration every service starts with. The
//! variables themselves are declared in [`crate::settings`]; every error names the variable.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use secrecy::SecretString;

/// Where configuration values come from: the process environment in production, a map in tests.
pub trait Source {
    fn get(&self, name: &str) -> Option<String>;
}

/// A fixed set of variables, as a [`Source`]: for tests, and for tools that take settings
/// from somewhere other than the environment.
pub fn vars(pairs: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The process environment. An empty value counts as unset.
pub struct Env;

impl Source for Env {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

impl<S: std::hash::BuildHasher> Source for std::collections::HashMap<String, String, S> {
    fn get(&self, name: &str) -> Option<String> {
        std::collections::HashMap::get(self, name)
            .filter(|v| !v.is_empty())
            .cloned()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("environment variable {name} is required: {hint}")]
    Missing { name: String, hint: String },
    #[error("environment variable {name} is invalid: {reason}")]
    Invalid { name: String, reason: String },
}

/// A secret given either directly (`NAME`) or as a path to a mounted file (`NAME_FILE`).
pub fn secret(src: &dyn Source, name: &str) -> Result<Option<SecretString>, ConfigError> {
    if let Some(v) = src.get(name) {
        return Ok(Some(SecretString::from(v)));
    }
    let file_var = format!("{name}_FILE");
    match src.get(&file_var) {
        None => Ok(None),
        Some(path) => std::fs::read_to_string(&path)
            .map(|s| {
                Some(SecretString::from(
                    s.trim_end_matches(['\n', '\r']).to_owned(),
                ))
            })
            .map_err(|e| ConfigError::Invalid {
                name: file_var,
                reason: format!("cannot read {path}: {e}"),
            }),
    }
}

/// A secret given as `NAME`, or as `NAME_FILE` naming a mounted file, that may be absent.
/// Unlike [`secret`], a `NAME_FILE` whose file does not exist (an optional Kubernetes secret
/// that is not mounted) or is empty counts as not configured, with a warning; a file that
/// exists but cannot be read is still an error.
pub fn optional_secret(src: &dyn Source, name: &str) -> Result<Option<SecretString>, ConfigError> {
    if let Some(v) = src.get(name) {
        return Ok(Some(SecretString::from(v)));
    }
    let file_var = format!("{name}_FILE");
    let Some(path) = src.get(&file_var) else {
        return Ok(None);
    };
    match std::fs::read_to_string(&path) {
        Ok(s) => {
            let s = s.trim_end_matches(['\n', '\r']);
            if s.is_empty() {
                tracing::warn!(variable = %file_var, %path, "the file is empty: counted as not configured");
                Ok(None)
            } else {
                Ok(Some(SecretString::from(s.to_owned())))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            tracing::warn!(variable = %file_var, %path, "the file does not exist: counted as not configured");
            Ok(None)
        }
        Err(e) => Err(ConfigError::Invalid {
            name: file_var,
            reason: format!("cannot read {path}: {e}"),
        }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Json,
    Pretty,
}

impl FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(Self::Json),
            "pretty" => Ok(Self::Pretty),
            other => Err(format!("{other:?} is neither json nor pretty")),
        }
    }
}

/// `DATABASE_POOL_MODE`: what hands out the connections of `DATABASE_URL` (`crate::db::pool_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolMode {
    /// Every connection of the pool is a session of its own: PostgreSQL itself, or a pooler
    /// in session mode. Statements are prepared once per connection and cached.
    #[default]
    Session,
    /// A transaction pooler: the pool keeps no state between statements.
    Transaction,
}

impl PoolMode {
    /// The URL for `LISTEN` and the migrations: `DATABASE_DIRECT_URL`, or `DATABASE_URL` when
    /// the pool's own connections are sessions. Behind a transaction pooler a direct URL is
    /// required and must differ from `DATABASE_URL`: through the pooler, `LISTEN` would hear
    /// nothing and the migrations' lock could outlive them.
    pub fn direct_url(
        self,
        database_url: &str,
        direct: Option<String>,
    ) -> Result<String, ConfigError> {
        match (self, direct) {
            (Self::Session, direct) => Ok(direct.unwrap_or_else(|| database_url.to_owned())),
            (Self::Transaction, None) => Err(ConfigError::Missing {
                name: "DATABASE_DIRECT_URL".into(),
                hint: "DATABASE_POOL_MODE=transaction: LISTEN and the migrations' lock need a \
                       connection that is a session of its own; set DATABASE_DIRECT_URL to \
                       PostgreSQL itself (or to a pooler in session mode)"
                    .into(),
            }),
            (Self::Transaction, Some(direct)) if direct == database_url => {
                Err(ConfigError::Invalid {
                    name: "DATABASE_DIRECT_URL".into(),
                    reason: "is DATABASE_URL, the transaction pooler; it must reach PostgreSQL \
                             itself (or a pooler in session mode)"
                        .into(),
                })
            }
            (Self::Transaction, Some(direct)) => Ok(direct),
        }
    }
}

impl FromStr for PoolMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "session" => Ok(Self::Session),
            "transaction" => Ok(Self::Transaction),
            other => Err(format!("{other:?} is neither session nor transaction")),
        }
    }
}

impl fmt::Display for PoolMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Session => "session",
            Self::Transaction => "transaction",
        })
    }
}

/// A well-known key for `serve --dev`: never used unless asked for, and logged loudly when it is.
pub const DEV_JWT_SECRET: &str = "dev-only-insecure-jwt-secret-do-not-deploy-0123456789";

/// What every service needs to start, read by [`crate::settings::CommonSettings`].
pub struct CommonConfig {
    pub database_url: String,
    /// `DATABASE_URL` is unset, so `database_url` is [`DEFAULT_DATABASE_URL`] (which errors
    /// about the database say).
    pub database_url_is_default: bool,
    pub bind: String,
    pub jwt_secret: SecretString,
    pub log_format: LogFormat,
    /// `RUST_LOG`: which events are logged (tracing's EnvFilter syntax).
    pub log_filter: String,
    /// `DATABASE_POOL_SIZE`, or [`crate::db::pool_size::default`] when unset.
    pub pool_size: usize,
    /// `DATABASE_POOL_SIZE` is unset, so `pool_size` is computed from the host.
    pub pool_size_is_default: bool,
    /// `DATABASE_POOL_MODE`: what hands out the connections of `database_url`.
    pub pool_mode: PoolMode,
    /// `DATABASE_DIRECT_URL`, or `database_url` when unset: a connection that is a session of
    /// its own, for `LISTEN` and the migrations' lock ([`PoolMode`]).
    pub direct_url: String,
    /// `DATABASE_TIMEOUT`: how long a database round trip may go unanswered
    /// (`crate::db::network`).
    pub database_timeout: Duration,
    pub dev: bool,
}

pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A duration: a number and a unit (`ms`, `s`, `m`, `h`, `d`), such as `500ms`, `30s`, `15m`,
/// `12h` or `90d`; several may follow each other (`1h30m`). A value too large for a
/// [`Duration`] is refused, not wrapped.
pub fn duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let units = raw
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|unit| !unit.is_empty());
    for unit in units {
        if !matches!(unit, "ms" | "s" | "m" | "h" | "d") {
            return Err(format!("{raw:?} has an unknown unit (ms, s, m, h, d)"));
        }
    }
    humantime::parse_duration(raw).map_err(|e| format!("{raw:?}: {e} (units: ms, s, m, h, d)"))
}

/// A [`duration`] other than zero.
pub fn positive_duration(raw: &str) -> Result<Duration, String> {
    match duration(raw)? {
        d if d.is_zero() => Err("must be more than zero".into()),
        d => Ok(d),
    }
}

/// A token's lifetime: a [`duration`] of at least one second.
pub fn lifetime(raw: &str) -> Result<Duration, String> {
    match duration(raw)? {
        d if d.as_secs() == 0 => Err("must be at least 1 s".into()),
        d => Ok(d),
    }
}

/// How [`duration`] writes `d`, in the largest unit that divides it: `12h`, `10m`, `500ms`.
/// The defaults of duration settings are written with it.
pub fn show(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ] {
        if ms != 0 && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}
