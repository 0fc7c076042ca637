//! Typed configuration read once from the environment. Every error names the variable.

use std::fmt::Display;
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

pub fn required(src: &dyn Source, name: &str, hint: &str) -> Result<String, ConfigError> {
    src.get(name).ok_or_else(|| ConfigError::Missing {
        name: name.to_owned(),
        hint: hint.to_owned(),
    })
}

pub fn parsed<T>(src: &dyn Source, name: &str, default: T) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: Display,
{
    match src.get(name) {
        None => Ok(default),
        Some(raw) => raw
            .trim()
            .parse()
            .map_err(|e: T::Err| ConfigError::Invalid {
                name: name.to_owned(),
                reason: format!("{raw:?}: {e}"),
            }),
    }
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

/// A duration variable (see [`parse_duration`]), or `default` when unset.
pub fn duration(src: &dyn Source, name: &str, default: Duration) -> Result<Duration, ConfigError> {
    match src.get(name) {
        None => Ok(default),
        Some(raw) => parse_duration(&raw).map_err(|reason| ConfigError::Invalid {
            name: name.to_owned(),
            reason,
        }),
    }
}

/// Like [`duration`], but zero is refused.
pub fn positive_duration(
    src: &dyn Source,
    name: &str,
    default: Duration,
) -> Result<Duration, ConfigError> {
    let d = duration(src, name, default)?;
    if d.is_zero() {
        return Err(ConfigError::Invalid {
            name: name.to_owned(),
            reason: "must be more than zero".into(),
        });
    }
    Ok(d)
}

/// Parses durations such as `500ms`, `30s`, `15m`, `8h`, `90d`.
pub fn parse_duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let split = raw
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{raw:?} has no unit (ms, s, m, h, d)"))?;
    let (digits, unit) = raw.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{raw:?} does not start with a number"))?;
    let secs = match unit {
        "ms" => return Ok(Duration::from_millis(n)),
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("{raw:?} has an unknown unit (ms, s, m, h, d)")),
    };
    Ok(Duration::from_secs(secs))
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

/// A well-known key for `serve --dev`: never used unless asked for, and logged loudly when it is.
pub const DEV_JWT_SECRET: &str = "dev-only-insecure-jwt-secret-do-not-deploy-0123456789";
const MIN_SECRET_BYTES: usize = 32;

/// What every service needs to start.
pub struct CommonConfig {
    pub database_url: String,
    /// `DATABASE_URL` is unset, so `database_url` is [`DEFAULT_DATABASE_URL`] (which errors
    /// about the database say).
    pub database_url_is_default: bool,
    pub bind: String,
    pub jwt_secret: SecretString,
    pub log_format: LogFormat,
    pub pool_size: usize,
    pub dev: bool,
}

pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

impl CommonConfig {
    pub fn from_source(
        src: &dyn Source,
        default_bind: &str,
        dev: bool,
    ) -> Result<Self, ConfigError> {
        let jwt_secret = match secret(src, "JWT_SECRET")? {
            Some(s) => {
                use secrecy::ExposeSecret;
                if s.expose_secret().len() < MIN_SECRET_BYTES {
                    return Err(ConfigError::Invalid {
                        name: "JWT_SECRET".into(),
                        reason: format!("must be at least {MIN_SECRET_BYTES} bytes"),
                    });
                }
                s
            }
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
        let default_format = if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            LogFormat::Pretty
        } else {
            LogFormat::Json
        };
        let pool_size = parsed(src, "DATABASE_POOL_SIZE", 16usize)?;
        if !(1..=256).contains(&pool_size) {
            return Err(ConfigError::Invalid {
                name: "DATABASE_POOL_SIZE".into(),
                reason: "must be between 1 and 256".into(),
            });
        }
        let database_url = src.get("DATABASE_URL");
        Ok(Self {
            database_url_is_default: database_url.is_none(),
            database_url: database_url.unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned()),
            bind: src.get("BIND").unwrap_or_else(|| default_bind.to_owned()),
            jwt_secret,
            log_format: parsed(src, "LOG_FORMAT", default_format)?,
            pool_size,
            dev,
        })
    }

    pub fn from_env(default_bind: &str, dev: bool) -> Result<Self, ConfigError> {
        Self::from_source(&Env, default_bind, dev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    use super::vars as env;

    #[test]
    fn missing_secret_names_the_variable() {
        let err = CommonConfig::from_source(&env(&[]), "127.0.0.1:1", false)
            .err()
            .unwrap();
        assert!(matches!(&err, ConfigError::Missing { name, .. } if name == "JWT_SECRET"));
        assert!(err.to_string().contains("JWT_SECRET"));
    }

    #[test]
    fn short_secret_is_refused() {
        let err = CommonConfig::from_source(&env(&[("JWT_SECRET", "short")]), "x", false)
            .err()
            .unwrap();
        assert!(matches!(err, ConfigError::Invalid { name, .. } if name == "JWT_SECRET"));
    }

    #[test]
    fn dev_mode_uses_the_dev_key_only_without_a_secret() {
        let cfg = CommonConfig::from_source(&env(&[]), "127.0.0.1:9", true).unwrap();
        assert_eq!(cfg.jwt_secret.expose_secret(), DEV_JWT_SECRET);
        assert_eq!(cfg.bind, "127.0.0.1:9");
        assert_eq!(cfg.database_url, DEFAULT_DATABASE_URL);
        assert!(cfg.database_url_is_default);
        let real = "k".repeat(40);
        let cfg = CommonConfig::from_source(&env(&[("JWT_SECRET", &real)]), "x", true).unwrap();
        assert_eq!(cfg.jwt_secret.expose_secret(), real);
    }

    #[test]
    fn malformed_values_name_the_variable_and_value() {
        let secret = "s".repeat(32);
        let err = CommonConfig::from_source(
            &env(&[("JWT_SECRET", &secret), ("LOG_FORMAT", "xml")]),
            "x",
            false,
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("LOG_FORMAT"), "{err}");
        assert!(err.to_string().contains("xml"), "{err}");
        let err = CommonConfig::from_source(
            &env(&[("JWT_SECRET", &secret), ("DATABASE_POOL_SIZE", "lots")]),
            "x",
            false,
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("DATABASE_POOL_SIZE"), "{err}");
    }

    #[test]
    fn secrets_can_come_from_a_file() {
        let dir = std::env::temp_dir().join(format!("cfg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secret");
        std::fs::write(&path, "from-a-file\n").unwrap();
        let s = secret(&env(&[("X_FILE", path.to_str().unwrap())]), "X")
            .unwrap()
            .unwrap();
        assert_eq!(s.expose_secret(), "from-a-file");
        let err = secret(&env(&[("X_FILE", "/nonexistent/secret")]), "X").unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { name, .. } if name == "X_FILE"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn optional_secrets_and_duration_variables() {
        let dir = std::env::temp_dir().join(format!("cfg-opt-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let (full, empty) = (dir.join("full"), dir.join("empty"));
        std::fs::write(&full, "s3cret\n").unwrap();
        std::fs::write(&empty, "\n").unwrap();
        let get = |pairs: &[(&str, &str)]| optional_secret(&env(pairs), "X");
        assert!(get(&[]).unwrap().is_none());
        let s = get(&[("X_FILE", full.to_str().unwrap())]).unwrap().unwrap();
        assert_eq!(s.expose_secret(), "s3cret");
        assert!(
            get(&[("X_FILE", empty.to_str().unwrap())])
                .unwrap()
                .is_none()
        );
        assert!(get(&[("X_FILE", "/nonexistent/secret")]).unwrap().is_none());
        let err = get(&[("X_FILE", dir.to_str().unwrap())]).unwrap_err();
        assert!(matches!(err, ConfigError::Invalid { name, .. } if name == "X_FILE"));
        std::fs::remove_dir_all(dir).unwrap();

        let d = Duration::from_secs(7);
        assert_eq!(duration(&env(&[]), "T", d), Ok(d));
        assert_eq!(duration(&env(&[("T", "0s")]), "T", d), Ok(Duration::ZERO));
        assert_eq!(
            positive_duration(&env(&[("T", "300ms")]), "T", d),
            Ok(Duration::from_millis(300))
        );
        for bad in ["0s", "5"] {
            let err = positive_duration(&env(&[("T", bad)]), "T", d).unwrap_err();
            assert!(
                matches!(err, ConfigError::Invalid { name, .. } if name == "T"),
                "{bad}"
            );
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("8h"), Ok(Duration::from_secs(8 * 3600)));
        assert_eq!(parse_duration("90d"), Ok(Duration::from_secs(90 * 86_400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("8").is_err());
        assert!(parse_duration("h").is_err());
        assert!(parse_duration("3w").is_err());
    }
}
