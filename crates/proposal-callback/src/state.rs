//! The state every handler shares, built once by [`crate::startup`].

use std::sync::Arc;
use std::time::Duration;

use common::auth::JwtKeys;
use common::db::Pool;
use common::http::OpenApiJson;

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
    pub keys: JwtKeys,
    /// The OpenAPI document `/openapi.json` serves, rendered once.
    pub openapi: OpenApiJson,
    /// Failed `/callback/auth` attempts per client address; the counts are in the
    /// database, shared by every worker and replica.
    pub auth_limiter: FailureLimiter,
    /// RegisterCallback's configuration and HTTP client.
    pub registrar: Arc<Registrar>,
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
            keys,
            openapi,
            auth_limiter: FailureLimiter::new(
                AUTH_MAX_FAILURES,
                AUTH_FAILURE_WINDOW,
                TrustedProxies::none(),
            ),
            registrar: Arc::new(Registrar::new(registration)?),
        })
    }

    /// The same state, reading `X-Forwarded-For` from `proxies` (`TRUSTED_PROXIES`).
    pub fn with_trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.auth_limiter = FailureLimiter::new(AUTH_MAX_FAILURES, AUTH_FAILURE_WINDOW, proxies);
        self
    }
}
