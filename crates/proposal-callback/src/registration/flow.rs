//! RegisterCallback: registers an integration's callback endpoint with its insurer.
//!
//! In the spec's order: a fixed Basic token is generated and stored as a Token record
//! (`registerCallback`, SHA-256 only) — *pending*, so it cannot authenticate yet; the payload
//! describing `/callback/auth` and the integration's callback URL, with the token in
//! `tokenApi`, is POSTed to `{insurer_webhook_url}/envio/v1/inclusaoCadastro` of the
//! integration's environment; on the insurer's 200 one transaction activates the token,
//! revokes the integration's previous one and sets `is_callback_active`. Any other answer,
//! a timeout or no connection revokes the pending token and changes nothing else: the
//! previous token (if any) keeps working.
//!
//! The insurers' client id and secret come from configuration only ([`RegistrationConfig`]);
//! how they travel on the call is decided in one place, [`with_credentials`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::config::{ConfigError, Source, parse_duration};
use diesel_async::AsyncConnection;
use reqwest::{StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;

use crate::auth::{TenantAdmin, generate_token, token_hash};
use crate::error::Error;
use crate::insurer::INSURERS;
use crate::startup::AppState;
use crate::store::integrations::{self, IntegrationRow, PendingSlot};

/// The insurer's registration route, below its `{insurer_webhook_url}`.
pub const REGISTRATION_PATH: &str = "envio/v1/inclusaoCadastro";
pub const DEFAULT_CALLBACK_BASE_URL: &str = "http://127.0.0.1:8081";
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause before the one retry of a call that could not connect.
const RETRY_PAUSE: Duration = Duration::from_millis(250);
/// Added to the longest a registration can take before its pending token counts as left
/// behind by a crashed process (and a new registration may start).
const LEASE_MARGIN: Duration = Duration::from_secs(30);

/// An integration's environment: which of the insurer's URLs it registers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Environment {
    Homologation,
    Production,
}

impl Environment {
    pub const ALL: [Environment; 2] = [Environment::Homologation, Environment::Production];

    /// The value stored in `integrations.environment`.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Homologation => "homologation",
            Environment::Production => "production",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == s)
    }

    fn var_part(self) -> &'static str {
        match self {
            Environment::Homologation => "HOMOLOGATION",
            Environment::Production => "PRODUCTION",
        }
    }
}

/// `INSURER_<ID>_<ENV>_URL`.
pub fn url_var(insurer: &str, env: Environment) -> String {
    format!(
        "INSURER_{}_{}_URL",
        insurer.to_ascii_uppercase(),
        env.var_part()
    )
}

fn credential_var(insurer: &str, what: &str) -> String {
    format!("INSURER_{}_{what}", insurer.to_ascii_uppercase())
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
    urls: HashMap<(String, Environment), Url>,
    /// `INSURER_<ID>_CLIENT_ID` and `_CLIENT_SECRET`, per insurer.
    credentials: HashMap<String, InsurerCredentials>,
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

/// A secret given as `NAME`, or as `NAME_FILE` naming a mounted file. A `NAME_FILE` whose
/// file does not exist (an optional Kubernetes secret that is not there) or is empty counts as
/// not configured, with a warning; a file that exists but cannot be read stops the start.
fn optional_secret(src: &dyn Source, name: &str) -> Result<Option<SecretString>, ConfigError> {
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
        Err(e) => Err(invalid(&file_var, format!("cannot read {path}: {e}"))),
    }
}

impl RegistrationConfig {
    pub fn from_source(src: &dyn Source) -> Result<Self, ConfigError> {
        let raw_base = src
            .get("CALLBACK_BASE_URL")
            .unwrap_or_else(|| DEFAULT_CALLBACK_BASE_URL.to_owned());
        let callback_base_url = base_url("CALLBACK_BASE_URL", &raw_base)?
            .as_str()
            .trim_end_matches('/')
            .to_owned();
        let duration = |name: &str, default: Duration| -> Result<Duration, ConfigError> {
            match src.get(name) {
                None => Ok(default),
                Some(raw) => match parse_duration(&raw) {
                    Ok(d) if !d.is_zero() => Ok(d),
                    Ok(_) => Err(invalid(name, "must be more than zero")),
                    Err(e) => Err(invalid(name, e)),
                },
            }
        };
        let mut config = Self {
            callback_base_url,
            urls: HashMap::new(),
            credentials: HashMap::new(),
            connect_timeout: duration("REGISTRATION_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT)?,
            timeout: duration("REGISTRATION_TIMEOUT", DEFAULT_TIMEOUT)?,
        };
        for insurer in INSURERS {
            for env in Environment::ALL {
                let name = url_var(insurer, env);
                if let Some(raw) = src.get(&name) {
                    config
                        .urls
                        .insert((insurer.to_owned(), env), base_url(&name, &raw)?);
                }
            }
            let id_var = credential_var(insurer, "CLIENT_ID");
            let secret_var = credential_var(insurer, "CLIENT_SECRET");
            match (
                optional_secret(src, &id_var)?,
                optional_secret(src, &secret_var)?,
            ) {
                (Some(client_id), Some(client_secret)) => {
                    config.credentials.insert(
                        insurer.to_owned(),
                        InsurerCredentials {
                            client_id,
                            client_secret,
                        },
                    );
                }
                (None, None) => {}
                (Some(_), None) | (None, Some(_)) => tracing::warn!(
                    insurer,
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
                    url_var(insurer, *env)
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

    /// Configures one insurer and environment (tests, tools).
    pub fn with_insurer(
        mut self,
        insurer: &str,
        env: Environment,
        url: Url,
        credentials: InsurerCredentials,
    ) -> Self {
        self.urls.insert((insurer.to_owned(), env), url);
        self.credentials.insert(insurer.to_owned(), credentials);
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
    pub fn target(&self, insurer: &str, env: Environment) -> Result<Target<'_>, Error> {
        let url = self
            .urls
            .get(&(insurer.to_owned(), env))
            .ok_or_else(|| Error::NotConfigured(url_var(insurer, env)))?;
        let credentials = self.credentials.get(insurer).ok_or_else(|| {
            Error::NotConfigured(format!(
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

/// The registration payload (spec: `nomeParceiro`, `clientId`, `apiCallback`, `tokenApi`).
/// No `Debug`: it carries the clear token.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationPayload<'a> {
    /// The integration's identifier: `{dsTenantId}/{insurer}` (unique per environment).
    pub nome_parceiro: String,
    pub client_id: &'a str,
    pub api_callback: ApiCallback,
    /// The fixed Basic token the insurer presents at `/callback/auth`.
    pub token_api: &'a str,
}

/// How the insurer reaches us: where it authenticates, and where it posts its callbacks.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApiCallback {
    /// `{CALLBACK_BASE_URL}/callback/auth`
    pub url_autenticacao: String,
    pub metodo_autenticacao: &'static str,
    /// `Basic`: `Authorization: Basic <tokenApi>`.
    pub tipo_autenticacao: &'static str,
    /// `{CALLBACK_BASE_URL}/callback/{dsTenantId}/{insurer}`
    pub url_callback: String,
    pub metodo_callback: &'static str,
    /// `Bearer`: the `access_token` `/callback/auth` answers, as `Authorization: Bearer`.
    pub tipo_autenticacao_callback: &'static str,
}

impl ApiCallback {
    pub fn new(callback_base_url: &str, tenant: &str, insurer: &str) -> Self {
        Self {
            url_autenticacao: format!("{callback_base_url}/callback/auth"),
            metodo_autenticacao: "POST",
            tipo_autenticacao: "Basic",
            url_callback: format!("{callback_base_url}/callback/{tenant}/{insurer}"),
            metodo_callback: "POST",
            tipo_autenticacao_callback: "Bearer",
        }
    }
}

/// THE place that decides how the client id and secret travel on the registration call:
/// HTTP Basic (`Authorization: Basic base64(client_id:client_secret)`, marked sensitive so
/// it is never logged by the HTTP stack). The payload carries `clientId` as the spec asks.
/// If an insurer wants them otherwise (headers `client_id`/`client_secret`, an OAuth token
/// first), change this function only.
fn with_credentials(
    req: reqwest::RequestBuilder,
    credentials: &InsurerCredentials,
) -> reqwest::RequestBuilder {
    req.basic_auth(
        credentials.client_id.expose_secret(),
        Some(credentials.client_secret.expose_secret()),
    )
}

/// Why a registration did not succeed. Each is a 502 with its own `code`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationFailure {
    /// The insurer answered, with something else than 200.
    #[error(
        "the insurer answered HTTP {status}{reason}; only 200 registers the callback, nothing was changed",
        status = .0.as_u16(),
        reason = .0.canonical_reason().map(|r| format!(" {r}")).unwrap_or_default()
    )]
    Rejected(StatusCode),
    /// No answer within `REGISTRATION_TIMEOUT`. The insurer may have received the request.
    #[error(
        "the insurer did not answer within {0:?}; nothing was changed here, register again to be sure the insurer holds the current token"
    )]
    Timeout(Duration),
    /// No connection, on both attempts: the insurer received nothing.
    #[error("could not connect to the insurer (2 attempts); nothing was changed")]
    Unreachable,
    /// The connection failed after the request went out (reset, broken answer).
    #[error(
        "the connection to the insurer failed before it answered; nothing was changed here, register again"
    )]
    Transport,
}

impl RegistrationFailure {
    pub fn code(&self) -> &'static str {
        match self {
            RegistrationFailure::Rejected(_) => "insurer_rejected",
            RegistrationFailure::Timeout(_) => "insurer_timeout",
            RegistrationFailure::Unreachable => "insurer_unreachable",
            RegistrationFailure::Transport => "insurer_error",
        }
    }
}

/// Runs `attempt`, and once more if it failed with an error `retryable` accepts. Returns the
/// result and how many attempts were made.
pub async fn with_one_retry<T, E, F, Fut>(
    mut attempt: F,
    retryable: impl Fn(&E) -> bool,
    pause: Duration,
) -> (Result<T, E>, u32)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    match attempt().await {
        Err(e) if retryable(&e) => {
            tokio::time::sleep(pause).await;
            (attempt().await, 2)
        }
        other => (other, 1),
    }
}

/// A connection error: nothing reached the insurer, so trying again is safe. A timeout after
/// the connection was made, or any answer, is never retried.
fn is_connect_error(e: &reqwest::Error) -> bool {
    e.is_connect()
}

/// The configuration and the one HTTP client of every registration call.
pub struct Registrar {
    pub config: RegistrationConfig,
    client: reqwest::Client,
}

impl Registrar {
    pub fn new(config: RegistrationConfig) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            // A redirect is not a 200: the insurer's answer stands as it is.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("proposal-callback/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { config, client })
    }

    /// POSTs the payload; Ok on 200 only.
    async fn send(
        &self,
        target: &Target<'_>,
        payload: &RegistrationPayload<'_>,
    ) -> Result<(), RegistrationFailure> {
        let (result, attempts) = with_one_retry(
            || {
                with_credentials(self.client.post(target.url.clone()), target.credentials)
                    .json(payload)
                    .send()
            },
            is_connect_error,
            RETRY_PAUSE,
        )
        .await;
        match result {
            Ok(res) if res.status() == StatusCode::OK => Ok(()),
            Ok(res) => {
                let status = res.status();
                let body = res.text().await.unwrap_or_default();
                let excerpt: String = body.chars().take(500).collect();
                tracing::warn!(url = %target.url, status = status.as_u16(), body = %excerpt, "the insurer refused the callback registration");
                Err(RegistrationFailure::Rejected(status))
            }
            Err(e) => {
                let failure = if e.is_connect() {
                    RegistrationFailure::Unreachable
                } else if e.is_timeout() {
                    RegistrationFailure::Timeout(self.config.timeout)
                } else {
                    RegistrationFailure::Transport
                };
                tracing::warn!(url = %target.url, attempts, error = %e.without_url(), "the callback registration call failed");
                Err(failure)
            }
        }
    }
}

pub type SharedRegistrar = Arc<Registrar>;

/// RegisterCallback for the admin's integration `id`; the integration as it is afterwards.
pub async fn register(
    state: &AppState,
    admin: &TenantAdmin,
    id: i64,
) -> Result<IntegrationRow, Error> {
    let registrar = &state.registrar;
    let mut conn = state.pool.get().await?;
    let integration = integrations::find(&mut conn, id)
        .await?
        .ok_or(Error::IntegrationNotFound(id))?;
    if integration.tenant_id != admin.tenant {
        return Err(Error::Forbidden(
            "this integration belongs to another tenant",
        ));
    }
    let env = Environment::parse(&integration.environment).ok_or_else(|| {
        Error::Internal(format!("unknown environment {:?}", integration.environment))
    })?;
    // Before any token is made: an unconfigured insurer changes nothing.
    let target = registrar
        .config
        .target(&integration.insurer, env)
        .inspect_err(|e| crate::metrics::count_registration(&integration.insurer, env, e.code()))?;

    let token = generate_token();
    let lease = registrar.config.lease();
    let stale_before = chrono::Utc::now() - chrono::Duration::from_std(lease).unwrap_or_default();
    let token_id = conn
        .transaction::<_, Error, _>(async |c| {
            integrations::lock(c, id).await?;
            match integrations::claim_pending_slot(c, id, stale_before).await? {
                PendingSlot::Busy => Err(Error::RegistrationInProgress {
                    retry_after_secs: lease.as_secs().try_into().unwrap_or(u32::MAX),
                }),
                PendingSlot::Free => {
                    integrations::insert_pending_token(c, id, &token_hash(&token)).await
                }
            }
        })
        .await?;
    // No database connection is held while the insurer is called.
    drop(conn);

    let credentials = target.credentials;
    let payload = RegistrationPayload {
        nome_parceiro: format!("{}/{}", integration.tenant_id, integration.insurer),
        client_id: credentials.client_id.expose_secret(),
        api_callback: ApiCallback::new(
            &registrar.config.callback_base_url,
            &integration.tenant_id,
            &integration.insurer,
        ),
        token_api: &token,
    };
    let started = Instant::now();
    let outcome = registrar.send(&target, &payload).await;
    let log = |result: &str| {
        crate::metrics::count_registration(&integration.insurer, env, result);
        tracing::info!(
            integration = id,
            tenant = %integration.tenant_id,
            insurer = %integration.insurer,
            environment = env.as_str(),
            admin = %admin.sub,
            result,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "callback registration"
        )
    };

    let mut conn = state.pool.get().await.inspect_err(|e| {
        tracing::error!(
            integration = id,
            insurer_accepted = outcome.is_ok(),
            error = %e,
            "the registration's outcome could not be recorded; its token stays pending (never live) until its lease passes, then register again"
        )
    })?;
    match outcome {
        Ok(()) => {
            let activated = conn
                .transaction::<_, Error, _>(async |c| {
                    integrations::lock(c, id).await?;
                    integrations::activate(c, id, token_id).await
                })
                .await?;
            if !activated {
                log("registration_superseded");
                return Err(Error::RegistrationSuperseded);
            }
            log("registered");
            integrations::find(&mut conn, id)
                .await?
                .ok_or(Error::IntegrationNotFound(id))
        }
        Err(failure) => {
            integrations::abandon(&mut conn, token_id).await?;
            log(failure.code());
            Err(Error::Registration(failure))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn src(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn defaults_configure_nothing() {
        let c = RegistrationConfig::from_source(&src(&[])).unwrap();
        assert_eq!(c.callback_base_url, "http://127.0.0.1:8081");
        assert_eq!(
            (c.connect_timeout, c.timeout),
            (Duration::from_secs(5), Duration::from_secs(10))
        );
        assert!(c.configured().is_empty());
        let e = c
            .target("porto", Environment::Homologation)
            .err()
            .unwrap()
            .problem();
        assert_eq!((e.status, e.code.as_ref()), (502, "not_configured"));
        assert!(
            e.detail.contains("INSURER_PORTO_HOMOLOGATION_URL"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn urls_and_credentials_per_insurer_and_environment() {
        let dir = std::env::temp_dir().join(format!("pcb-reg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let secret_file = dir.join("secret");
        std::fs::write(&secret_file, "s3cret\n").unwrap();
        let c = RegistrationConfig::from_source(&src(&[
            ("CALLBACK_BASE_URL", "https://cb.example.com/base/"),
            (
                "INSURER_PORTO_PRODUCTION_URL",
                "https://api.porto.example/webhook",
            ),
            ("INSURER_PORTO_CLIENT_ID", "porto-id"),
            (
                "INSURER_PORTO_CLIENT_SECRET_FILE",
                secret_file.to_str().unwrap(),
            ),
            ("INSURER_TOKIO_HOMOLOGATION_URL", "http://h.tokio.example/"),
            // A `_FILE` whose file is not mounted: not configured, not an error.
            ("INSURER_TOKIO_CLIENT_ID", "tokio-id"),
            ("INSURER_TOKIO_CLIENT_SECRET_FILE", "/nonexistent/secret"),
            ("REGISTRATION_TIMEOUT", "300ms"),
        ]))
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.callback_base_url, "https://cb.example.com/base");
        assert_eq!(c.timeout, Duration::from_millis(300));
        assert_eq!(c.configured(), vec!["porto/production".to_owned()]);
        let t = c.target("porto", Environment::Production).unwrap();
        assert_eq!(
            t.url.as_str(),
            "https://api.porto.example/webhook/envio/v1/inclusaoCadastro"
        );
        assert_eq!(t.credentials.client_id.expose_secret(), "porto-id");
        assert_eq!(t.credentials.client_secret.expose_secret(), "s3cret");
        let e = c.target("porto", Environment::Homologation).err().unwrap();
        assert!(e.to_string().contains("INSURER_PORTO_HOMOLOGATION_URL"));
        let e = c.target("tokio", Environment::Homologation).err().unwrap();
        assert!(e.to_string().contains("INSURER_TOKIO_CLIENT_SECRET"), "{e}");
        // The secret never shows in Debug.
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[test]
    fn bad_values_name_their_variable() {
        for (name, value) in [
            ("CALLBACK_BASE_URL", "ftp://x"),
            ("CALLBACK_BASE_URL", "not a url"),
            ("INSURER_TOO_PRODUCTION_URL", "https://user:pw@too.example"),
            ("INSURER_TOO_PRODUCTION_URL", "https://too.example/?a=1"),
            ("REGISTRATION_TIMEOUT", "0s"),
            ("REGISTRATION_CONNECT_TIMEOUT", "5"),
        ] {
            match RegistrationConfig::from_source(&src(&[(name, value)])) {
                Err(ConfigError::Invalid { name: n, .. }) => assert_eq!(n, name, "{value}"),
                other => panic!("{name}={value}: {other:?}"),
            }
        }
        // A secret file that exists but cannot be read is an error, not "not configured".
        let dir = std::env::temp_dir();
        match RegistrationConfig::from_source(&src(&[(
            "INSURER_TOO_CLIENT_SECRET_FILE",
            dir.to_str().unwrap(),
        )])) {
            Err(ConfigError::Invalid { name, .. }) => {
                assert_eq!(name, "INSURER_TOO_CLIENT_SECRET_FILE")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_payload_has_the_specs_fields() {
        let payload = RegistrationPayload {
            nome_parceiro: "demo-a/porto".into(),
            client_id: "cid",
            api_callback: ApiCallback::new("https://cb.example.com", "demo-a", "porto"),
            token_api: "tok",
        };
        assert_eq!(
            serde_json::to_value(&payload).unwrap(),
            serde_json::json!({
                "nomeParceiro": "demo-a/porto",
                "clientId": "cid",
                "apiCallback": {
                    "urlAutenticacao": "https://cb.example.com/callback/auth",
                    "metodoAutenticacao": "POST",
                    "tipoAutenticacao": "Basic",
                    "urlCallback": "https://cb.example.com/callback/demo-a/porto",
                    "metodoCallback": "POST",
                    "tipoAutenticacaoCallback": "Bearer",
                },
                "tokenApi": "tok",
            })
        );
    }

    #[test]
    fn failures_are_502_with_their_own_codes() {
        let cases = [
            (
                RegistrationFailure::Rejected(StatusCode::INTERNAL_SERVER_ERROR),
                "insurer_rejected",
                "HTTP 500 Internal Server Error",
            ),
            (
                RegistrationFailure::Timeout(Duration::from_secs(10)),
                "insurer_timeout",
                "within 10s",
            ),
            (
                RegistrationFailure::Unreachable,
                "insurer_unreachable",
                "connect",
            ),
            (RegistrationFailure::Transport, "insurer_error", "failed"),
        ];
        for (f, code, detail) in cases {
            let p = Error::Registration(f).problem();
            assert_eq!((p.status, p.code.as_ref()), (502, code));
            assert!(p.detail.contains(detail), "{}", p.detail);
        }
    }

    #[tokio::test]
    async fn one_retry_on_retryable_errors_only() {
        let calls = AtomicU32::new(0);
        let attempt = |fail_times: u32, err: &'static str| {
            let calls = &calls;
            move || {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move { if n < fail_times { Err(err) } else { Ok(n) } }
            }
        };
        let retryable = |e: &&str| *e == "connect";
        // A connection error, then success: two attempts.
        let (r, n) = with_one_retry(attempt(1, "connect"), retryable, Duration::ZERO).await;
        assert_eq!((r, n), (Ok(1), 2));
        // Two connection errors: the second one stands; never a third attempt.
        calls.store(0, Ordering::SeqCst);
        let (r, n) = with_one_retry(attempt(5, "connect"), retryable, Duration::ZERO).await;
        assert_eq!((r, n, calls.load(Ordering::SeqCst)), (Err("connect"), 2, 2));
        // A timeout (or anything else) is not retried.
        calls.store(0, Ordering::SeqCst);
        let (r, n) = with_one_retry(attempt(5, "timeout"), retryable, Duration::ZERO).await;
        assert_eq!((r, n, calls.load(Ordering::SeqCst)), (Err("timeout"), 1, 1));
    }
}
