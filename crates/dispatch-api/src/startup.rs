//! Builds the one `App` that `serve` runs and the tests drive.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, HttpServer, web};
use common::auth::JwtKeys;
use common::config::CommonConfig;
use common::db::{self, Pool, PoolSettings};
use common::http::{self, OpenApiJson};

use crate::realtime::listener;
use crate::state::AppState;

/// A fresh [`AppState`] serving this service's OpenAPI document.
pub fn state(pool: Pool, keys: JwtKeys) -> AppState {
    AppState::new(pool, keys, OpenApiJson::new(&crate::openapi::document()))
}

pub fn pool_settings(size: usize) -> PoolSettings {
    let mut s = PoolSettings::new(crate::SCHEMA, "dispatch-api");
    s.max_size = size;
    s
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

/// `serve`: migrate, then listen until SIGTERM/SIGINT, draining in-flight requests.
pub async fn serve(config: CommonConfig) -> anyhow::Result<()> {
    if config.dev {
        tracing::warn!(
            "DEV MODE: tokens are signed with the public development key; never expose this server"
        );
    }
    let applied = db::migrate_async(
        config.database_url.clone(),
        crate::SCHEMA,
        crate::MIGRATIONS,
    )
    .await?;
    tracing::info!(?applied, "migrations up to date");
    let pool = db::pool(&config.database_url, &pool_settings(config.pool_size))?;
    let state = state(pool.clone(), JwtKeys::new(&config.jwt_secret));
    // Warm the reference data now; if the database is not up yet the first request loads it.
    if let Err(e) = state.catalog.refresh(&pool).await {
        tracing::warn!(error = %e, "reference data not loaded at start");
    }
    // The one LISTEN connection of this replica: user cache, WebSocket hub, reference data.
    let listener = listener::spawn(config.database_url.clone(), &state, listener::settings());
    let hub = state.hub.clone();
    let metrics = metrics(&pool);
    tracing::info!(bind = %config.bind, "dispatch-api listening");
    let server = HttpServer::new(move || app(state.clone(), metrics.clone()))
        .bind(&config.bind)?
        .shutdown_timeout(25)
        .run();
    // Sockets never end by themselves: on SIGTERM/SIGINT (which actix also hears and starts
    // draining on) each is sent a close frame, so the drain does not wait for them.
    tokio::spawn(async move {
        shutdown_signal().await;
        hub.shutdown();
    });
    server.await?;
    listener.abort();
    tracing::info!("dispatch-api stopped");
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
