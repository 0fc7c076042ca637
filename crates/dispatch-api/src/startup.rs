//! Builds the one `App` that `serve` runs and the tests drive.

use actix_web::web;
use common::auth::JwtKeys;
use common::auth::idp::IdpVerifier;
use common::db::Pool;
use common::http::{self, OpenApiJson};
use common::service::Context;

use common::settings::FromSource;

use crate::access_log::AccessLog;
use crate::auth::service_keys;
use crate::listener;
use crate::settings::Settings;
use crate::state::AppState;

/// The application: routes, shared state, middleware, and the CORS rules of
/// `CorsSettings::layer` (docs/architecture.md).
pub use common::http::service_app as app;

/// A fresh [`AppState`] serving this service's OpenAPI document.
pub fn state(pool: Pool, keys: JwtKeys) -> AppState {
    AppState::new(pool, keys, OpenApiJson::new(&crate::openapi::document()))
}

impl common::http::Service for AppState {
    fn parts(&self) -> (&Pool, &OpenApiJson) {
        (&self.pool, &self.openapi)
    }

    fn listen_health(&self) -> Option<common::listen::ListenHealth> {
        self.users.listen_health()
    }

    /// The access log's batch lingers only while a request in flight may still join it.
    fn in_flight(&self) -> Option<std::sync::Arc<common::in_flight::InFlight>> {
        self.access_log.in_flight()
    }

    fn routes(cfg: &mut web::ServiceConfig) {
        crate::routes::configure(cfg);
        // The manager's page (`/reports`), after the API's `/reports/response-times`.
        crate::manager::configure(cfg);
        #[cfg(feature = "bench")]
        cfg.configure(crate::bench::configure);
    }
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
    let settings = Settings::from_env()?;
    let tokens = settings.tokens()?;
    let cors = settings.cors();
    let pool = ctx.start().await?;
    let mut state = state(
        pool.clone(),
        service_keys(&ctx.config.jwt_secret, tokens.max_lifetime),
    )
    .with_time_zone(settings.centre_time_zone)
    .with_access_log(AccessLog::start(pool.clone(), settings.access_log()))
    .with_fleet(settings.fleet())
    .with_page_sessions(settings.page_sessions)
    .with_telephony(settings.telephony()?);
    // Only in the benchmark's build: its baseline runs without the access log
    // (bench/access_log/run.sh), and its constant route's file (crate::bench).
    #[cfg(feature = "bench")]
    {
        settings.bench.load_constant();
        if settings.bench.access_log_off() {
            tracing::warn!("BENCH_ACCESS_LOG=off: reads are not recorded (benchmark baseline)");
            state = state.with_access_log(AccessLog::off());
        }
    }
    check_time_zone(&pool, &state).await?;
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
    let listener = listener::spawn(ctx.config.direct_url.clone(), &state, listener::settings());
    // The hospital offload alerts fall due when nobody writes: every replica watches.
    let watcher = crate::realtime::watch::spawn(
        pool.clone(),
        state.clock.clone(),
        crate::realtime::watch::CHECK_INTERVAL,
    );
    let hub = state.hub.clone();
    let access_log = state.access_log.clone();
    let metrics = metrics(&pool);
    // Sockets never end by themselves: on SIGTERM/SIGINT each is sent a close frame, so the
    // drain does not wait for them.
    let served = ctx
        .serve_http_with(
            move || {
                app(
                    state.clone(),
                    metrics.clone(),
                    cors.layer(crate::openapi::methods()),
                )
            },
            move || hub.shutdown(),
        )
        .await;
    listener.abort();
    watcher.abort();
    // The reads recorded before the stop are written before the process ends.
    access_log.flush().await;
    served
}

/// `CENTRE_TIME_ZONE` is one PostgreSQL knows (migrations ran, so the database answers); a
/// database that does not answer now is left to the first report.
async fn check_time_zone(pool: &Pool, state: &AppState) -> anyhow::Result<()> {
    let Ok(conn) = pool.get().await else {
        return Ok(());
    };
    match crate::store::times::day_start(&conn, state.clock.now(), state.time_zone.name()).await {
        Ok(_) => Ok(()),
        Err(diesel::result::Error::DatabaseError(_, info))
            if info.message().contains("time zone") =>
        {
            anyhow::bail!(
                "CENTRE_TIME_ZONE: PostgreSQL does not know the time zone `{}` ({})",
                state.time_zone,
                info.message()
            )
        }
        Err(_) => Ok(()),
    }
}
