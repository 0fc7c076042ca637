//! An insurer's registration route played by a `wiremock` server on 127.0.0.1: it records
//! every request it receives (before answering) and answers with the status and after the
//! delay the test sets.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate, matchers::any};

/// One request as the insurer received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Lower-case names; a repeated header keeps its last value.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// What the insurer answers, changed by the test while the server runs.
#[derive(Clone, Default)]
struct Behaviour {
    received: Arc<Mutex<Vec<Received>>>,
    status: Arc<AtomicU16>,
    delay_ms: Arc<AtomicU64>,
}

impl Respond for Behaviour {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let path = match req.url.query() {
            Some(q) => format!("{}?{q}", req.url.path()),
            None => req.url.path().to_owned(),
        };
        self.received.lock().unwrap().push(Received {
            method: req.method.to_string(),
            path,
            headers: req
                .headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        v.to_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect(),
            body: req.body.clone(),
        });
        ResponseTemplate::new(self.status.load(Ordering::SeqCst))
            .set_body_json(serde_json::json!({"mensagem": "mock"}))
            .set_delay(Duration::from_millis(self.delay_ms.load(Ordering::SeqCst)))
    }
}

pub struct MockInsurer {
    /// `http://127.0.0.1:<port>`: what `INSURER_<ID>_<ENV>_URL` points to.
    pub base: String,
    behaviour: Behaviour,
    _server: MockServer,
}

impl MockInsurer {
    /// Answers 200 at once until told otherwise.
    pub async fn start() -> MockInsurer {
        let behaviour = Behaviour::default();
        behaviour.status.store(200, Ordering::SeqCst);
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(behaviour.clone())
            .mount(&server)
            .await;
        MockInsurer {
            base: server.uri(),
            behaviour,
            _server: server,
        }
    }

    pub fn answer_with(&self, status: u16) {
        self.behaviour.status.store(status, Ordering::SeqCst);
    }

    pub fn delay(&self, d: Duration) {
        self.behaviour
            .delay_ms
            .store(d.as_millis() as u64, Ordering::SeqCst);
    }

    pub fn received(&self) -> Vec<Received> {
        self.behaviour.received.lock().unwrap().clone()
    }
}

/// A port nothing listens on (bound, then released).
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}
