//! RegisterCallback's configuration, read once at start (docs/proposal-callback.md,
//! "Registering the callback"): the callback base URL we give insurers, each insurer's
//! registration URL per environment, its developer-portal credentials, and the timeouts.

use std::collections::HashMap;
use std::time::Duration;

use common::config::ConfigError;
use reqwest::Url;
use secrecy::SecretString;

use crate::domain::insurer::Insurer;
use common::text_enum;

/// The insurer's registration route, below its `{insurer_webhook_url}`.
pub const REGISTRATION_PATH: &str = "envio/v1/inclusaoCadastro";
pub const DEFAULT_CALLBACK_BASE_URL: &str = "http://127.0.0.1:8081";
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause before the one retry of a call that could not connect.
pub const RETRY_PAUSE: Duration = Duration::from_millis(250);
/// Added to the longest a registration can take before its pending token counts as left
/// behind by a crashed process (and a new registration may start).
const LEASE_MARGIN: Duration = Duration::from_secs(30);

/// Registration with this insurer and environment is not configured: what is missing, as
/// variable names (never values). Answered 502 `not_configured`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("callback registration is not configured: set {0}")]
pub struct NotConfigured(pub String);

text_enum! {
    /// An integration's environment: which of the insurer's URLs it registers with.
    pub enum Environment {
        Homologation = "homologation",
        Production = "production",
    }
}

impl Environment {
    fn var_part(self) -> &'static str {
        match self {
            Environment::Homologation => "HOMOLOGATION",
            Environment::Production => "PRODUCTION",
        }
    }
}

/// `INSURER_<ID>_<ENV>_URL`.
pub fn url_var(insurer: Insurer, env: Environment) -> String {
    format!(
        "INSURER_{}_{}_URL",
        insurer.as_str().to_ascii_uppercase(),
        env.var_part()
    )
}

/// `INSURER_<ID>_<WHAT>`: `CLIENT_ID` or `CLIENT_SECRET`.
pub fn credential_var(insurer: Insurer, what: &str) -> String {
    format!("INSURER_{}_{what}", insurer.as_str().to_ascii_uppercase())
}

/// An insurer's developer-portal credentials. Never logged (`SecretString` redacts its
/// `Debug`), never stored, never in an answer.
#[derive(Debug, Clone)]
pub struct InsurerCredentials {
    pub client_id: SecretString,
    pub client_secret: SecretString,
}

/// Everything RegisterCallback needs from the environment, read once at start.
#[derive(Debug, Clone)]
pub struct RegistrationConfig {
    /// `CALLBACK_BASE_URL` without a trailing `/`.
    pub callback_base_url: String,
    /// `INSURER_<ID>_<ENV>_URL`, the insurer's `{insurer_webhook_url}` per environment.
    urls: HashMap<(Insurer, Environment), Url>,
    /// `INSURER_<ID>_CLIENT_ID` and `_CLIENT_SECRET`, per insurer.
    credentials: HashMap<Insurer, InsurerCredentials>,
    /// `REGISTRATION_CONNECT_TIMEOUT`: to open the connection (each attempt).
    pub connect_timeout: Duration,
    /// `REGISTRATION_TIMEOUT`: the whole call (each attempt), answer included.
    pub timeout: Duration,
}

impl Default for RegistrationConfig {
    /// No insurer configured: every registration answers 502 `not_configured`.
    fn default() -> Self {
        Self {
            callback_base_url: DEFAULT_CALLBACK_BASE_URL.to_owned(),
            urls: HashMap::new(),
            credentials: HashMap::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

fn invalid(name: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name: name.to_owned(),
        reason: reason.into(),
    }
}

/// An `http(s)` URL with a host and no credentials, query or fragment.
fn base_url(name: &str, raw: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(raw.trim()).map_err(|e| invalid(name, format!("{raw:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(invalid(
            name,
            "must be an http:// or https:// URL with a host",
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            name,
            "must not carry credentials (they come from INSURER_<ID>_CLIENT_ID/_SECRET)",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid(name, "must not have a query or a fragment"));
    }
    Ok(url)
}
impl RegistrationConfig {
    /// The configuration of `crate::settings`' values: the callback base URL, the timeouts,
    /// each insurer's URL per environment (`url`) and its client id and secret
    /// (`credentials`). Every error names its variable.
    pub fn new(
        callback_base_url: &str,
        connect_timeout: Duration,
        timeout: Duration,
        url: impl Fn(Insurer, Environment) -> Option<String>,
        credentials: impl Fn(Insurer) -> (Option<SecretString>, Option<SecretString>),
    ) -> Result<Self, ConfigError> {
        let callback_base_url = base_url("CALLBACK_BASE_URL", callback_base_url)?
            .as_str()
            .trim_end_matches('/')
            .to_owned();
        let mut config = Self {
            callback_base_url,
            urls: HashMap::new(),
            credentials: HashMap::new(),
            connect_timeout,
            timeout,
        };
        for insurer in Insurer::ALL {
            for env in Environment::ALL {
                let name = url_var(insurer, env);
                if let Some(raw) = url(insurer, env) {
                    config.urls.insert((insurer, env), base_url(&name, &raw)?);
                }
            }
            let id_var = credential_var(insurer, "CLIENT_ID");
            let secret_var = credential_var(insurer, "CLIENT_SECRET");
            match credentials(insurer) {
                (Some(client_id), Some(client_secret)) => {
                    config.credentials.insert(
                        insurer,
                        InsurerCredentials {
                            client_id,
                            client_secret,
                        },
                    );
                }
                (None, None) => {}
                (Some(_), None) | (None, Some(_)) => tracing::warn!(
                    insurer = insurer.as_str(),
                    "only one of {id_var} and {secret_var} is set: registration with this insurer answers not_configured"
                ),
            }
        }
        config.warn_about_gaps();
        Ok(config)
    }

    /// Start-up warnings for a configuration that cannot work as the operator likely meant.
    fn warn_about_gaps(&self) {
        for (insurer, env) in self.urls.keys() {
            if !self.credentials.contains_key(insurer) {
                tracing::warn!(
                    "{} is set but the insurer's client id and secret are not: registration with {insurer} answers not_configured",
                    url_var(*insurer, *env)
                );
            }
        }
        let loopback = Url::parse(&self.callback_base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .is_some_and(|h| {
                h == "localhost"
                    || h.parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
                    || h == "[::1]"
            });
        if loopback && !self.configured().is_empty() {
            tracing::warn!(
                callback_base_url = %self.callback_base_url,
                "CALLBACK_BASE_URL is a loopback address: insurers registered now cannot reach it"
            );
        }
    }

    /// Configures one insurer and environment (tests).
    #[cfg(any(test, feature = "test-support"))]
    pub fn with_insurer(
        mut self,
        insurer: Insurer,
        env: Environment,
        url: Url,
        credentials: InsurerCredentials,
    ) -> Self {
        self.urls.insert((insurer, env), url);
        self.credentials.insert(insurer, credentials);
        self
    }

    /// Which insurer and environment pairs can register (for the start-up log).
    pub fn configured(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .urls
            .keys()
            .filter(|(insurer, _)| self.credentials.contains_key(insurer))
            .map(|(insurer, env)| format!("{insurer}/{}", env.as_str()))
            .collect();
        out.sort();
        out
    }

    /// The insurer's registration URL and credentials for `env`, or 502 `not_configured`
    /// naming what is missing (variable names only).
    pub fn target(&self, insurer: Insurer, env: Environment) -> Result<Target<'_>, NotConfigured> {
        let url = self
            .urls
            .get(&(insurer, env))
            .ok_or_else(|| NotConfigured(url_var(insurer, env)))?;
        let credentials = self.credentials.get(&insurer).ok_or_else(|| {
            NotConfigured(format!(
                "{} and {}",
                credential_var(insurer, "CLIENT_ID"),
                credential_var(insurer, "CLIENT_SECRET")
            ))
        })?;
        Ok(Target {
            url: registration_url(url),
            credentials,
        })
    }

    /// The longest one registration can wait for the insurer, plus a margin: a pending token
    /// older than this was left by a process that died, and no longer blocks a new one.
    pub fn lease(&self) -> Duration {
        self.connect_timeout + RETRY_PAUSE + self.timeout + LEASE_MARGIN
    }
}

/// `{insurer_webhook_url}/envio/v1/inclusaoCadastro`, whether the base ends in `/` or not.
fn registration_url(base: &Url) -> Url {
    let mut url = base.clone();
    let path = format!("{}/{REGISTRATION_PATH}", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url
}

/// Where and as whom one registration call goes.
pub struct Target<'a> {
    pub url: Url,
    pub credentials: &'a InsurerCredentials,
}
