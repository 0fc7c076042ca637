//! Builds the one `App` that `serve` runs and the tests drive.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, web};
use common::auth::JwtKeys;
use common::db::{Pool, PoolSettings};
use common::http::{self, OpenApiJson};
use common::service::Context;

use crate::realtime::listener;
use crate::state::AppState;

/// A fresh [`AppState`] serving this service's OpenAPI document.
pub fn state(pool: Pool, keys: JwtKeys) -> AppState {
    AppState::new(pool, keys, OpenApiJson::new(&crate::openapi::document()))
}

pub fn pool_settings(size: usize) -> PoolSettings {
    crate::SKELETON.pool_settings(size)
}

/// The application: routes, shared state, middleware. `metrics` is built once per process
/// (or per test) and shared by every worker.
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
            #[cfg(feature = "bench")]
            cfg.configure(crate::bench::configure);
        },
    )
}

pub fn metrics(pool: &Pool) -> actix_web_prom::PrometheusMetrics {
    http::metrics("dispatch", pool)
}

/// `serve`: migrate, warm the reference data, start this replica's LISTEN connection, then
/// listen until SIGTERM/SIGINT, draining in-flight requests (the skeleton's `serve_http_with`).
pub async fn serve(ctx: Context) -> anyhow::Result<()> {
    let pool = ctx.start().await?;
    let state = state(pool.clone(), JwtKeys::new(&ctx.config.jwt_secret));
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
            move || app(state.clone(), metrics.clone()),
            move || hub.shutdown(),
        )
        .await;
    listener.abort();
    served
}
