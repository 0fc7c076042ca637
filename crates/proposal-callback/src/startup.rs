//! Builds the one `App` that `serve` runs and the tests drive, and runs it.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, HttpServer, web};
use common::auth::JwtKeys;
use common::config::CommonConfig;
use common::db::{self, Pool, PoolSettings};
use common::http::{self, OpenApiJson};

use crate::email::config::EmailConfig;
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
) -> anyhow::Result<()> {
    if config.dev {
        tracing::warn!("DEV MODE: tokens are signed with the public development key");
    } else {
        common::auth::check_secret(&config.jwt_secret, "JWT_SECRET")?;
    }
    let sweep = crate::proposal::sweep::SweepConfig::from_source(&common::config::Env)?;
    let applied = db::migrate_async(
        config.database_url.clone(),
        crate::SCHEMA,
        crate::MIGRATIONS,
    )
    .await?;
    tracing::info!(?applied, "migrations up to date");
    let pool = db::pool(&config.database_url, &pool_settings(config.pool_size))?;
    crate::email::worker::start(&pool, &email).await?;
    crate::proposal::sweep::start(&pool, sweep);
    tracing::info!(
        callback_base_url = %registration.callback_base_url,
        configured = ?registration.configured(),
        "callback registration"
    );
    let keys = crate::auth::jwt::service_keys(&config.jwt_secret);
    let state = state(pool.clone(), keys, registration)?;
    let metrics = metrics(&pool);
    tracing::info!(bind = %config.bind, "proposal-callback listening");
    HttpServer::new(move || app(state.clone(), metrics.clone()))
        .bind(&config.bind)?
        .shutdown_timeout(25)
        .run()
        .await?;
    tracing::info!("proposal-callback stopped");
    Ok(())
}
