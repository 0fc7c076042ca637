//! Every variable proposal-callback reads, in one place (docs/operations.md,
//! "Configuration"): the shared ones ([`CommonSettings`]), email, callback registration, the
//! `/callback/auth` limiter's proxies, the sweeper, and the identity provider of the tenants'
//! staff. Read once, at start, with [`common::settings::FromSource`];
//! `proposal-callback serve --help` lists them with their defaults.

use std::time::Duration;

use clap::Args;
use common::auth::idp::IdpConfig;
use common::config::ConfigError;
use common::pages::SessionRules;
use common::settings::{
    CommonSettings, IdpSettings, OPTIONAL_SECRETS, SECRETS, duration, lifetime, positive_duration,
    secret, show,
};
use lettre::message::Mailbox;
use lettre::transport::smtp::extension::ClientId;
use secrecy::{ExposeSecret, SecretString};

use crate::auth::admin::{
    DEFAULT_ADMIN_ROLE, DEFAULT_ROLES_CLAIM, DEFAULT_TENANT_CLAIM, StaffClaims,
};
use crate::auth::jwt::DEFAULT_MAX_LIFETIME;
use crate::domain::insurer::Insurer;
use crate::domain::silence::{DEFAULT_FLOOR, DEFAULT_K, DEFAULT_LEARNING_WINDOW, SilenceRule};
use crate::email::config::{
    DEFAULT_FROM, DEFAULT_POLL_INTERVAL, DEFAULT_RETRY_BASE, DEFAULT_RETRY_MAX,
    DEFAULT_SMTP_TIMEOUT, EmailConfig, SmtpTarget, default_hello, parse_hello, read_ca_file,
};
use crate::flow::silence::{DEFAULT_INTERVAL as DEFAULT_SILENCE_INTERVAL, WatchConfig};
use crate::flow::sweep::{DEFAULT_GRACE, DEFAULT_INTERVAL, SweepConfig};
use crate::ratelimit::TrustedProxies;
use crate::registration::config::{
    DEFAULT_CALLBACK_BASE_URL, DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, Environment,
    RegistrationConfig,
};

#[cfg(test)]
mod tests;

/// Every setting of proposal-callback.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    #[command(flatten)]
    pub common: CommonSettings,

    #[command(flatten)]
    pub email: EmailSettings,

    #[command(flatten)]
    pub registration: RegistrationSettings,

    /// Proxies whose X-Forwarded-For the /callback/auth limiter reads (comma-separated CIDRs or addresses); unset: count per TCP peer and ignore the header
    #[arg(long, env = "TRUSTED_PROXIES", value_parser = TrustedProxies::parse)]
    pub trusted_proxies: Option<TrustedProxies>,

    #[command(flatten)]
    pub sweep: SweepSettings,

    #[command(flatten)]
    pub silence: SilenceSettings,

    #[command(flatten)]
    pub staff: StaffSettings,

    /// `PAGE_SESSION_IDLE`, `PAGE_SESSION_MAX`: the integrations console's sessions.
    #[command(flatten)]
    pub page_sessions: SessionRules,
}

impl Settings {
    pub fn trusted_proxies(&self) -> TrustedProxies {
        self.trusted_proxies.clone().unwrap_or_default()
    }
}

/// The relay and the outbox worker's pacing (docs/proposal-callback.md, "Email").
#[derive(Debug, Clone, Args)]
pub struct EmailSettings {
    /// Sender of proposal emails
    #[arg(long, env = "EMAIL_FROM", default_value = DEFAULT_FROM, value_parser = |raw: &str| raw.parse::<Mailbox>())]
    pub email_from: Mailbox,

    /// First retry delay after a failed send; doubles per attempt up to EMAIL_RETRY_MAX
    #[arg(long, env = "EMAIL_RETRY_BASE", default_value = show(DEFAULT_RETRY_BASE), value_parser = duration)]
    pub email_retry_base: Duration,

    /// The cap of the retry delay
    #[arg(long, env = "EMAIL_RETRY_MAX", default_value = show(DEFAULT_RETRY_MAX), value_parser = duration)]
    pub email_retry_max: Duration,

    /// How often the worker looks for queued mail when the outbox was empty
    #[arg(long, env = "EMAIL_POLL_INTERVAL", default_value = show(DEFAULT_POLL_INTERVAL), value_parser = duration)]
    pub email_poll_interval: Duration,

    /// Longest wait on each SMTP step (connect, AUTH, MAIL/RCPT/DATA, QUIT)
    #[arg(long, env = "SMTP_TIMEOUT", default_value = show(DEFAULT_SMTP_TIMEOUT), value_parser = positive_duration)]
    pub smtp_timeout: Duration,

    /// Name given in EHLO: a fully qualified domain name or an address literal; unset: the machine's name if fully qualified, else EMAIL_FROM's domain
    #[arg(long, env = "SMTP_HELO_NAME", value_parser = |raw: &str| parse_hello(raw))]
    pub smtp_helo_name: Option<ClientId>,

    /// PEM file of a private CA the relay's certificate chains to, trusted besides the public roots
    #[arg(long, env = "SMTP_TLS_CA_FILE")]
    pub smtp_tls_ca_file: Option<String>,

    /// SMTP relay: smtps://user:password@host (implicit TLS), smtp://user:password@host?tls=required (STARTTLS) or smtp://host (plain, loopback only with credentials); unset: mail stays queued
    #[arg(long, env = "SMTP_URL", help_heading = SECRETS, value_parser = secret)]
    pub smtp_url: Option<SecretString>,
}

impl EmailSettings {
    pub fn config(&self) -> Result<EmailConfig, ConfigError> {
        if let Some(url) = &self.smtp_url {
            // Checked now so a typo stops `serve` instead of silently queueing forever.
            SmtpTarget::parse(url.expose_secret()).map_err(|reason| ConfigError::Invalid {
                name: "SMTP_URL".into(),
                reason,
            })?;
        }
        let tls_ca_pem = match &self.smtp_tls_ca_file {
            Some(path) => read_ca_file(path)?,
            None => None,
        };
        Ok(EmailConfig {
            smtp_url: self.smtp_url.clone(),
            tls_ca_pem,
            from: self.email_from.clone(),
            retry_base: self.email_retry_base,
            retry_max: self.email_retry_max,
            poll_interval: self.email_poll_interval,
            smtp_timeout: self.smtp_timeout,
            hello: self.smtp_helo_name.clone().unwrap_or_else(|| {
                // lettre's own default: the machine's name (or an address literal).
                let host = match ClientId::default() {
                    ClientId::Domain(host) => Some(host),
                    _ => None,
                };
                default_hello(host.as_deref(), &self.email_from)
            }),
        })
    }
}

/// RegisterCallback: our base URL, each insurer's URL per environment and its credentials
/// (docs/proposal-callback.md, "Registering the callback"). One field per insurer and
/// environment: `tests` checks they cover `Insurer::ALL`.
#[derive(Debug, Clone, Args)]
pub struct RegistrationSettings {
    /// Public base URL of this service, sent to insurers when the callback is registered
    #[arg(long, env = "CALLBACK_BASE_URL", default_value = DEFAULT_CALLBACK_BASE_URL)]
    pub callback_base_url: String,

    /// Registration call to an insurer: time to connect (each attempt)
    #[arg(long, env = "REGISTRATION_CONNECT_TIMEOUT", default_value = show(DEFAULT_CONNECT_TIMEOUT), value_parser = positive_duration)]
    pub registration_connect_timeout: Duration,

    /// Registration call to an insurer: the whole call, answer included (each attempt)
    #[arg(long, env = "REGISTRATION_TIMEOUT", default_value = show(DEFAULT_TIMEOUT), value_parser = positive_duration)]
    pub registration_timeout: Duration,

    /// Porto Seguro's webhook URL, homologation; unset: registering there answers 502 not_configured
    #[arg(long, env = "INSURER_PORTO_HOMOLOGATION_URL")]
    pub insurer_porto_homologation_url: Option<String>,
    /// Porto Seguro's webhook URL, production
    #[arg(long, env = "INSURER_PORTO_PRODUCTION_URL")]
    pub insurer_porto_production_url: Option<String>,
    /// Tokio Marine's webhook URL, homologation
    #[arg(long, env = "INSURER_TOKIO_HOMOLOGATION_URL")]
    pub insurer_tokio_homologation_url: Option<String>,
    /// Tokio Marine's webhook URL, production
    #[arg(long, env = "INSURER_TOKIO_PRODUCTION_URL")]
    pub insurer_tokio_production_url: Option<String>,
    /// Too Seguros' webhook URL, homologation
    #[arg(long, env = "INSURER_TOO_HOMOLOGATION_URL")]
    pub insurer_too_homologation_url: Option<String>,
    /// Too Seguros' webhook URL, production
    #[arg(long, env = "INSURER_TOO_PRODUCTION_URL")]
    pub insurer_too_production_url: Option<String>,

    /// Porto Seguro's developer-portal client id
    #[arg(long, env = "INSURER_PORTO_CLIENT_ID", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub insurer_porto_client_id: Option<SecretString>,
    /// Porto Seguro's developer-portal client secret
    #[arg(long, env = "INSURER_PORTO_CLIENT_SECRET", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub insurer_porto_client_secret: Option<SecretString>,
    /// Tokio Marine's developer-portal client id
    #[arg(long, env = "INSURER_TOKIO_CLIENT_ID", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub insurer_tokio_client_id: Option<SecretString>,
    /// Tokio Marine's developer-portal client secret
    #[arg(long, env = "INSURER_TOKIO_CLIENT_SECRET", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub insurer_tokio_client_secret: Option<SecretString>,
    /// Too Seguros' developer-portal client id
    #[arg(long, env = "INSURER_TOO_CLIENT_ID", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub insurer_too_client_id: Option<SecretString>,
    /// Too Seguros' developer-portal client secret
    #[arg(long, env = "INSURER_TOO_CLIENT_SECRET", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub insurer_too_client_secret: Option<SecretString>,
}

impl RegistrationSettings {
    pub fn config(&self) -> Result<RegistrationConfig, ConfigError> {
        use Environment::{Homologation, Production};
        let url = |insurer: Insurer, env: Environment| {
            match (insurer, env) {
                (Insurer::Porto, Homologation) => &self.insurer_porto_homologation_url,
                (Insurer::Porto, Production) => &self.insurer_porto_production_url,
                (Insurer::Tokio, Homologation) => &self.insurer_tokio_homologation_url,
                (Insurer::Tokio, Production) => &self.insurer_tokio_production_url,
                (Insurer::Too, Homologation) => &self.insurer_too_homologation_url,
                (Insurer::Too, Production) => &self.insurer_too_production_url,
            }
            .clone()
        };
        let credentials = |insurer: Insurer| {
            let (id, secret) = match insurer {
                Insurer::Porto => (
                    &self.insurer_porto_client_id,
                    &self.insurer_porto_client_secret,
                ),
                Insurer::Tokio => (
                    &self.insurer_tokio_client_id,
                    &self.insurer_tokio_client_secret,
                ),
                Insurer::Too => (&self.insurer_too_client_id, &self.insurer_too_client_secret),
            };
            (id.clone(), secret.clone())
        };
        RegistrationConfig::new(
            &self.callback_base_url,
            self.registration_connect_timeout,
            self.registration_timeout,
            url,
            credentials,
        )
    }
}

/// The receipt sweeper (docs/proposal-callback.md, "Sweeper").
#[derive(Debug, Clone, Args)]
pub struct SweepSettings {
    /// How often each replica looks for callbacks a crash left `received`
    #[arg(long, env = "SWEEP_INTERVAL", default_value = show(DEFAULT_INTERVAL), value_parser = positive_duration)]
    pub sweep_interval: Duration,

    /// How old such a receipt must be before it is taken (longer than a live callback can take)
    #[arg(long, env = "SWEEP_GRACE", default_value = show(DEFAULT_GRACE), value_parser = duration)]
    pub sweep_grace: Duration,
}

impl SweepSettings {
    pub fn config(&self) -> SweepConfig {
        SweepConfig {
            interval: self.sweep_interval,
            grace: self.sweep_grace,
        }
    }
}

/// The silence watch (docs/proposal-callback.md, "Silent insurers").
#[derive(Debug, Clone, Args)]
pub struct SilenceSettings {
    /// How often each replica looks for integrations whose insurer stopped calling back
    #[arg(long, env = "SILENCE_CHECK_INTERVAL", default_value = show(DEFAULT_SILENCE_INTERVAL), value_parser = positive_duration)]
    pub silence_check_interval: Duration,

    /// A silence is flagged past k x the p99 of the integration's usual gap between callbacks at that hour of that weekday (1 to 100)
    #[arg(long, env = "SILENCE_K", default_value_t = DEFAULT_K, value_parser = silence_k)]
    pub silence_k: f64,

    /// No silence shorter than this is flagged, however busy the integration
    #[arg(long, env = "SILENCE_FLOOR", default_value = show(DEFAULT_FLOOR), value_parser = positive_duration)]
    pub silence_floor: Duration,

    /// How far back each integration's rhythm is learned (at least 7d: every weekday)
    #[arg(long, env = "SILENCE_LEARNING_WINDOW", default_value = show(DEFAULT_LEARNING_WINDOW), value_parser = learning_window)]
    pub silence_learning_window: Duration,
}

fn silence_k(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(k) if (1.0..=100.0).contains(&k) => Ok(k),
        _ => Err("must be a number from 1 to 100 (a multiple of the usual gap's p99)".into()),
    }
}

fn learning_window(raw: &str) -> Result<Duration, String> {
    let window = duration(raw)?;
    if window < Duration::from_secs(7 * 24 * 3600) {
        return Err("must be at least 7d, so every weekday is learned".into());
    }
    Ok(window)
}

impl SilenceSettings {
    /// The watch's settings; its emails link the console under `callback_base_url`.
    pub fn config(&self, callback_base_url: &str) -> WatchConfig {
        WatchConfig {
            interval: self.silence_check_interval,
            rule: SilenceRule {
                k: self.silence_k,
                floor: self.silence_floor,
                learning_window: self.silence_learning_window,
            },
            console_url: format!(
                "{}/admin/integracao",
                callback_base_url.trim_end_matches('/')
            ),
        }
    }
}

/// The identity provider of a tenant's staff, whose tokens open the admin routes
/// (docs/proposal-callback.md, "Operators").
#[derive(Debug, Clone, Args)]
pub struct StaffSettings {
    /// Longest lifetime (exp - iat) of the identity provider's tokens
    #[arg(long, env = "JWT_MAX_LIFETIME", default_value = show(DEFAULT_MAX_LIFETIME), value_parser = lifetime)]
    pub jwt_max_lifetime: Duration,

    #[command(flatten)]
    pub idp: IdpSettings,

    /// The claim of the identity provider's tokens holding the tenant id (dsTenantId)
    #[arg(long, env = "JWT_TENANT_CLAIM", default_value = DEFAULT_TENANT_CLAIM, value_parser = claim)]
    pub jwt_tenant_claim: String,

    /// The claim holding the roles (a string or an array; dots walk into objects, e.g. realm_access.roles)
    #[arg(long, env = "JWT_ROLES_CLAIM", default_value = DEFAULT_ROLES_CLAIM, value_parser = claim)]
    pub jwt_roles_claim: String,

    /// The role that opens the admin routes
    #[arg(long, env = "JWT_ADMIN_ROLE", default_value = DEFAULT_ADMIN_ROLE, value_parser = claim)]
    pub jwt_admin_role: String,
}

/// A claim's name, or a dotted path into objects: no empty part.
fn claim(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    if name.is_empty() || name.split('.').any(str::is_empty) {
        return Err("must name a claim (dots walk into objects)".into());
    }
    Ok(name.to_owned())
}

impl StaffSettings {
    /// The identity provider and the claims its tokens are read with, when one is configured.
    pub fn config(&self) -> Result<Option<(IdpConfig, StaffClaims)>, ConfigError> {
        let staff = StaffClaims {
            tenant_claim: self.jwt_tenant_claim.clone(),
            roles_claim: self.jwt_roles_claim.clone(),
            admin_role: self.jwt_admin_role.clone(),
        };
        Ok(self
            .idp
            .config(self.jwt_max_lifetime)?
            .map(|idp| (idp, staff)))
    }
}
