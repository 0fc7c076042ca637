use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::settings::FromSource;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::email::config::EmailConfig;
use proposal_callback::flow::email_worker::{self as worker, Mailer};
use proposal_callback::metrics::OutboxMetrics;
use proposal_callback::schema::proposal::email_outbox as o;
use proposal_callback::settings::EmailSettings;

use crate::support::{TestApp, example, read_mail, subject};
use common::test_support::SmtpSink;

fn config(smtp_url: Option<String>) -> EmailConfig {
    config_with(smtp_url, &[])
}

fn config_with(smtp_url: Option<String>, extra: &[(&str, &str)]) -> EmailConfig {
    let mut env: HashMap<String, String> = HashMap::new();
    for (k, v) in extra {
        env.insert((*k).into(), (*v).into());
    }
    if let Some(url) = smtp_url {
        env.insert("SMTP_URL".into(), url);
    }
    env.insert(
        "EMAIL_FROM".into(),
        "Propostas <propostas@demo.example>".into(),
    );
    // Retries come quickly in tests.
    env.insert("EMAIL_RETRY_BASE".into(), "50ms".into());
    env.entry("EMAIL_RETRY_MAX".into())
        .or_insert_with(|| "200ms".into());
    EmailSettings::from_source(&env).unwrap().config().unwrap()
}

/// The app on `clock` (its callbacks queue their emails at its time).
async fn on_clock(clock: &common::Clock) -> TestApp {
    let clock = clock.clone();
    TestApp::start_with_state(move |state| state.with_clock(clock)).await
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
    // The app and the worker on one manual clock: the backoffs end when it is advanced.
    let clock = common::Clock::manual(chrono::Utc::now());
    let t = on_clock(&clock).await;
    let sink = SmtpSink::start().await;
    let mailer = Mailer::new(&config(Some(sink.url())))
        .unwrap()
        .unwrap()
        .with_clock(clock.clone());
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

    // The relay is down: nothing is lost. The first email's attempt notes the error; the
    // worker then waits out the relay's backoff instead of knocking once per email.
    sink.down.store(true, Ordering::SeqCst);
    assert_eq!(mailer.run_once(&pool).await.unwrap(), 0);
    assert_eq!(
        outbox(&t).await,
        vec![("queued".into(), 1, true), ("queued".into(), 0, false)]
    );
    assert_eq!(sink.connections(), 1);
    assert!(sink.messages().is_empty());

    // Back up: after the backoff both are sent, once, over one connection.
    sink.down.store(false, Ordering::SeqCst);
    // Past the email's and the relay's backoff (EMAIL_RETRY_BASE 50ms).
    clock.advance(chrono::Duration::milliseconds(150));
    assert_eq!(mailer.run_once(&pool).await.unwrap(), 2);
    assert_eq!(
        outbox(&t).await,
        vec![("sent".into(), 2, false), ("sent".into(), 1, false)]
    );
    assert_eq!(sink.connections(), 2);
    assert_eq!(
        mailer.run_once(&pool).await.unwrap(),
        0,
        "nothing is sent twice"
    );

    // The one never tried goes first: the other waited for its backoff.
    let messages: Vec<_> = sink.messages().iter().map(read_mail).collect();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].subject, subject("POR-2026-000123", "approved"));
    let pending = &messages[1];
    assert_eq!(
        pending.to,
        vec!["locatario.99121@demo-a.example.com".to_owned()]
    );
    assert_eq!(pending.subject, subject("99121", "pending"));
    // demo-a's own sender (the seed's), not EMAIL_FROM, and a Message-ID at its domain.
    assert_eq!(
        pending.from,
        "Imobiliária Demo A <propostas@demo-a.example.com>"
    );
    assert!(
        pending
            .message_id
            .as_deref()
            .is_some_and(|id| id.ends_with("@demo-a.example.com") && id.len() == 36 + 1 + 18),
        "{pending:?}"
    );
    assert!(
        pending
            .text
            .contains("- RG: Documento de identidade do fiador\n"),
        "{}",
        pending.text
    );
    assert!(pending.ascii_only && !pending.tls);
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
    worker::start(
        &t.db.pool(),
        &common::Clock::system(),
        &config(None),
        &OutboxMetrics::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        t.callback("demo-a", "tokio", example("tokio", "refused"))
            .await
            .0,
        200
    );
    assert_eq!(outbox(&t).await, vec![("queued".into(), 0, false)]);
}

/// The outbox rows as (status, attempts, last_error), oldest first.
async fn outbox_errors(t: &TestApp) -> Vec<(String, i32, Option<String>)> {
    o::table
        .order(o::id)
        .select((o::status, o::attempts, o::last_error))
        .load(&mut t.conn().await)
        .await
        .unwrap()
}

/// Each email's Message-ID, oldest first (given at its first attempt).
async fn message_ids(t: &TestApp) -> Vec<String> {
    o::table
        .order(o::id)
        .select(o::message_id.assume_not_null())
        .load(&mut t.conn().await)
        .await
        .unwrap()
}

/// Queues one email per example payload of `insurers` (three each).
async fn queue_emails(t: &TestApp, insurers: &[&str]) -> usize {
    let mut n = 0;
    for insurer in insurers {
        for outcome in ["approved", "pending", "refused"] {
            let (status, body) = t
                .callback("demo-a", insurer, example(insurer, outcome))
                .await;
            assert_eq!(status, 200, "{body}");
            n += 1;
        }
    }
    n
}

fn scrape(registry: &prometheus::Registry) -> String {
    prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap()
}

/// A relay that accepts the connection and never answers: the attempt fails within
/// SMTP_TIMEOUT with its error on the row and in `/metrics`, and the worker leaves the relay
/// alone for its backoff (one silent relay costs one SMTP_TIMEOUT per backoff step, not one
/// per email); once the relay answers, every email arrives once.
#[actix_web::test]
async fn a_relay_that_never_answers_fails_each_attempt_in_time_and_mail_flows_once_it_answers() {
    let t = TestApp::start().await;
    let n = queue_emails(&t, &["porto"]).await;
    let sink = SmtpSink::start().await;
    sink.hung.store(true, Ordering::SeqCst);
    let registry = prometheus::Registry::new();
    let metrics = OutboxMetrics::new();
    metrics.register(&registry);
    // A manual clock, a minute ahead: every email is due, and the relay's backoff ends only
    // when the test moves it.
    let clock = common::Clock::manual(chrono::Utc::now() + chrono::Duration::minutes(1));
    let mailer = Mailer::new(&config_with(Some(sink.url()), &[("SMTP_TIMEOUT", "1s")]))
        .unwrap()
        .unwrap()
        .with_metrics(metrics.clone())
        .with_clock(clock.clone());
    let pool = t.db.pool();

    // A bound on a hang, not a performance claim: the first attempt fails after 1 s, and
    // the others wait for the relay's backoff.
    let sent = tokio::time::timeout(Duration::from_secs(60), mailer.run_once(&pool))
        .await
        .expect("the worker hung on a silent relay")
        .unwrap();
    assert_eq!(sent, 0);
    let rows = outbox_errors(&t).await;
    assert_eq!(rows.len(), n);
    let silent = Some("SMTP connect (greeting, EHLO): no answer within 1s".to_owned());
    assert_eq!(rows[0], ("queued".to_owned(), 1, silent), "{rows:?}");
    for row in &rows[1..] {
        assert_eq!(row, &("queued".to_owned(), 0, None), "{rows:?}");
    }
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(60), mailer.run_once(&pool))
            .await
            .expect("the worker hung on a silent relay")
            .unwrap(),
        0
    );
    assert_eq!(
        sink.connections(),
        1,
        "no new connection within the relay's backoff"
    );
    assert!(sink.messages().is_empty());
    worker::refresh_queue_metrics(&pool, &common::Clock::system(), &metrics)
        .await
        .unwrap();
    let text = scrape(&registry);
    assert!(
        text.contains(&format!("proposal_callback_outbox_queued {n}\n")),
        "{text}"
    );
    assert!(
        text.contains("proposal_callback_outbox_attempts_failed_total 1\n"),
        "{text}"
    );
    assert!(
        text.contains("proposal_callback_outbox_sent_total 0\n"),
        "{text}"
    );
    assert!(metrics.oldest_queued_age.get() >= 0.0);
    assert!(
        text.contains("proposal_callback_outbox_oldest_queued_age_seconds "),
        "{text}"
    );

    // The relay answers again: after the backoff every email is sent, once.
    sink.hung.store(false, Ordering::SeqCst);
    clock.advance(chrono::Duration::seconds(1));
    assert_eq!(mailer.run_once(&pool).await.unwrap(), n);
    assert_eq!(mailer.run_once(&pool).await.unwrap(), 0);
    let attempts: Vec<i32> = outbox_errors(&t)
        .await
        .iter()
        .map(|(s, a, e)| {
            assert!(s == "sent" && e.is_none());
            *a
        })
        .collect();
    assert_eq!(attempts[0], 2);
    assert!(attempts[1..].iter().all(|a| *a == 1), "{attempts:?}");
    assert_eq!(sink.messages().len(), n);
    for id in message_ids(&t).await {
        assert_eq!(sink.copies_of(&id), 1);
    }
    worker::refresh_queue_metrics(&pool, &common::Clock::system(), &metrics)
        .await
        .unwrap();
    let text = scrape(&registry);
    assert!(
        text.contains("proposal_callback_outbox_queued 0\n"),
        "{text}"
    );
    assert!(
        text.contains("proposal_callback_outbox_oldest_queued_age_seconds 0\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("proposal_callback_outbox_sent_total {n}\n")),
        "{text}"
    );
}

/// A worker that dies in the middle of a round (its task dropped, as a crash drops it) has
/// already marked sent every email the relay accepted before: only the one in flight can
/// arrive twice, and it is sent again once its lease is over.
#[actix_web::test]
async fn a_worker_dying_mid_round_leaves_only_the_email_in_flight_to_send_again() {
    // The app and the workers on one manual clock: the lease ends when it is advanced.
    let clock = common::Clock::manual(chrono::Utc::now());
    let t = on_clock(&clock).await;
    let n = queue_emails(&t, &["porto", "tokio", "too"]).await;
    let sink = SmtpSink::start().await;
    sink.data_delay_ms.store(200, Ordering::SeqCst);
    let mailer = Mailer::new(&config_with(Some(sink.url()), &[("SMTP_TIMEOUT", "1s")]))
        .unwrap()
        .unwrap()
        .with_clock(clock.clone());
    let pool = t.db.pool();
    let round = tokio::spawn({
        let (mailer, pool) = (mailer.clone(), pool.clone());
        async move { mailer.run_once(&pool).await }
    });
    // Dies while the fourth email is with the relay: three accepted, the fourth's recipient
    // given (its message waits for the relay's slow answer to DATA).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while sink.messages().len() < 3 || sink.rcpts().len() < 4 {
        assert!(
            std::time::Instant::now() < deadline,
            "the fourth email never reached the relay"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    round.abort();
    let _ = round.await;
    let delivered = sink.messages().len();
    let marked: i64 = o::table
        .filter(o::status.eq("sent"))
        .count()
        .get_result(&mut t.conn().await)
        .await
        .unwrap();
    assert!(
        marked as usize + 1 >= delivered && delivered >= 3,
        "{marked} marked sent, {delivered} delivered"
    );

    // The in-flight email's lease ends; a new worker sends everything that is left.
    sink.data_delay_ms.store(0, Ordering::SeqCst);
    clock.advance(
        chrono::Duration::from_std(mailer.lease()).unwrap() + chrono::Duration::seconds(1),
    );
    let again = Mailer::new(&config_with(Some(sink.url()), &[("SMTP_TIMEOUT", "1s")]))
        .unwrap()
        .unwrap()
        .with_clock(clock.clone());
    while again.run_once(&pool).await.unwrap() > 0 {}
    let ids = message_ids(&t).await;
    assert_eq!(ids.len(), n);
    let mut extra = 0;
    for id in &ids {
        let copies = sink.copies_of(id);
        assert!((1..=2).contains(&copies), "{id}: {copies} copies");
        extra += copies - 1;
    }
    assert!(extra <= 1, "{extra} extra copies for one interrupted round");
    assert_eq!(sink.messages().len(), n + extra);
    assert!(outbox(&t).await.iter().all(|(s, _, _)| s == "sent"));
}
