//! The telephone's configuration (docs/dispatch-telephony.md): the softphones' SIP accounts
//! (the secret shared with the switch, the SIP domain, the WebSocket URL, how long a set of
//! credentials lasts) and the token the switch's events carry. Built by `settings`, held by
//! `state`; the rules themselves are `domain::call`'s.

use std::time::Duration;

use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;

use crate::domain::call;

/// How long a softphone's credentials last when `PHONE_CREDENTIALS_TTL` is unset: a shift.
pub const DEFAULT_CREDENTIALS_TTL: Duration = Duration::from_secs(12 * 3600);

/// The softphones' SIP accounts.
#[derive(Clone)]
pub struct SipAccounts {
    secret: SecretString,
    pub domain: String,
    pub ws_url: Option<String>,
    pub ttl: Duration,
}

impl std::fmt::Debug for SipAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SipAccounts")
            .field("domain", &self.domain)
            .field("ws_url", &self.ws_url)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// One softphone's credentials.
pub struct Credentials {
    pub username: String,
    pub password: String,
    pub expires_at: DateTime<Utc>,
}

impl SipAccounts {
    pub fn new(
        secret: SecretString,
        domain: String,
        ws_url: Option<String>,
        ttl: Duration,
    ) -> Self {
        Self {
            secret,
            domain,
            ws_url,
            ttl,
        }
    }

    /// `login`'s credentials from `now` (the expiry to the second, as the scheme carries it).
    pub fn credentials(&self, login: &str, now: DateTime<Utc>) -> Credentials {
        let ttl = chrono::Duration::from_std(self.ttl).unwrap_or(chrono::Duration::hours(12));
        let expires_at = DateTime::from_timestamp((now + ttl).timestamp(), 0).unwrap_or(now);
        let (username, password) =
            call::ephemeral_credentials(self.secret.expose_secret().as_bytes(), login, expires_at);
        Credentials {
            username,
            password,
            expires_at,
        }
    }
}

/// The telephone as configured: each part absent until its settings are given.
#[derive(Clone, Debug, Default)]
pub struct Telephony {
    pub sip: Option<SipAccounts>,
    switch_token: Option<SecretString>,
}

impl Telephony {
    pub fn new(sip: Option<SipAccounts>, switch_token: Option<SecretString>) -> Self {
        Self { sip, switch_token }
    }

    /// Whether events are taken at all (a token is configured).
    pub fn takes_events(&self) -> bool {
        self.switch_token.is_some()
    }

    /// Whether `presented` is the switch's token (compared in constant time).
    pub fn is_switch(&self, presented: &str) -> bool {
        self.switch_token
            .as_ref()
            .is_some_and(|t| bool::from(t.expose_secret().as_bytes().ct_eq(presented.as_bytes())))
    }
}
