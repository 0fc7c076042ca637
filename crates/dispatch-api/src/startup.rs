//! Builds the one `App` that `serve` runs and the tests drive.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::Condition;
use actix_web::{App, web};
use common::auth::JwtKeys;
use common::auth::idp::IdpVerifier;
use common::config::Env;
use common::db::{Pool, PoolSettings};
use common::http::{self, OpenApiJson};
use common::service::Context;

use crate::auth::{TokenSettings, service_keys};
use crate::cors::CorsSettings;
use crate::realtime::listener;
use crate::state::AppState;

/// A fresh [`AppState`] serving this service's OpenAPI document.
pub fn state(pool: Pool, keys: JwtKeys) -> AppState {
    AppState::new(pool, keys, OpenApiJson::new(&crate::openapi::document()))
}

pub fn pool_settings(size: usize) -> PoolSettings {
    crate::SKELETON.pool_settings(size)
}

/// The application: routes, shared state, middleware, no CORS. `metrics` is built once per
/// process (or per test) and shared by every worker.
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
    app_with_cors(state, metrics, CorsSettings::default())
}

/// [`app`] answering the browsers of the origins `cors` allows. CORS is the outermost layer
/// but the request id's, so that refusals (401, 404, 503) carry its headers too.
pub fn app_with_cors(
    state: AppState,
    metrics: actix_web_prom::PrometheusMetrics,
    cors: CorsSettings,
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
            #[cfg(feature = "bench")]
            cfg.configure(crate::bench::configure);
        },
    )
    .wrap(Condition::new(cors.is_enabled(), cors.middleware()))
}

pub fn metrics(pool: &Pool) -> actix_web_prom::PrometheusMetrics {
    http::metrics("dispatch", pool)
}

/// `serve`: migrate, warm the reference data, start this replica's LISTEN connection, then
/// listen until SIGTERM/SIGINT, draining in-flight requests (the skeleton's `serve_http_with`).
pub async fn serve(ctx: Context) -> anyhow::Result<()> {
    // A secret published in the repository's examples signs nothing here; `serve --dev`
    // (docker-compose) accepts it and says so in the log.
    if !ctx.config.dev {
        common::auth::check_secret(&ctx.config.jwt_secret, "JWT_SECRET")?;
    }
    let tokens = TokenSettings::from_source(&Env)?;
    let cors = CorsSettings::from_source(&Env)?;
    let pool = ctx.start().await?;
    let mut state = state(
        pool.clone(),
        service_keys(&ctx.config.jwt_secret, tokens.max_lifetime),
    );
    if let Some(config) = tokens.idp {
        let idp = IdpVerifier::new(config)?;
        tracing::info!(?idp, "accepting the identity provider's tokens");
        // Fetch the keys now so the first request does not wait; a provider that is down is
        // tried again on the first token.
        let warm = idp.clone();
        tokio::spawn(async move {
            if let Err(e) = warm.warm_up().await {
                tracing::warn!(error = %e, "the identity provider's keys are not loaded yet");
            }
        });
        state = state.with_idp(idp);
    }
    if cors.is_enabled() {
        tracing::info!(origins = ?cors.allowed_origins, "browsers of these origins may call");
    }
    // Warm the reference data now; if the database is not up yet the first request loads it.
    if let Err(e) = state.catalog.refresh(&pool).await {
        tracing::warn!(error = %e, "reference data not loaded at start");
    }
    // The one LISTEN connection of this replica: user cache, WebSocket hub, reference data.
    let listener = listener::spawn(
        ctx.config.database_url.clone(),
        &state,
        listener::settings(),
    );
    let hub = state.hub.clone();
    let metrics = metrics(&pool);
    // Sockets never end by themselves: on SIGTERM/SIGINT each is sent a close frame, so the
    // drain does not wait for them.
    let served = ctx
        .serve_http_with(
            move || app_with_cors(state.clone(), metrics.clone(), cors.clone()),
            move || hub.shutdown(),
        )
        .await;
    listener.abort();
    served
}
