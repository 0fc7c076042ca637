//! Settings: every environment variable a service reads, declared once as a typed struct
//! deriving [`clap::Args`] (each field's `env` names its variable, its `default_value` is its
//! default, its `value_parser` checks it), and read once, at start (docs/operations.md,
//! "Configuration").
//!
//! - Each service has one `settings::Settings` that flattens the shared [`CommonSettings`] in,
//!   with its own parts (the identity provider's [`IdpSettings`], its email, its CORS...).
//! - [`FromSource::from_source`] reads any such struct from a [`Source`]: the process
//!   environment in production ([`FromSource::from_env`]), a map in tests
//!   ([`crate::config::vars`]). The same clap definitions check both; the process
//!   environment is never read behind the source's back, and a variable set to an empty
//!   value counts as unset.
//! - A secret (a field under the [`SECRETS`] or [`OPTIONAL_SECRETS`] heading) may instead be
//!   given as `NAME_FILE`, the path of a file holding it (a mounted Kubernetes secret): see
//!   [`crate::config::secret`] and [`crate::config::optional_secret`]. Its value never
//!   appears in an error.
//! - Every error names the variable ([`ConfigError`]).
//! - `<service> serve --help` lists every variable with its default ([`help`]).
//! - Durations are written `500ms`, `30s`, `15m`, `12h`, `90d` ([`duration`], by
//!   [humantime](https://docs.rs/humantime)).

use std::convert::Infallible;
use std::fmt::Write as _;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Command, FromArgMatches};
use secrecy::{ExposeSecret, SecretString};

use crate::auth::MIN_SECRET_BYTES;
use crate::auth::idp::{self, IdpConfig};
use crate::config::{
    CommonConfig, ConfigError, DEFAULT_DATABASE_URL, DEV_JWT_SECRET, Env, LogFormat, PoolMode,
    Source, optional_secret, secret as secret_file,
};
use crate::db::pool_size;
// The duration parsers live with the plain types (`config`), so the pages' session rules
// (plumbing) can declare their settings too; re-exported here, where settings are declared.
pub use crate::config::{duration, lifetime, positive_duration, show};

#[cfg(test)]
mod tests;

/// The help heading of secrets: each may be given as `NAME` or as `NAME_FILE`, and a
/// `NAME_FILE` that cannot be read is an error naming it.
pub const SECRETS: &str =
    "Secrets (each may instead be given as NAME_FILE, the path of a file holding it)";

/// The help heading of secrets that may be absent: as [`SECRETS`], but a `NAME_FILE` whose
/// file does not exist (an optional Kubernetes secret not mounted) or is empty counts as unset.
pub const OPTIONAL_SECRETS: &str = "Optional secrets (each may instead be given as NAME_FILE; a file that is missing or empty counts as unset)";

/// `RUST_LOG` when unset.
pub const DEFAULT_LOG_FILTER: &str = "info";

/// A settings struct ([`clap::Args`]) read from a [`Source`].
pub trait FromSource: Args + FromArgMatches + Sized {
    /// Reads the settings from `src`; see [`from_source`].
    fn from_source(src: &dyn Source) -> Result<Self, ConfigError> {
        from_source(src)
    }

    /// Reads the settings from the process environment.
    fn from_env() -> Result<Self, ConfigError> {
        from_source(&Env)
    }

    /// Every variable these settings read: each argument's, and `NAME_FILE` for each secret.
    fn variables() -> Vec<String> {
        variables(&command::<Self>())
    }
}

impl<T: Args + FromArgMatches> FromSource for T {}

/// The settings `T` as a clap command, its arguments carrying their variables' names.
pub fn command<T: Args>() -> Command {
    T::augment_args(Command::new("settings"))
}

/// Reads `T` from `src`: each argument's variable (its `env`) is looked up in `src` (a secret
/// also as `NAME_FILE`), and the values found are parsed, checked and defaulted by clap as a
/// command line would be. Every error names the variable.
pub fn from_source<T: Args + FromArgMatches>(src: &dyn Source) -> Result<T, ConfigError> {
    let mut command = T::augment_args(
        Command::new("settings")
            .no_binary_name(true)
            .disable_help_flag(true)
            .disable_version_flag(true),
    );
    let mut names = Vec::new();
    let mut args = Vec::new();
    for arg in command.get_arguments() {
        let (Some(name), Some(long)) = (arg.get_env().and_then(|n| n.to_str()), arg.get_long())
        else {
            continue;
        };
        let secret = is_secret(arg);
        names.push(Variable {
            long: long.to_owned(),
            name: name.to_owned(),
            secret,
        });
        let value = match src.get(name) {
            Some(value) => Some(value),
            None => match arg.get_help_heading() {
                Some(SECRETS) => secret_file(src, name)?.map(|s| s.expose_secret().to_owned()),
                Some(OPTIONAL_SECRETS) => {
                    optional_secret(src, name)?.map(|s| s.expose_secret().to_owned())
                }
                _ => None,
            },
        };
        if let Some(value) = value {
            args.push(format!("--{long}={value}"));
        }
    }
    // clap reads the process environment itself for an argument with `env`: the source is
    // the only reader here.
    command = command.mut_args(|arg| arg.env(None));
    let matches = command
        .try_get_matches_from_mut(args)
        .map_err(|e| config_error(&e, &names))?;
    T::from_arg_matches(&matches).map_err(|e| config_error(&e, &names))
}

struct Variable {
    long: String,
    name: String,
    secret: bool,
}

fn is_secret(arg: &clap::Arg) -> bool {
    matches!(arg.get_help_heading(), Some(SECRETS | OPTIONAL_SECRETS))
}

/// clap's error as ours, naming the variable of the argument it is about (and the value,
/// unless it is a secret).
fn config_error(e: &clap::Error, variables: &[Variable]) -> ConfigError {
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => Some(arg.as_str()),
        Some(ContextValue::Strings(args)) => args.first().map(String::as_str),
        _ => None,
    };
    let flag = arg.and_then(|a| a.split([' ', '=']).next()).unwrap_or("");
    let variable = variables.iter().find(|v| flag == format!("--{}", v.long));
    let name = variable.map_or_else(|| flag.to_owned(), |v| v.name.clone());
    if e.kind() == ErrorKind::MissingRequiredArgument {
        return ConfigError::Missing {
            name,
            hint: "it has no default".into(),
        };
    }
    let cause = std::error::Error::source(e).map_or_else(
        || e.kind().as_str().unwrap_or("invalid").to_owned(),
        ToString::to_string,
    );
    let reason = match e.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(value)) if !variable.is_some_and(|v| v.secret) => {
            format!("{value:?}: {cause}")
        }
        _ => cause,
    };
    ConfigError::Invalid { name, reason }
}

/// Every variable `command`'s arguments read, in their order: the argument's `env`, and
/// `NAME_FILE` after each secret.
pub fn variables(command: &Command) -> Vec<String> {
    let mut names = Vec::new();
    for arg in command.get_arguments() {
        if let Some(name) = arg.get_env().and_then(|n| n.to_str()) {
            names.push(name.to_owned());
            if is_secret(arg) {
                names.push(format!("{name}_FILE"));
            }
        }
    }
    names
}

/// The variables of `command` as help text: each variable (with its `NAME_FILE` for a
/// secret), its default, and its help line, secrets last under their headings. `defaults`
/// names defaults that are the service's rather than the setting's (`BIND`). `serve --help`
/// shows it.
pub fn help(command: &Command, defaults: &[(&str, &str)]) -> String {
    let mut text = String::from("Configuration (environment variables):\n");
    let mut headings: Vec<Option<&str>> = vec![None];
    for arg in command.get_arguments() {
        if !headings.contains(&arg.get_help_heading()) {
            headings.push(arg.get_help_heading());
        }
    }
    for heading in headings {
        if let Some(h) = heading {
            let _ = write!(text, "\n{h}:\n");
        }
        let args = command
            .get_arguments()
            .filter(|arg| arg.get_help_heading() == heading);
        for arg in args {
            let Some(name) = arg.get_env().and_then(|n| n.to_str()) else {
                continue;
            };
            let _ = write!(text, "  {name}");
            if is_secret(arg) {
                let _ = write!(text, " or {name}_FILE");
            }
            let mut default: Vec<_> = arg
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect();
            if let Some((_, value)) = defaults.iter().find(|(n, _)| *n == name) {
                default = vec![(*value).to_owned()];
            }
            if !default.is_empty() {
                let _ = write!(text, " [default: {}]", default.join(","));
            }
            text.push('\n');
            if let Some(line) = arg.get_help() {
                let _ = writeln!(text, "          {line}");
            }
        }
    }
    text
}

/// A secret's text, as a [`SecretString`] (never shown by `Debug`).
pub fn secret(raw: &str) -> Result<SecretString, Infallible> {
    Ok(SecretString::from(raw.to_owned()))
}

/// What every service reads: the database, the address, the signing secret, the logs.
#[derive(Debug, Clone, Args)]
pub struct CommonSettings {
    // The help line names the default, which `database_url_is_default` must tell from a value.
    // TLS is set in the URL itself, as libpq's query parameters `sslmode`, `sslrootcert`,
    // `sslcert`, `sslkey` (`common::db::tls`; docs/operations.md, "Deploying on real
    // PostgreSQL").
    #[arg(long, env = "DATABASE_URL", help = format!(
        "PostgreSQL URL (dispatch-api uses schema `dispatch`, proposal-callback schema \
         `proposal`; one database may hold both) [default: {DEFAULT_DATABASE_URL}]"
    ))]
    pub database_url: Option<String>,

    // Unset: `db::pool_size::default()`, computed from the host, which the help line shows.
    #[arg(long, env = "DATABASE_POOL_SIZE", value_parser = pool_size::parse, help = format!(
        "Connections in the pool, opened on demand (1 to 256) [default: {}]",
        pool_size::shown_default()
    ))]
    pub database_pool_size: Option<usize>,

    /// What hands out the connections of DATABASE_URL: `session` (PostgreSQL itself, or a pooler in session mode) or `transaction` (a transaction pooler: PgBouncer's `pool_mode = transaction`, RDS Proxy); `transaction` needs DATABASE_DIRECT_URL
    #[arg(long, env = "DATABASE_POOL_MODE", default_value = "session")]
    pub database_pool_mode: PoolMode,

    /// A URL that reaches PostgreSQL as a session of its own (directly, or through a session-mode pooler), for `LISTEN` and the migrations' lock [default: DATABASE_URL]
    #[arg(long, env = "DATABASE_DIRECT_URL")]
    pub database_direct_url: Option<String>,

    /// How long a database round trip may go unanswered (a partition, a dead peer) before its connection is dropped and the request answers 503: TCP_USER_TIMEOUT, keepalive and connect timeout of every connection, and the deadline of the listener's heartbeat (100ms to 10m)
    #[arg(long, env = "DATABASE_TIMEOUT", default_value = "5s", value_parser = crate::db::network::parse)]
    pub database_timeout: Duration,

    /// Listen address (host:port)
    #[arg(long, env = "BIND")]
    pub bind: Option<String>,

    /// Log format: `json` (one object per line) or `pretty` [default: pretty on a terminal, json otherwise]
    #[arg(long, env = "LOG_FORMAT")]
    pub log_format: Option<LogFormat>,

    /// Log filter in tracing's EnvFilter syntax (e.g. info,dispatch_api=debug)
    #[arg(long, env = "RUST_LOG", default_value = DEFAULT_LOG_FILTER)]
    pub rust_log: String,

    /// HS256 key of the service's tokens, at least 32 bytes (`openssl rand -base64 48`); `serve --dev` stands in a public development key when unset
    #[arg(long, env = "JWT_SECRET", help_heading = SECRETS, value_parser = secret)]
    pub jwt_secret: Option<SecretString>,
}

impl CommonSettings {
    /// The configuration every command runs with: `BIND` defaults to `default_bind`; without
    /// `JWT_SECRET`, `dev` lets the development key stand in, otherwise it is an error.
    pub fn config(self, default_bind: &str, dev: bool) -> Result<CommonConfig, ConfigError> {
        let jwt_secret = match self.jwt_secret {
            Some(s) if s.expose_secret().len() < MIN_SECRET_BYTES => {
                return Err(ConfigError::Invalid {
                    name: "JWT_SECRET".into(),
                    reason: format!("must be at least {MIN_SECRET_BYTES} bytes"),
                });
            }
            Some(s) => s,
            None if dev => SecretString::from(DEV_JWT_SECRET),
            None => {
                return Err(ConfigError::Missing {
                    name: "JWT_SECRET".into(),
                    hint: format!(
                        "an HS256 key of at least {MIN_SECRET_BYTES} bytes (or run `serve --dev`)"
                    ),
                });
            }
        };
        let log_format = self.log_format.unwrap_or_else(|| {
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                LogFormat::Pretty
            } else {
                LogFormat::Json
            }
        });
        let database_url = self
            .database_url
            .clone()
            .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        let direct_url = PoolMode::direct_url(
            self.database_pool_mode,
            &database_url,
            self.database_direct_url,
        )?;
        Ok(CommonConfig {
            database_url_is_default: self.database_url.is_none(),
            database_url,
            pool_mode: self.database_pool_mode,
            direct_url,
            database_timeout: self.database_timeout,
            bind: self.bind.unwrap_or_else(|| default_bind.to_owned()),
            jwt_secret,
            log_format,
            log_filter: self.rust_log,
            pool_size_is_default: self.database_pool_size.is_none(),
            pool_size: self.database_pool_size.unwrap_or_else(pool_size::default),
            dev,
        })
    }
}

/// The identity provider whose tokens a service accepts beside its own (`common::auth::idp`).
#[derive(Debug, Clone, Args)]
pub struct IdpSettings {
    /// The identity provider's key set (JWKS) URL: https://, or http:// to a loopback address. Unset (with JWT_ISSUER and JWT_AUDIENCE): no identity provider
    #[arg(long, env = "JWT_JWKS_URL")]
    pub jwt_jwks_url: Option<String>,

    /// The `iss` of the identity provider's tokens (required with JWT_JWKS_URL)
    #[arg(long, env = "JWT_ISSUER")]
    pub jwt_issuer: Option<String>,

    /// The `aud` the identity provider's tokens carry for this service (required with JWT_JWKS_URL)
    #[arg(long, env = "JWT_AUDIENCE")]
    pub jwt_audience: Option<String>,

    /// The claim of the identity provider's tokens naming the user
    #[arg(long, env = "JWT_USER_CLAIM", default_value = idp::DEFAULT_USER_CLAIM)]
    pub jwt_user_claim: String,

    /// The limit on one fetch of the key set, connection included
    #[arg(long, env = "JWT_JWKS_TIMEOUT", default_value = show(idp::DEFAULT_FETCH_TIMEOUT), value_parser = positive_duration)]
    pub jwt_jwks_timeout: Duration,

    /// The least time between two fetches of the key set
    #[arg(long, env = "JWT_JWKS_MIN_REFRESH", default_value = show(idp::DEFAULT_MIN_REFRESH), value_parser = duration)]
    pub jwt_jwks_min_refresh: Duration,

    /// How long a fetched key set is used before it is fetched again
    #[arg(long, env = "JWT_JWKS_CACHE_TTL", default_value = show(idp::DEFAULT_CACHE_TTL), value_parser = duration)]
    pub jwt_jwks_cache_ttl: Duration,
}

impl IdpSettings {
    /// `None` when `JWT_JWKS_URL` is unset and so are `JWT_ISSUER` and `JWT_AUDIENCE` (only
    /// the service's own tokens are accepted). With `JWT_JWKS_URL` set, `JWT_ISSUER` and
    /// `JWT_AUDIENCE` are required. Its tokens live at most `max_lifetime`.
    pub fn config(&self, max_lifetime: Duration) -> Result<Option<IdpConfig>, ConfigError> {
        let Some(url) = &self.jwt_jwks_url else {
            for (name, set) in [
                ("JWT_ISSUER", &self.jwt_issuer),
                ("JWT_AUDIENCE", &self.jwt_audience),
            ] {
                if set.is_some() {
                    return Err(ConfigError::Missing {
                        name: "JWT_JWKS_URL".into(),
                        hint: format!(
                            "{name} is set, so the identity provider's key set URL is needed too"
                        ),
                    });
                }
            }
            return Ok(None);
        };
        let required = |name: &str, value: &Option<String>, hint: &str| {
            value.clone().ok_or_else(|| ConfigError::Missing {
                name: name.to_owned(),
                hint: hint.to_owned(),
            })
        };
        let issuer = required(
            "JWT_ISSUER",
            &self.jwt_issuer,
            "the `iss` of the identity provider's tokens",
        )?;
        let audience = required(
            "JWT_AUDIENCE",
            &self.jwt_audience,
            "the `aud` the identity provider's tokens carry for this service",
        )?;
        let mut config = IdpConfig::new(url, &issuer, &audience, max_lifetime)?;
        config.user_claim = self.jwt_user_claim.trim().to_owned();
        config.fetch_timeout = self.jwt_jwks_timeout;
        config.min_refresh_interval = self.jwt_jwks_min_refresh;
        config.cache_ttl = self.jwt_jwks_cache_ttl;
        Ok(Some(config))
    }
}
