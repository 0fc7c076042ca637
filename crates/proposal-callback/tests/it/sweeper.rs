//! Receipts a crash left `received` are processed by the sweeper of `serve`.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::flow::sweep;
use proposal_callback::schema::proposal::callback_receipts as r;
use sha2::{Digest, Sha256};

use crate::support::{SECRET, TestApp, example, strings, subject};

/// Stores `body` as a crash leaves it: `received`, no outcome, `age` ago.
async fn left_received(t: &TestApp, insurer: &str, body: Vec<u8>, age: &str) -> i64 {
    let sha: Vec<u8> = Sha256::digest(&body).to_vec();
    diesel::insert_into(r::table)
        .values((
            r::tenant_id.eq("demo-a"),
            r::insurer.eq(insurer),
            r::integration_id.eq(Some(t.integration_id("demo-a", insurer))),
            r::body.eq(body),
            r::body_sha256.eq(sha),
            r::received_at.eq(diesel::dsl::sql::<diesel::sql_types::Timestamptz>(
                &format!("now() - interval '{age}'"),
            )),
        ))
        .returning(r::id)
        .get_result(&mut *t.conn().await)
        .await
        .unwrap()
}

async fn status_of(t: &TestApp, id: i64) -> String {
    r::table
        .find(id)
        .select(r::status)
        .first(&mut *t.conn().await)
        .await
        .unwrap()
}

struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[actix_web::test]
async fn serve_processes_a_receipt_a_crash_left_received() {
    let t = TestApp::start().await;
    let stuck = left_received(&t, "too", example("too", "pending"), "5 minutes").await;
    // Too recent: a live request may still be answering it.
    let fresh = left_received(&t, "porto", example("porto", "approved"), "1 second").await;
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _server = Killed(
        Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
            .arg("serve")
            .env("DATABASE_URL", t.db.url())
            .env("JWT_SECRET", SECRET)
            .env("BIND", format!("127.0.0.1:{port}"))
            .env("SWEEP_INTERVAL", "1h")
            .env("SWEEP_GRACE", "60s")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while status_of(&t, stuck).await == "received" {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the sweeper did not run"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status_of(&t, stuck).await, "processed");
    assert_eq!(status_of(&t, fresh).await, "received");
    let p = t.proposal("demo-a", "99121").await;
    assert_eq!(p.status, "pending");
    assert_eq!(p.history, strings(&["under_analysis->pending"]));
    assert_eq!(p.emails, vec![subject("99121", "pending")]);
    // The insurer's redelivery of it afterwards is a duplicate: still one email.
    let (s, b) = t.callback("demo-a", "too", example("too", "pending")).await;
    assert_eq!((s, b["result"].as_str()), (200, Some("duplicate")));
    assert_eq!(t.proposal("demo-a", "99121").await.emails.len(), 1);
}

/// Two replicas sweeping at once process each receipt once.
#[actix_web::test]
async fn two_sweepers_at_once_apply_each_receipt_once() {
    let t = TestApp::start().await;
    let mut ids = Vec::new();
    for insurer in ["porto", "tokio", "too"] {
        ids.push(left_received(&t, insurer, example(insurer, "pending"), "2 minutes").await);
        // The same event twice, as a crash during a redelivery leaves it.
        ids.push(left_received(&t, insurer, example(insurer, "pending"), "2 minutes").await);
    }
    let pool = t.db.pool();
    let grace = Duration::from_secs(60);
    let (a, b) = futures_util::future::join(
        sweep::sweep_once(&pool, &common::Clock::system(), grace),
        sweep::sweep_once(&pool, &common::Clock::system(), grace),
    )
    .await;
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.settled + b.settled, a.left + b.left), (6, 0));
    let mut outcomes = Vec::new();
    for id in ids {
        outcomes.push(status_of(&t, id).await);
    }
    // Of each pair, whichever took the proposal's lock first applied it.
    for pair in outcomes.chunks(2) {
        let mut pair = pair.to_vec();
        pair.sort();
        assert_eq!(pair, strings(&["duplicate", "processed"]));
    }
    for id in ["POR-2026-000124", "548813", "99121"] {
        let p = t.proposal("demo-a", id).await;
        assert_eq!((p.history.len(), p.emails.len()), (1, 1), "{id}");
    }
}
