use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::email::config::EmailConfig;
use proposal_callback::email::worker::{self, Mailer};
use proposal_callback::schema::proposal::email_outbox as o;

use crate::support::{TestApp, example};
use common::test_support::SmtpSink;

fn config(smtp_url: Option<String>) -> EmailConfig {
    let mut env: HashMap<String, String> = HashMap::new();
    if let Some(url) = smtp_url {
        env.insert("SMTP_URL".into(), url);
    }
    env.insert(
        "EMAIL_FROM".into(),
        "Propostas <propostas@demo.example>".into(),
    );
    // Retries come quickly in tests.
    env.insert("EMAIL_RETRY_BASE".into(), "50ms".into());
    env.insert("EMAIL_RETRY_MAX".into(), "200ms".into());
    EmailConfig::from_source(&env).unwrap()
}

async fn outbox(t: &TestApp) -> Vec<(String, i32, bool)> {
    o::table
        .order(o::id)
        .select((o::status, o::attempts, o::last_error.is_not_null()))
        .load(&mut t.conn().await)
        .await
        .unwrap()
}

#[actix_web::test]
async fn the_outbox_reaches_smtp_once_and_is_retried_while_the_relay_is_down() {
    let t = TestApp::start().await;
    let sink = SmtpSink::start().await;
    let mailer = Mailer::new(&config(Some(sink.url()))).unwrap().unwrap();
    let pool = t.db.pool();

    assert_eq!(
        t.callback("demo-a", "too", example("too", "pending"))
            .await
            .0,
        200
    );
    assert_eq!(
        t.callback("demo-a", "porto", example("porto", "approved"))
            .await
            .0,
        200
    );

    // The relay is down: nothing is lost, both stay queued with the error noted.
    sink.down.store(true, Ordering::SeqCst);
    assert_eq!(mailer.run_once(&pool).await.unwrap(), 0);
    assert_eq!(
        outbox(&t).await,
        vec![("queued".into(), 1, true), ("queued".into(), 1, true)]
    );
    assert!(sink.messages().is_empty());

    // Back up: after the backoff both are sent, once.
    sink.down.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(mailer.run_once(&pool).await.unwrap(), 2);
    assert_eq!(
        outbox(&t).await,
        vec![("sent".into(), 2, false), ("sent".into(), 2, false)]
    );
    assert_eq!(
        mailer.run_once(&pool).await.unwrap(),
        0,
        "nothing is sent twice"
    );

    let messages = sink.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[0].rcpt,
        vec!["locatario.99121@demo-a.example.com".to_owned()]
    );
    let data = &messages[0].data;
    assert!(data.contains("Subject: Proposal 99121: pending"), "{data}");
    assert!(
        data.contains("From: Propostas <propostas@demo.example>"),
        "{data}"
    );
    assert!(data.contains("Message-ID: <outbox-"), "{data}");
    assert!(data.contains("RG"), "{data}");
    assert!(
        messages[1]
            .data
            .contains("Subject: Proposal POR-2026-000123: approved")
    );
}

/// Two workers (two replicas) on one outbox send each email once.
#[actix_web::test]
async fn two_workers_never_send_one_email_twice() {
    let t = TestApp::start().await;
    let sink = SmtpSink::start().await;
    for insurer in ["porto", "tokio", "too"] {
        for outcome in ["approved", "pending", "refused"] {
            assert_eq!(
                t.callback("demo-a", insurer, example(insurer, outcome))
                    .await
                    .0,
                200
            );
        }
    }
    let a = Mailer::new(&config(Some(sink.url()))).unwrap().unwrap();
    let b = a.clone();
    let (pa, pb) = (t.db.pool(), t.db.pool());
    let (ra, rb) = tokio::join!(a.run_once(&pa), b.run_once(&pb));
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    let rest = a.run_once(&pa).await.unwrap();
    assert_eq!(ra + rb + rest, 9);
    assert_eq!(sink.messages().len(), 9);
    assert!(
        outbox(&t)
            .await
            .iter()
            .all(|(s, n, _)| s == "sent" && *n == 1)
    );
}

#[actix_web::test]
async fn without_smtp_url_mail_stays_queued() {
    let t = TestApp::start().await;
    assert!(Mailer::new(&config(None)).unwrap().is_none());
    worker::start(&t.db.pool(), &config(None)).await.unwrap();
    assert_eq!(
        t.callback("demo-a", "tokio", example("tokio", "refused"))
            .await
            .0,
        200
    );
    assert_eq!(outbox(&t).await, vec![("queued".into(), 0, false)]);
}
