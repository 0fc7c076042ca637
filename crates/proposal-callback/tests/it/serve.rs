//! The binary itself: `serve` with its email worker, and the 503 of a database outage.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::db;
use proposal_callback::registration::config::RegistrationConfig;
use proposal_callback::startup;

use crate::support::{SECRET, TestApp, example, keys, read, read_mail, serve, subject};
use common::test_support::SmtpSink;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[actix_web::test]
async fn serve_receives_a_callback_and_its_worker_mails_it() {
    let t = TestApp::start().await;
    let sink = SmtpSink::start().await;
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let _server = Killed(
        Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
            .arg("serve")
            .env("DATABASE_URL", t.db.url())
            .env("JWT_SECRET", SECRET)
            .env("BIND", format!("127.0.0.1:{port}"))
            .env("SMTP_URL", sink.url())
            .env("EMAIL_POLL_INTERVAL", "50ms")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let client = reqwest::Client::new();
    eventually("serve to answer /readyz", async || {
        matches!(client.get(format!("{base}/readyz")).send().await, Ok(r) if r.status() == 200)
    })
    .await;

    let basic = t.basic_token("demo-a", "too");
    let res = client
        .post(format!("{base}/callback/auth"))
        .header("Authorization", format!("Basic {basic}"))
        .send()
        .await
        .unwrap();
    let (s, token) = read(res).await;
    assert_eq!(s, 200);
    let res = client
        .post(format!("{base}/callback/demo-a/too"))
        .bearer_auth(token["access_token"].as_str().unwrap())
        .header("content-type", "application/json")
        .body(example("too", "pending"))
        .send()
        .await
        .unwrap();
    assert!(res.headers().contains_key("x-request-id"));
    let (s, body) = read(res).await;
    assert_eq!((s, body["result"].as_str()), (200, Some("processed")));

    eventually("the email to reach the relay", async || {
        !sink.messages().is_empty()
    })
    .await;
    let mail = read_mail(&sink.messages()[0]);
    assert_eq!(
        mail.to,
        vec!["locatario.99121@demo-a.example.com".to_owned()]
    );
    assert_eq!(mail.subject, subject("99121", "pending"));
}

#[actix_web::test]
async fn a_database_outage_is_503_with_retry_after() {
    // A pool pointing at a port where nothing listens.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let pool = db::pool(
        &format!("postgres://postgres@127.0.0.1:{port}/none"),
        &proposal_callback::SKELETON.pool_settings(2),
    )
    .unwrap();
    let (base, _handle) =
        serve(startup::state(pool, keys(), RegistrationConfig::default()).unwrap());
    let token = proposal_callback::auth::jwt::issue_callback_token(
        &keys(),
        1,
        "demo-a",
        proposal_callback::domain::insurer::Insurer::Porto,
    )
    .unwrap();
    let client = reqwest::Client::new();
    let res = client
        .post(format!("{base}/callback/demo-a/porto"))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(example("porto", "approved"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["retry-after"], "1");
    let (s, body) = read(res).await;
    assert_eq!((s, body["code"].as_str()), (503, Some("unavailable")));
    let res = client
        .post(format!("{base}/callback/auth"))
        .header("Authorization", "Basic abc")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    let (s, _) = read(client.get(format!("{base}/readyz")).send().await.unwrap()).await;
    assert_eq!(s, 503);
}
