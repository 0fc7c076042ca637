//! Operational routes every service serves, metrics, the OpenAPI document, the fallback
//! for unknown routes, and the container healthcheck.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpResponse, web};
use actix_web_prom::{PrometheusMetrics, PrometheusMetricsBuilder};
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntCounter, IntGauge, Opts, Registry};
use serde::Serialize;
use utoipa::ToSchema;

use crate::Problem;
use crate::db::{self, Pool};
use crate::in_flight::InFlight;
use crate::listen::ListenHealth;

#[derive(Serialize, ToSchema)]
pub struct Health {
    #[schema(example = "ok")]
    pub status: &'static str,
}

/// Liveness: 200 while the process runs.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, body = Health)))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

// Ready when the database answers and takes writes and, in a service that listens for the
// database's notifications, when that listener is known to hear them; the 503's `detail` says
// which is not (docs/operations.md, "Network faults"). The doc comment is the OpenAPI text.
/// Readiness: 200 when the database answers, 503 otherwise.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, body = Health),
              (status = 503, body = crate::problem::ProblemDocument, content_type = "application/problem+json")))]
pub async fn readyz(
    pool: web::Data<Pool>,
    listener: Option<web::Data<ListenHealth>>,
) -> Result<HttpResponse, Problem> {
    match db::readiness(&pool).await {
        db::Readiness::Ready => {}
        db::Readiness::Unreachable => return Err(Problem::unavailable()),
        db::Readiness::ReadOnly => {
            return Err(Problem::new(
                actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "the service's database is read-only (a standby, or a primary being demoted): \
                 writes are refused until it is promoted or DATABASE_URL points at the primary",
            )
            .with_retry_after(1));
        }
    }
    if let Some(listener) = listener
        && !listener.is_hearing()
    {
        return Err(Problem::new(
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            format!(
                "the service does not hear the database's notifications ({}); it reconnects \
                 by itself, and until then real-time updates pause and users are read from the \
                 database",
                listener.why_not()
            ),
        )
        .with_retry_after(1));
    }
    Ok(HttpResponse::Ok().json(Health { status: "ready" }))
}

/// Prometheus text; the middleware built by [`metrics`] answers it before any handler.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain")))]
pub async fn metrics_doc() -> HttpResponse {
    HttpResponse::NotFound().finish()
}

/// The service's OpenAPI document, serialised once at start.
#[derive(Clone)]
pub struct OpenApiJson(pub web::Bytes);

impl OpenApiJson {
    pub fn new(doc: &utoipa::openapi::OpenApi) -> Self {
        Self(web::Bytes::from(
            serde_json::to_vec(doc).expect("OpenAPI document serialises"),
        ))
    }
}

pub async fn openapi_json(doc: web::Data<OpenApiJson>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(doc.0.clone())
}

/// `/healthz`, `/readyz`, `/openapi.json` and the reference pages at `/docs`. (`/metrics` is
/// the middleware's.)
pub fn operational_routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/healthz", web::get().to(healthz))
        .route("/readyz", web::get().to(readyz))
        .route("/openapi.json", web::get().to(openapi_json))
        .configure(crate::docs::routes);
}

/// Fallback for unknown paths: a problem+json 404, like every other error.
pub async fn not_found() -> Result<HttpResponse, Problem> {
    Err(Problem::not_found("no route matches this path and method"))
}

/// Request counts and latency histograms per route pattern and status, and pool usage.
pub fn metrics(namespace: &str, pool: &Pool) -> PrometheusMetrics {
    let registry = Registry::new();
    registry
        .register(Box::new(PoolCollector::new(namespace, pool.clone())))
        .expect("pool metrics register once per registry");
    registry
        .register(Box::new(ListenCollector::new(namespace)))
        .expect("listener metrics register once per registry");
    PrometheusMetricsBuilder::new(namespace)
        .endpoint("/metrics")
        .registry(registry)
        .mask_unmatched_patterns("UNMATCHED")
        .exclude("/metrics")
        .build()
        .expect("metrics build")
}

/// Reads the pool's state at scrape time.
struct PoolCollector {
    pool: Pool,
    size: IntGauge,
    available: IntGauge,
    waiting: IntGauge,
    max: IntGauge,
}

impl PoolCollector {
    fn new(namespace: &str, pool: Pool) -> Self {
        let gauge = |name: &str, help: &str| {
            IntGauge::with_opts(Opts::new(name, help).namespace(namespace)).expect("valid gauge")
        };
        Self {
            pool,
            size: gauge("db_pool_connections", "connections open in the pool"),
            available: gauge("db_pool_idle", "idle connections in the pool"),
            waiting: gauge("db_pool_waiting", "requests waiting for a connection"),
            max: gauge("db_pool_max", "maximum size of the pool"),
        }
    }
}

impl Collector for PoolCollector {
    fn desc(&self) -> Vec<&Desc> {
        [&self.size, &self.available, &self.waiting, &self.max]
            .into_iter()
            .flat_map(|g| g.desc())
            .collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let s = self.pool.status();
        self.size.set(s.size as i64);
        self.available.set(s.available as i64);
        self.waiting.set(s.waiting as i64);
        self.max.set(s.max_size as i64);
        [&self.size, &self.available, &self.waiting, &self.max]
            .into_iter()
            .flat_map(|g| g.collect())
            .collect()
    }
}

/// The listeners' heartbeats that were not heard back in time (`crate::listen`), read at
/// scrape time.
struct ListenCollector {
    misses: IntCounter,
}

impl ListenCollector {
    fn new(namespace: &str) -> Self {
        Self {
            misses: IntCounter::with_opts(
                Opts::new(
                    "listener_heartbeat_misses_total",
                    "heartbeats of the LISTEN connection not heard back within DATABASE_TIMEOUT, \
                     or failed (each drops the connection, which reconnects and resyncs)",
                )
                .namespace(namespace),
            )
            .expect("valid counter"),
        }
    }
}

impl Collector for ListenCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.misses.desc()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let seen = crate::listen::heartbeat_misses();
        let counted = self.misses.get();
        if seen > counted {
            self.misses.inc_by(seen - counted);
        }
        self.misses.collect()
    }
}

/// The container healthcheck: `GET /healthz` on the bind address, exit 0 on 200. Plain
/// std networking, so the runtime image needs no curl.
pub fn healthcheck(bind: &str) -> std::process::ExitCode {
    let probe = || -> std::io::Result<bool> {
        let addr = bind
            .replace("0.0.0.0", "127.0.0.1")
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other("no address"))?;
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(2)))?;
        stream.write_all(b"GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head)?;
        Ok(head.starts_with(b"HTTP/1.") && &head[9..12] == b"200")
    };
    match probe() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("healthcheck: {bind}/healthz did not answer 200");
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("healthcheck: {bind}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// What a service's `App` is built from: its shared state, which holds the pool (for
/// `/readyz`) and the rendered OpenAPI document, and knows the service's routes.
pub trait Service: Clone + 'static {
    /// The pool and the rendered OpenAPI document the operational routes serve.
    fn parts(&self) -> (&Pool, &OpenApiJson);
    /// Registers every route of the service (the state is already `web::Data<Self>`).
    fn routes(cfg: &mut web::ServiceConfig);
    /// The health of the service's `LISTEN` connection, when it has one: `/readyz` is 503
    /// while it is not known to hear.
    fn listen_health(&self) -> Option<ListenHealth> {
        None
    }
    /// The count of the requests in flight, when the service reads it ([`InFlight`]): the
    /// `App` then counts every request while it is served.
    fn in_flight(&self) -> Option<Arc<InFlight>> {
        None
    }
}

/// A service's `App`: [`app`] with `state` as `web::Data` and the service's routes, and the
/// browsers' CORS rules (`cors`; none, no CORS header) outermost, so that every answer,
/// refusals included, carries them. `metrics` is built once per process (or per test) and
/// shared by every worker.
pub fn service_app<S: Service>(
    state: S,
    metrics: PrometheusMetrics,
    cors: Option<actix_cors::Cors>,
) -> actix_web::App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let enabled = cors.is_some();
    let (pool, openapi) = state.parts();
    let listen_health = state.listen_health();
    let in_flight = state.in_flight();
    app(pool.clone(), openapi.clone(), metrics, move |cfg| {
        if let Some(health) = listen_health {
            cfg.app_data(web::Data::new(health));
        }
        cfg.app_data(web::Data::new(state));
        S::routes(cfg);
    })
    // Inside the CORS layer and outside the routes: a request counts from the middleware that
    // admitted it until its answer is ready.
    .wrap_fn(move |req, srv| {
        use actix_web::dev::Service as _;
        let request = in_flight.as_ref().map(InFlight::enter);
        let answer = srv.call(req);
        async move {
            let answer = answer.await;
            drop(request);
            answer
        }
    })
    .wrap(actix_web::middleware::Condition::new(
        enabled,
        cors.unwrap_or_default(),
    ))
}

/// The App both services run: their routes (added by `configure`, which also registers the
/// service's own app data), the operational routes, a problem+json 404, metrics, and the
/// request id outermost so every response and log line carries it.
pub fn app<F>(
    pool: Pool,
    openapi: OpenApiJson,
    metrics: PrometheusMetrics,
    configure: F,
) -> actix_web::App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
>
where
    F: FnOnce(&mut web::ServiceConfig),
{
    actix_web::App::new()
        .app_data(web::Data::new(pool))
        .app_data(web::Data::new(openapi))
        .configure(configure)
        .configure(operational_routes)
        .default_service(web::to(not_found))
        .wrap(metrics)
        .wrap(actix_web::middleware::from_fn(crate::telemetry::request_id))
}

/// OpenAPI modifier: declares the `bearer` (JWT) security scheme both services use.
pub struct BearerJwt;

impl utoipa::Modify for BearerJwt {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "bearer",
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .bearer_format("JWT")
                        .build(),
                ),
            );
    }
}
