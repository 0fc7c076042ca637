//! Builds the one `App` that `serve` runs and the tests drive, and runs it.

use actix_web::web;
use common::Clock;
use common::auth::JwtKeys;
use common::auth::idp::IdpVerifier;
use common::db::Pool;
use common::http::{self, OpenApiJson};
use common::service::Context;

use crate::metrics::OutboxMetrics;
use crate::registration::config::RegistrationConfig;
use crate::settings::Settings;
use crate::state::AppState;

/// The application: routes, shared state, middleware (no CORS: the insurers and operators
/// call it from servers and from its own pages).
pub use common::http::service_app as app;

/// The state the handlers share, with the OpenAPI document rendered once.
pub fn state(
    pool: Pool,
    keys: JwtKeys,
    registration: RegistrationConfig,
) -> anyhow::Result<AppState> {
    let openapi = OpenApiJson::new(&crate::openapi::document());
    AppState::new(pool, keys, openapi, registration)
}

impl common::http::Service for AppState {
    fn parts(&self) -> (&Pool, &OpenApiJson) {
        (&self.pool, &self.openapi)
    }

    fn routes(cfg: &mut web::ServiceConfig) {
        crate::routes::configure(cfg);
        // Pages, not API: outside the OpenAPI document.
        crate::console::configure(cfg);
    }
}

pub fn metrics(pool: &Pool) -> actix_web_prom::PrometheusMetrics {
    let metrics = http::metrics("proposal_callback", pool);
    crate::metrics::register(&metrics.registry);
    metrics
}

/// `serve`: migrate, start the email worker, the sweeper and the silence watch, then listen until SIGTERM/SIGINT, draining
/// in-flight requests (the skeleton's `serve_http`).
pub async fn serve(ctx: Context, settings: Settings) -> anyhow::Result<()> {
    let email = settings.email.config()?;
    let registration = settings.registration.config()?;
    let trusted_proxies = settings.trusted_proxies();
    let staff_idp = settings.staff.config()?;
    if !ctx.config.dev {
        common::auth::check_secret(&ctx.config.jwt_secret, "JWT_SECRET")?;
    }
    let sweep = settings.sweep.config();
    let silence = settings.silence.config(&registration.callback_base_url);
    let pool = ctx.start().await?;
    // The one source of "now" of the handlers, the email worker and the sweeper.
    let clock = Clock::system();
    let outbox_metrics = OutboxMetrics::new();
    crate::flow::email_worker::start(&pool, &clock, &email, &outbox_metrics).await?;
    crate::flow::sweep::start(&pool, &clock, sweep);
    crate::flow::silence::start(&pool, &clock, silence);
    crate::flow::retention::start(&pool, &clock);
    tracing::info!(
        callback_base_url = %registration.callback_base_url,
        configured = ?registration.configured(),
        "callback registration"
    );
    if trusted_proxies.is_empty() {
        tracing::info!("TRUSTED_PROXIES is empty: /callback/auth counts failures per TCP peer");
    } else {
        tracing::info!(
            ?trusted_proxies,
            "X-Forwarded-For is read from these proxies only"
        );
    }
    let keys = crate::auth::jwt::service_keys(&ctx.config.jwt_secret);
    let mut state = state(pool.clone(), keys, registration)?
        .with_trusted_proxies(trusted_proxies)
        .with_page_sessions(settings.page_sessions)
        .with_clock(clock);
    if let Some((idp, staff)) = staff_idp {
        tracing::info!(
            issuer = %idp.issuer,
            audience = %idp.audience,
            tenant_claim = %staff.tenant_claim,
            roles_claim = %staff.roles_claim,
            admin_role = %staff.admin_role,
            "admin routes accept the identity provider's staff tokens"
        );
        let verifier = IdpVerifier::new(idp)?;
        // Not fatal: the keys are fetched again on the first token if the provider is down.
        if let Err(e) = verifier.warm_up().await {
            tracing::warn!(error = %e, "identity provider's keys not fetched at start");
        }
        state = state.with_admin_idp(verifier, staff);
    }
    let metrics = metrics(&pool);
    outbox_metrics.register(&metrics.registry);
    ctx.serve_http_with(move || app(state.clone(), metrics.clone(), None), || {})
        .await
}
