//! Builds the one `App` that `serve` runs and the tests drive, and runs it.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, HttpServer, web};
use common::auth::JwtKeys;
use common::config::CommonConfig;
use common::db::{self, Pool, PoolSettings};
use common::http::{self, OpenApiJson};

use crate::email::config::EmailConfig;
use crate::metrics::OutboxMetrics;
use crate::ratelimit::TrustedProxies;
use crate::registration::config::RegistrationConfig;
use crate::state::AppState;

/// The state the handlers share, with the OpenAPI document rendered once.
pub fn state(
    pool: Pool,
    keys: JwtKeys,
    registration: RegistrationConfig,
) -> anyhow::Result<AppState> {
    let openapi = OpenApiJson::new(&crate::openapi::document());
    AppState::new(pool, keys, openapi, registration)
}

pub fn pool_settings(size: usize) -> PoolSettings {
    let mut s = PoolSettings::new(crate::SCHEMA, "proposal-callback");
    s.max_size = size;
    s
}

pub fn app(
    state: AppState,
    metrics: actix_web_prom::PrometheusMetrics,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    http::app(
        state.pool.clone(),
        state.openapi.clone(),
        metrics,
        move |cfg| {
            cfg.app_data(web::Data::new(state))
                .configure(crate::routes::configure);
        },
    )
}

pub fn metrics(pool: &Pool) -> actix_web_prom::PrometheusMetrics {
    let metrics = http::metrics("proposal_callback", pool);
    crate::metrics::register(&metrics.registry);
    metrics
}

/// `serve`: migrate, then listen until SIGTERM/SIGINT, draining in-flight requests.
pub async fn serve(
    config: CommonConfig,
    email: EmailConfig,
    registration: RegistrationConfig,
    trusted_proxies: TrustedProxies,
) -> anyhow::Result<()> {
    if config.dev {
        tracing::warn!("DEV MODE: tokens are signed with the public development key");
    }
    let applied = db::migrate_async(
        config.database_url.clone(),
        crate::SCHEMA,
        crate::MIGRATIONS,
    )
    .await?;
    tracing::info!(?applied, "migrations up to date");
    let pool = db::pool(&config.database_url, &pool_settings(config.pool_size))?;
    let outbox_metrics = OutboxMetrics::new();
    crate::email::worker::start(&pool, &email, &outbox_metrics).await?;
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
    let state = state(pool.clone(), JwtKeys::new(&config.jwt_secret), registration)?
        .with_trusted_proxies(trusted_proxies);
    let metrics = metrics(&pool);
    outbox_metrics.register(&metrics.registry);
    tracing::info!(bind = %config.bind, "proposal-callback listening");
    HttpServer::new(move || app(state.clone(), metrics.clone()))
        .bind(&config.bind)?
        .shutdown_timeout(25)
        .run()
        .await?;
    tracing::info!("proposal-callback stopped");
    Ok(())
}
