//! What the HTTP tests share: a real server on 127.0.0.1:0 over the test's own database,
//! seeded with the demo data, and helpers to call it and look into the database.

pub mod mock_insurer;

use std::net::TcpListener;

use actix_web::HttpServer;
use actix_web::dev::ServerHandle;
use common::auth::JwtKeys;
use common::db::{self, Pool};
use common::test_support::TestDb;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::auth::jwt;
use proposal_callback::registration::config::RegistrationConfig;
use proposal_callback::seed::{self, SeedOptions, SeedReport};
use proposal_callback::startup;
use proposal_callback::state::AppState;
use proposal_callback::{MIGRATIONS, MIGRATIONS_DIR, SCHEMA};
use secrecy::SecretString;
use serde_json::Value;

pub const SECRET: &str = "test-secret-test-secret-test-secret-0123";

/// The service's keys, as `serve` builds them (callback tokens; admin tokens derive from them).
pub fn keys() -> JwtKeys {
    jwt::service_keys(&SecretString::from(SECRET))
}

/// One of the nine example payloads, from `tests/fixtures/insurers`.
pub fn example(insurer: &str, outcome: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/insurers/{insurer}/{outcome}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn edited(insurer: &str, outcome: &str, edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&example(insurer, outcome)).unwrap();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

/// A running service over a fresh, seeded database.
pub struct TestApp {
    pub db: TestDb,
    pub base: String,
    pub client: reqwest::Client,
    pub seed: SeedReport,
    pub keys: JwtKeys,
    handle: ServerHandle,
}

/// Starts the service on 127.0.0.1:0 over `pool`.
pub fn serve(state: AppState) -> (String, ServerHandle) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    serve_on(listener, state)
}

fn serve_on(listener: TcpListener, state: AppState) -> (String, ServerHandle) {
    let base = format!("http://{}", listener.local_addr().unwrap());
    let metrics = startup::metrics(&state.pool);
    let server = HttpServer::new(move || startup::app(state.clone(), metrics.clone(), None))
        .workers(2)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    (base, handle)
}

/// The demo data without its history of callbacks: each test counts the receipts, emails
/// and proposals it makes (`tests/it/seed.rs` tests the history).
pub async fn seeded(pool: &Pool) -> SeedReport {
    let mut conn = pool.get().await.unwrap();
    seed::run(&mut conn, &common::Clock::system(), BARE)
        .await
        .unwrap()
}

/// Tenants, integrations, tokens and the nine example proposals.
pub const BARE: SeedOptions = SeedOptions {
    rotate_tokens: false,
    history: false,
};

impl TestApp {
    pub async fn start() -> TestApp {
        Self::start_with(|_| RegistrationConfig::default()).await
    }

    /// With RegisterCallback configured by `registration`, given the service's own base URL.
    pub async fn start_with(registration: impl FnOnce(&str) -> RegistrationConfig) -> TestApp {
        Self::start_custom(registration, |state| state).await
    }

    /// With the state `serve` would build changed by `state` (an identity provider, ...).
    pub async fn start_with_state(state: impl FnOnce(AppState) -> AppState) -> TestApp {
        Self::start_custom(|_| RegistrationConfig::default(), state).await
    }

    async fn start_custom(
        registration: impl FnOnce(&str) -> RegistrationConfig,
        change: impl FnOnce(AppState) -> AppState,
    ) -> TestApp {
        let db = TestDb::new(SCHEMA, MIGRATIONS, MIGRATIONS_DIR).await;
        let seed = seeded(&db.pool()).await;
        // The server gets a pool of its own, so its connections live on its workers.
        let pool = db::pool(db.url(), &proposal_callback::SKELETON.pool_settings(8)).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let own_base = format!("http://{}", listener.local_addr().unwrap());
        let state = change(startup::state(pool, keys(), registration(&own_base)).unwrap());
        let (base, handle) = serve_on(listener, state);
        TestApp {
            db,
            base,
            client: reqwest::Client::new(),
            seed,
            keys: keys(),
            handle,
        }
    }

    pub fn integration_id(&self, tenant: &str, insurer: &str) -> i64 {
        self.seed
            .integrations
            .iter()
            .find(|i| i.tenant == tenant && i.insurer.as_str() == insurer)
            .unwrap()
            .id
    }

    pub fn basic_token(&self, tenant: &str, insurer: &str) -> String {
        self.seed
            .integrations
            .iter()
            .find(|i| i.tenant == tenant && i.insurer.as_str() == insurer)
            .and_then(|i| i.token.clone())
            .unwrap()
    }

    /// A callback JWT for the seeded integration, as `/callback/auth` would issue it.
    pub fn bearer(&self, tenant: &str, insurer: &str) -> String {
        jwt::issue_callback_token(
            &self.keys,
            self.integration_id(tenant, insurer),
            tenant,
            proposal_callback::domain::insurer::Insurer::parse(insurer).expect("a known insurer"),
        )
        .unwrap()
    }

    pub fn admin(&self, tenant: &str) -> String {
        jwt::issue_admin_token(&self.keys, "ops", tenant, 600).unwrap()
    }

    /// Signs in to the console as `tenant`'s admin: the session cookie (`name=value`).
    pub async fn console_session(&self, tenant: &str) -> String {
        let res = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .post(format!("{}/admin/integracao/entrar", self.base))
            .header("sec-fetch-site", "same-origin")
            .form(&[("token", self.admin(tenant))])
            .send()
            .await
            .unwrap();
        res.headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .find(|c| c.starts_with("console_session=") && !c.contains("Max-Age=0"))
            .map(|c| c.split(';').next().unwrap().to_owned())
            .expect("a console session")
    }

    /// POSTs `body` as `application/json` to `/callback/{tenant}/{insurer}` with the token of
    /// that same integration.
    pub async fn callback(&self, tenant: &str, insurer: &str, body: Vec<u8>) -> (u16, Value) {
        // The path's own integration when it exists; otherwise a valid token of another
        // one, so the checks after authentication are what answers.
        let token = if tenant_known(tenant) && insurer_known(insurer) {
            self.bearer(tenant, insurer)
        } else {
            self.bearer("demo-a", "porto")
        };
        self.post(
            &format!("/callback/{tenant}/{insurer}"),
            Some(&token),
            "application/json",
            body,
        )
        .await
    }

    pub async fn post(
        &self,
        path: &str,
        bearer: Option<&str>,
        content_type: &str,
        body: Vec<u8>,
    ) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", content_type)
            .body(body);
        if let Some(t) = bearer {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str, bearer: Option<&str>) -> (u16, Value) {
        let mut req = self.client.get(format!("{}{path}", self.base));
        if let Some(t) = bearer {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    pub async fn conn(&self) -> common::db::Conn {
        self.db.pool().get().await.unwrap()
    }

    pub async fn proposal(&self, tenant: &str, id: &str) -> ProposalState {
        proposal_state(&mut *self.conn().await, tenant, id).await
    }
}

fn insurer_known(i: &str) -> bool {
    proposal_callback::domain::insurer::Insurer::parse(i).is_some()
}

fn tenant_known(t: &str) -> bool {
    seed::DEMO_TENANTS.iter().any(|(id, _)| *id == t)
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        actix_web::rt::spawn(async move { handle.stop(false).await });
    }
}

pub async fn read(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    let bytes = res.bytes().await.unwrap();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    (status, body)
}

/// What a test checks of a proposal after callbacks.
#[derive(Debug, PartialEq, Eq)]
pub struct ProposalState {
    pub status: String,
    pub in_queue: bool,
    /// Kinds of its events, oldest first.
    pub events: Vec<String>,
    /// `from->to` of its integration history, oldest first.
    pub history: Vec<String>,
    /// Subjects of its emails in the outbox.
    pub emails: Vec<String>,
}

pub async fn proposal_state(
    conn: &mut diesel_async::AsyncPgConnection,
    tenant: &str,
    id: &str,
) -> ProposalState {
    use proposal_callback::schema::proposal::{
        email_outbox, integration_history, proposal_events, proposals,
    };
    let (pk, status, in_queue): (i64, String, bool) = proposals::table
        .filter(
            proposals::tenant_id
                .eq(tenant)
                .and(proposals::proposal_id.eq(id)),
        )
        .select((proposals::id, proposals::status, proposals::in_queue))
        .first(conn)
        .await
        .unwrap();
    let events = proposal_events::table
        .filter(proposal_events::proposal_id.eq(pk))
        .order(proposal_events::id)
        .select(proposal_events::kind)
        .load(conn)
        .await
        .unwrap();
    let history = integration_history::table
        .filter(integration_history::proposal_id.eq(pk))
        .order(integration_history::id)
        .select((
            integration_history::from_status,
            integration_history::to_status,
        ))
        .load::<(String, String)>(conn)
        .await
        .unwrap()
        .into_iter()
        .map(|(f, t)| format!("{f}->{t}"))
        .collect();
    let emails = email_outbox::table
        .filter(email_outbox::proposal_id.eq(pk))
        .order(email_outbox::id)
        .select(email_outbox::subject)
        .load(conn)
        .await
        .unwrap();
    ProposalState {
        status,
        in_queue,
        events,
        history,
        emails,
    }
}

/// The subject of the email a transition of demo-a's proposal `id` to `status` sends.
pub fn subject(id: &str, status: &str) -> String {
    let what = match status {
        "approved" => "aprovada",
        "pending" => "pendente: faltam informações",
        "refused" => "recusada",
        "under_analysis" => "em análise",
        other => panic!("no status {other}"),
    };
    format!("Proposta {id} {what} | Imobiliária Demo A")
}

/// An email as the relay received it, read as a mail client reads it: headers decoded
/// (RFC 2047), parts decoded (quoted-printable, base64), line ends `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub to: Vec<String>,
    pub from: String,
    pub subject: String,
    pub text: String,
    pub html: Option<String>,
    pub message_id: Option<String>,
    /// Every byte of the message as sent is 7-bit ASCII: the UTF-8 text travelled encoded.
    pub ascii_only: bool,
    pub tls: bool,
}

pub fn read_mail(received: &common::test_support::Received) -> Mail {
    let m = mail_parser::MessageParser::default()
        .parse(received.data.as_bytes())
        .unwrap_or_else(|| panic!("not a message: {}", received.data));
    let unix = |s: std::borrow::Cow<'_, str>| s.replace("\r\n", "\n");
    let from = m.from().and_then(|a| a.first()).unwrap();
    Mail {
        to: received.rcpt.clone(),
        from: format!(
            "{} <{}>",
            from.name().unwrap_or_default(),
            from.address().unwrap_or_default()
        ),
        subject: m.subject().unwrap_or_default().to_owned(),
        text: m.body_text(0).map(unix).unwrap_or_default(),
        html: (m.html_body_count() > 0)
            .then(|| m.body_html(0).map(unix))
            .flatten(),
        message_id: m.message_id().map(str::to_owned),
        ascii_only: received.data.is_ascii(),
        tls: received.tls,
    }
}

pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}
