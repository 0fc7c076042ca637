//! One seeded database per test and a real server on port 0 to call over HTTP, as the
//! client does.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use actix_web::HttpServer;
use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use common::auth::JwtKeys;
use common::auth::idp::IdpVerifier;
use common::db::Conn;
use common::test_support::TestDb;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::cors::CorsSettings;
use dispatch_api::schema::dispatch::users;
use dispatch_api::startup;
use dispatch_api::state::AppState;
use dispatch_api::{MIGRATIONS, MIGRATIONS_DIR, SCHEMA, auth, seed};
use secrecy::SecretString;
use serde_json::Value;

/// The secret the test servers sign and verify tokens with (also given to a `serve` process).
pub struct Api {
    pub db: TestDb,
    state: AppState,
    keys: JwtKeys,
    pub ids: HashMap<String, i64>,
    /// Where the test's server listens (`http://{addr}`).
    pub addr: std::net::SocketAddr,
    server: ServerHandle,
    http: reqwest::Client,
}

impl Drop for Api {
    fn drop(&mut self) {
        // Stops accepting at once; the stop itself finishes when the runtime next runs.
        drop(self.server.stop(false));
    }
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: actix_web::http::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The whole response; a body that is not JSON is kept as a JSON string.
    pub async fn of(res: reqwest::Response) -> Reply {
        let status = StatusCode::from_u16(res.status().as_u16()).unwrap();
        let mut headers = HeaderMap::new();
        for (name, value) in res.headers() {
            headers.append(
                HeaderName::from_bytes(name.as_str().as_bytes()).unwrap(),
                HeaderValue::from_bytes(value.as_bytes()).unwrap(),
            );
        }
        let bytes = res.bytes().await.unwrap();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a problem+json with this status and code; returns the named field, if any.
    pub fn problem(&self, status: u16, code: &str) -> Option<String> {
        assert_eq!(self.status.as_u16(), status, "{}", self.body);
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json")
        );
        assert_eq!(self.body["code"], code, "{}", self.body);
        assert_eq!(self.body["status"], status);
        self.body["errors"][0]["field"].as_str().map(str::to_owned)
    }

    pub fn ok(&self) -> &Value {
        assert_eq!(self.status, StatusCode::OK, "{}", self.body);
        &self.body
    }

    pub fn array(&self) -> &Vec<Value> {
        self.ok().as_array().expect("a JSON array")
    }
}

/// The keys of a JSON object, to compare with the exact set a route promises.
pub fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

pub fn set<'a>(items: &[&'a str]) -> BTreeSet<&'a str> {
    items.iter().copied().collect()
}

/// The secret the test servers sign and verify their own tokens with.
pub const SECRET: &str = "test-secret-test-secret-test-secret!";

/// The test servers' keys: the service's own, as `serve` builds them.
pub fn service_keys() -> JwtKeys {
    auth::service_keys(&SecretString::from(SECRET), auth::DEFAULT_MAX_LIFETIME)
}

/// A fresh database with the test-scale demo data: seeded once per run (anchored at that
/// moment, through the API's own writes), then cloned for each test.
pub async fn seeded_db() -> TestDb {
    TestDb::seeded(SCHEMA, MIGRATIONS, MIGRATIONS_DIR, async |pool| {
        let started = std::time::Instant::now();
        seed::run_with(&mut pool.get().await.unwrap(), seed::Scale::Test)
            .await
            .unwrap();
        // Visible with --nocapture: what the demo data costs, once per run.
        eprintln!("seed (test scale) took {:?}", started.elapsed());
    })
    .await
}

impl Api {
    /// A fresh database with the test-scale demo data.
    pub async fn new() -> Api {
        Self::with(CorsSettings::default(), None).await
    }

    /// [`Api::new`] with browsers of other origins allowed by `cors` and, when given, an
    /// identity provider's tokens accepted.
    pub async fn with(cors: CorsSettings, idp: Option<IdpVerifier>) -> Api {
        Self::build(cors, idp, None, None).await
    }

    /// [`Api::new`] on a manual clock: every write records the clock's time.
    pub async fn at(clock: common::Clock) -> Api {
        Self::build(CorsSettings::default(), None, Some(clock), None).await
    }

    /// [`Api::new`] whose access log lets a batch linger for `linger`.
    pub async fn lingering(linger: Duration) -> Api {
        Self::build(CorsSettings::default(), None, None, Some(linger)).await
    }

    /// [`Api::at`] for a centre in `zone` (`CENTRE_TIME_ZONE`).
    pub async fn at_zone(clock: common::Clock, zone: chrono_tz::Tz) -> Api {
        Self::build_with(
            CorsSettings::default(),
            None,
            Some(clock),
            None,
            Some(zone),
            Default::default(),
        )
        .await
    }

    /// [`Api::at`] with the telephone configured (`PHONE_SECRET`, `TELEPHONY_TOKEN`, ...).
    pub async fn phoned(
        clock: common::Clock,
        telephony: dispatch_api::telephony::Telephony,
    ) -> Api {
        Self::build_with(
            CorsSettings::default(),
            None,
            Some(clock),
            None,
            None,
            telephony,
        )
        .await
    }

    async fn build(
        cors: CorsSettings,
        idp: Option<IdpVerifier>,
        clock: Option<common::Clock>,
        linger: Option<Duration>,
    ) -> Api {
        Self::build_with(cors, idp, clock, linger, None, Default::default()).await
    }

    async fn build_with(
        cors: CorsSettings,
        idp: Option<IdpVerifier>,
        clock: Option<common::Clock>,
        linger: Option<Duration>,
        zone: Option<chrono_tz::Tz>,
        telephony: dispatch_api::telephony::Telephony,
    ) -> Api {
        let db = seeded_db().await;
        let keys = service_keys();
        let mut state = startup::state(db.pool(), keys.clone()).with_telephony(telephony);
        if let Some(zone) = zone {
            state = state.with_time_zone(zone);
        }
        if let Some(linger) = linger {
            let settings = dispatch_api::access_log::AccessLogSettings {
                linger,
                ..Default::default()
            };
            state = state.with_access_log(dispatch_api::access_log::AccessLog::start(
                db.pool(),
                settings,
            ));
        }
        if let Some(idp) = idp {
            state = state.with_idp(idp);
        }
        if let Some(clock) = clock {
            state = state.with_clock(clock);
        }
        let metrics = startup::metrics(&db.pool());
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = tcp.local_addr().unwrap();
        let app_state = state.clone();
        let server = HttpServer::new(move || {
            startup::app(
                app_state.clone(),
                metrics.clone(),
                cors.layer(dispatch_api::openapi::methods()),
            )
        })
        .workers(1)
        .disable_signals()
        .listen(tcp)
        .unwrap()
        .run();
        let handle = server.handle();
        tokio::spawn(server);
        let logins: Vec<&str> = seed::DEMO_USERS.iter().map(|u| u.0).collect();
        let ids = users::table
            .filter(users::login.eq_any(logins))
            .select((users::login, users::id))
            .load::<(String, i64)>(&mut db.pool().get().await.unwrap())
            .await
            .unwrap()
            .into_iter()
            .collect();
        Api {
            db,
            state,
            keys,
            ids,
            addr,
            server: handle,
            http: reqwest::Client::new(),
        }
    }

    /// The app's reference data in memory.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The cache the app authenticates through (idle unless a listener runs).
    pub fn user_cache(&self) -> dispatch_api::user_cache::UserCache {
        self.state.users.clone()
    }

    pub fn id(&self, login: &str) -> i64 {
        self.ids[login]
    }

    pub fn token(&self, login: &str) -> String {
        self.token_for(login, Duration::from_secs(300))
    }

    /// A token of `login` that expires after `ttl`.
    pub fn token_for(&self, login: &str, ttl: Duration) -> String {
        self.token_of(self.id(login), ttl)
    }

    /// A token of the user `id` (any user of the data, not only the demo logins).
    pub fn token_of(&self, id: i64, ttl: Duration) -> String {
        auth::issue_token(&self.keys, id, ttl).unwrap()
    }

    /// An active regulating physician who is not the `regulador` of the tokens.
    pub async fn other_regulator(&self) -> i64 {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use dispatch_api::schema::dispatch::{profiles, users};
        users::table
            .inner_join(profiles::table)
            .filter(profiles::title.eq("MEDICO_REGULADOR"))
            .filter(users::status.eq("ativo"))
            .filter(users::login.ne("regulador"))
            .select(users::id)
            .order_by(users::id)
            .first(&mut self.conn().await)
            .await
            .expect("a second regulating physician in the seed")
    }

    pub async fn conn(&self) -> Conn {
        self.db.pool().get().await.unwrap()
    }

    /// GET `uri` as `login` (no token when `None`).
    pub async fn get_as(&self, login: Option<&str>, uri: &str) -> Reply {
        let token = login.map(|l| self.token(l));
        self.get_with_token(token.as_deref(), uri).await
    }

    pub async fn get_with_token(&self, token: Option<&str>, uri: &str) -> Reply {
        let mut req = self.request(reqwest::Method::GET, uri);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        Reply::of(req.send().await.unwrap()).await
    }

    /// A request to this test's server; `uri` is the path and query.
    pub fn request(&self, method: reqwest::Method, uri: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("http://{}{uri}", self.addr))
    }

    pub async fn get(&self, login: &str, uri: &str) -> Reply {
        self.get_as(Some(login), uri).await
    }

    /// GET `uri` as the user `id` (any user of the data, not only the demo logins).
    pub async fn get_as_user(&self, id: i64, uri: &str) -> Reply {
        let token = self.token_of(id, Duration::from_secs(300));
        self.get_with_token(Some(&token), uri).await
    }
}

/// Opens a socket at `url`, subscribes to incident `id` and returns the first text answer.
pub async fn subscribe_once(url: String, id: i64) -> Value {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    ws.send(Message::text(
        serde_json::json!({"type": "subscribe", "incident_id": id}).to_string(),
    ))
    .await
    .unwrap();
    loop {
        if let Message::Text(t) = ws.next().await.unwrap().unwrap() {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

/// The access log's entries, one row each: the view over its batches
/// (docs/dispatch-access-log.md, "How it is stored"), which diesel's generated schema does not
/// list.
pub mod access_log_view {
    diesel::table! {
        dispatch.patient_access_log (batch_id, position) {
            batch_id -> Int8,
            position -> Int8,
            incident_id -> Int8,
            user_id -> Int8,
            route -> Text,
            at -> Timestamptz,
        }
    }
}
