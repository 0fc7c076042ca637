//! Every variable dispatch-api reads, in one place (docs/operations.md, "Configuration"):
//! the shared ones ([`CommonSettings`]), the tokens' maximum lifetime, the identity provider
//! ([`IdpSettings`]) and the browser origins. Read once, at start, with
//! [`common::settings::FromSource`]; `dispatch-api serve --help` lists them with their
//! defaults.

use chrono_tz::Tz;
use std::time::Duration;

use clap::Args;
use common::config::ConfigError;
use common::pages::SessionRules;
use common::settings::{
    CommonSettings, IdpSettings, OPTIONAL_SECRETS, duration, lifetime, positive_duration, secret,
    show,
};
use secrecy::{ExposeSecret, SecretString};

use crate::access_log::{AccessLogSettings, DEFAULT_RETENTION, LINGER, MAX_WRITERS, WRITERS};

use crate::auth::{DEFAULT_MAX_LIFETIME, TokenSettings};
use crate::cors::{self, CorsSettings};
use crate::domain::fleet::{DEFAULT_POSITION_MAX_AGE, DEFAULT_SPEED_KMH, Rules};
use crate::state::DEFAULT_TIME_ZONE;
use crate::telephony::{DEFAULT_CREDENTIALS_TTL, SipAccounts, Telephony};

#[cfg(test)]
mod tests;

/// Every setting of dispatch-api.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    #[command(flatten)]
    pub common: CommonSettings,

    #[command(flatten)]
    pub lifetime: TokenLifetime,

    #[command(flatten)]
    pub idp: IdpSettings,

    /// Only in the benchmarks' build (cargo feature `bench`).
    #[cfg(feature = "bench")]
    #[command(flatten)]
    pub bench: crate::bench::BenchSettings,

    /// Origins of browser clients allowed to call the API (scheme://host[:port], comma-separated); unset: none, and no CORS header is sent
    #[arg(long, env = cors::VAR, value_parser = CorsSettings::parse)]
    pub cors_allowed_origins: Option<CorsSettings>,

    /// The centre's time zone (an IANA name of the tz database, which PostgreSQL must know too): where its days and hours begin in the response-time reports and the offload board, and the clock the manager's pages show times on
    #[arg(long, env = "CENTRE_TIME_ZONE", default_value = DEFAULT_TIME_ZONE, value_parser = time_zone)]
    pub centre_time_zone: Tz,

    /// How long the access log keeps its entries (who read which incident's patient data; docs/dispatch-access-log.md)
    #[arg(long, env = "ACCESS_LOG_RETENTION", default_value = show(DEFAULT_RETENTION), value_parser = positive_duration)]
    pub access_log_retention: Duration,

    /// How long a batch of access-log entries gathers from its first entry before one INSERT writes it (0ms: as soon as the writer is free; at most 10s); each read waits for its entry's commit, so this adds to those reads' latency
    #[arg(long, env = "ACCESS_LOG_LINGER", default_value = show(LINGER), value_parser = linger)]
    pub access_log_linger: Duration,

    /// How many batches of access-log entries may be written at once, each on a connection of its own beside the pool (1 to 8): with 2, a batch's INSERT runs while the one before it is still committing, where a commit is slow (a synchronous standby); their reads are answered in order all the same
    #[arg(long, env = "ACCESS_LOG_WRITERS", default_value_t = WRITERS, value_parser = writers)]
    pub access_log_writers: usize,

    /// Age after which a unit's reported position is stale and its base counts instead, in the unit recommendation
    #[arg(long, env = "POSITION_MAX_AGE", default_value = show(DEFAULT_POSITION_MAX_AGE), value_parser = lifetime)]
    pub position_max_age: Duration,

    /// Average speed (km/h) of the recommendation's arrival estimate over the straight-line distance
    #[arg(long, env = "UNIT_SPEED_KMH", default_value_t = DEFAULT_SPEED_KMH, value_parser = speed)]
    pub unit_speed_kmh: f64,

    /// The secret shared with the switch that the softphones' SIP credentials are signed with (Kamailio's auth_ephemeral), at least 32 bytes; unset: no credentials (docs/dispatch-telephony.md)
    #[arg(long, env = "PHONE_SECRET", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub phone_secret: Option<SecretString>,

    /// The softphones' SIP domain (required with PHONE_SECRET)
    #[arg(long, env = "SIP_DOMAIN")]
    pub sip_domain: Option<String>,

    /// The switch's WebSocket URL for WebRTC softphones (wss://...), told with the credentials
    #[arg(long, env = "SIP_WS_URL")]
    pub sip_ws_url: Option<String>,

    /// How long a softphone's SIP credentials last
    #[arg(long, env = "PHONE_CREDENTIALS_TTL", default_value = show(DEFAULT_CREDENTIALS_TTL), value_parser = lifetime)]
    pub phone_credentials_ttl: Duration,

    /// The bearer token the switch sends with its call events (POST /telephony/events), at least 32 bytes; unset: the events are refused
    #[arg(long, env = "TELEPHONY_TOKEN", help_heading = OPTIONAL_SECRETS, value_parser = secret)]
    pub telephony_token: Option<SecretString>,

    /// `PAGE_SESSION_IDLE`, `PAGE_SESSION_MAX`: the manager page's sessions.
    #[command(flatten)]
    pub page_sessions: SessionRules,
}

/// The shortest telephone secret: as the service's own JWT key.
const MIN_TELEPHONY_SECRET: usize = 32;

/// The access log's linger: a duration of at most 10 s (zero allowed).
fn linger(raw: &str) -> Result<Duration, String> {
    match duration(raw)? {
        d if d > Duration::from_secs(10) => Err("must be at most 10s".into()),
        d => Ok(d),
    }
}

/// The access log's writer connections: 1 to [`MAX_WRITERS`].
fn writers(raw: &str) -> Result<usize, String> {
    raw.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_WRITERS).contains(n))
        .ok_or_else(|| format!("`{raw}` is not a number of connections from 1 to {MAX_WRITERS}"))
}

/// A speed in km/h: 1 to 300.
fn speed(raw: &str) -> Result<f64, String> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| (1.0..=300.0).contains(v))
        .ok_or_else(|| format!("`{raw}` is not a speed in km/h between 1 and 300"))
}

/// A zone of the tz database, named exactly (`America/Sao_Paulo`, `UTC`; no fixed offset such
/// as `-03:00`); PostgreSQL says at start whether it knows it too.
fn time_zone(raw: &str) -> Result<Tz, String> {
    raw.parse::<Tz>().map_err(|_| {
        format!("`{raw}` is not a time zone of the tz database such as America/Sao_Paulo")
    })
}

/// `JWT_MAX_LIFETIME`, on its own for the `token` command, which reads nothing else.
#[derive(Debug, Clone, Args)]
pub struct TokenLifetime {
    /// Longest lifetime (exp - iat) of a token, the service's own or the identity provider's
    #[arg(long, env = "JWT_MAX_LIFETIME", default_value = show(DEFAULT_MAX_LIFETIME), value_parser = lifetime)]
    pub jwt_max_lifetime: Duration,
}

impl Settings {
    /// The tokens' rules: one maximum lifetime for ours and the identity provider's.
    pub fn tokens(&self) -> Result<TokenSettings, ConfigError> {
        let max_lifetime = self.lifetime.jwt_max_lifetime;
        Ok(TokenSettings {
            max_lifetime,
            idp: self.idp.config(max_lifetime)?,
        })
    }

    /// The access log writer's settings.
    pub fn access_log(&self) -> AccessLogSettings {
        AccessLogSettings {
            retention: self.access_log_retention,
            linger: self.access_log_linger,
            writers: self.access_log_writers,
            ..AccessLogSettings::default()
        }
    }

    /// The recommendation's rules: when a position is stale, how fast units travel.
    pub fn fleet(&self) -> Rules {
        Rules {
            max_age: chrono::Duration::from_std(self.position_max_age)
                .unwrap_or(chrono::Duration::MAX),
            speed_kmh: self.unit_speed_kmh,
        }
    }

    /// The telephone: the softphones' accounts when `PHONE_SECRET` is set (with `SIP_DOMAIN`),
    /// the switch's events when `TELEPHONY_TOKEN` is.
    pub fn telephony(&self) -> Result<Telephony, ConfigError> {
        let long_enough = |name: &str, s: &SecretString| {
            if s.expose_secret().len() < MIN_TELEPHONY_SECRET {
                Err(ConfigError::Invalid {
                    name: name.into(),
                    reason: format!("must be at least {MIN_TELEPHONY_SECRET} bytes"),
                })
            } else {
                Ok(())
            }
        };
        let sip = match (&self.phone_secret, &self.sip_domain) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(ConfigError::Missing {
                    name: "SIP_DOMAIN".into(),
                    hint: "the softphones' SIP domain, needed with PHONE_SECRET".into(),
                });
            }
            (Some(secret), Some(domain)) => {
                long_enough("PHONE_SECRET", secret)?;
                Some(SipAccounts::new(
                    secret.clone(),
                    domain.clone(),
                    self.sip_ws_url.clone(),
                    self.phone_credentials_ttl,
                ))
            }
        };
        if let Some(token) = &self.telephony_token {
            long_enough("TELEPHONY_TOKEN", token)?;
        }
        Ok(Telephony::new(sip, self.telephony_token.clone()))
    }

    /// The allowed origins (none when `CORS_ALLOWED_ORIGINS` is unset).
    pub fn cors(&self) -> CorsSettings {
        self.cors_allowed_origins.clone().unwrap_or_default()
    }
}
