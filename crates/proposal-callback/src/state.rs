//! The state every handler shares, built once by [`crate::startup`].

use std::sync::Arc;
use std::time::Duration;

use common::Clock;
use common::auth::JwtKeys;
use common::auth::idp::IdpVerifier;
use common::db::Pool;
use common::http::OpenApiJson;
use common::pages::SessionRules;

use crate::auth::admin::{AdminTokens, StaffClaims};
use crate::auth::jwt::admin_keys;
use crate::ratelimit::{FailureLimiter, TrustedProxies};
use crate::registration::client::Registrar;
use crate::registration::config::RegistrationConfig;

/// Failed Basic-token attempts one address may make per window before it gets 429.
pub const AUTH_MAX_FAILURES: u32 = 10;
pub const AUTH_FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// Everything the handlers share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    /// Callback tokens (issued by `/callback/auth`, verified on callbacks).
    pub keys: JwtKeys,
    /// What opens the admin routes: admin tokens of `keys`' secret, and the identity
    /// provider's staff tokens when configured.
    pub admin_tokens: AdminTokens,
    /// The OpenAPI document `/openapi.json` serves, rendered once.
    pub openapi: OpenApiJson,
    /// Failed `/callback/auth` attempts per client address; the counts are in the
    /// database, shared by every worker and replica.
    pub auth_limiter: FailureLimiter,
    /// RegisterCallback's configuration and HTTP client.
    pub registrar: Arc<Registrar>,
    /// Where "now" comes from: what a receipt, a status change, an email and an operator's
    /// action are timestamped with. The system's clock in `serve`; tests set a manual one.
    pub clock: Clock,
    /// How long the console's sessions live (`PAGE_SESSION_IDLE`, `PAGE_SESSION_MAX`).
    pub page_sessions: SessionRules,
}

impl AppState {
    pub fn new(
        pool: Pool,
        keys: JwtKeys,
        openapi: OpenApiJson,
        registration: RegistrationConfig,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            pool,
            admin_tokens: AdminTokens::new(admin_keys(&keys)),
            keys,
            openapi,
            auth_limiter: FailureLimiter::new(
                AUTH_MAX_FAILURES,
                AUTH_FAILURE_WINDOW,
                TrustedProxies::none(),
            ),
            registrar: Arc::new(Registrar::new(registration)?),
            clock: Clock::system(),
            page_sessions: SessionRules::default(),
        })
    }

    /// The same state, asking `clock` for the time (a manual clock in tests).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The same state, ending the console's sessions by `rules`.
    pub fn with_page_sessions(mut self, rules: SessionRules) -> Self {
        self.page_sessions = rules;
        self
    }

    /// The same state, accepting the identity provider's staff tokens on the admin routes too.
    pub fn with_admin_idp(mut self, idp: IdpVerifier, staff: StaffClaims) -> Self {
        self.admin_tokens = self.admin_tokens.with_idp(idp, staff);
        self
    }

    /// The same state, reading `X-Forwarded-For` from `proxies` (`TRUSTED_PROXIES`).
    pub fn with_trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.auth_limiter = FailureLimiter::new(AUTH_MAX_FAILURES, AUTH_FAILURE_WINDOW, proxies);
        self
    }
}
