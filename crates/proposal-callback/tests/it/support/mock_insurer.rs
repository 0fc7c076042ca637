//! An HTTP server on 127.0.0.1:0 playing an insurer's registration route: it records every
//! request it receives (before answering) and answers with the status and after the delay
//! the test sets.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

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

#[derive(Clone)]
struct Behaviour {
    received: Arc<Mutex<Vec<Received>>>,
    status: Arc<AtomicU16>,
    delay_ms: Arc<AtomicU64>,
}

pub struct MockInsurer {
    /// `http://127.0.0.1:<port>`: what `INSURER_<ID>_<ENV>_URL` points to.
    pub base: String,
    behaviour: Behaviour,
    handle: ServerHandle,
}

async fn answer(req: HttpRequest, body: web::Bytes, b: web::Data<Behaviour>) -> HttpResponse {
    b.received.lock().unwrap().push(Received {
        method: req.method().to_string(),
        path: req
            .uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        headers: req
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        body: body.to_vec(),
    });
    let delay = b.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let status = StatusCode::from_u16(b.status.load(Ordering::SeqCst)).unwrap();
    HttpResponse::build(status).json(serde_json::json!({"mensagem": "mock"}))
}

impl MockInsurer {
    /// Answers 200 at once until told otherwise.
    pub fn start() -> MockInsurer {
        let behaviour = Behaviour {
            received: Arc::default(),
            status: Arc::new(AtomicU16::new(200)),
            delay_ms: Arc::default(),
        };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let data = web::Data::new(behaviour.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(answer))
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(0)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        MockInsurer {
            base,
            behaviour,
            handle,
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

impl Drop for MockInsurer {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        actix_web::rt::spawn(async move { handle.stop(false).await });
    }
}

/// A port nothing listens on (bound, then released).
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}
