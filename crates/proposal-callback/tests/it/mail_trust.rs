//! Mail that operators and inboxes can trust (docs/proposal-callback.md, "Email"): each
//! message's `Message-ID` is `<uuid@domain of EMAIL_FROM>`, the same on every attempt and
//! never the same in two databases; automatic mail says so (`Auto-Submitted`); a relay's
//! permanent refusal ends an email as `failed` after one attempt while the others flow, and an
//! operator sends it again; a burst goes over one connection and one login; a wrong password
//! costs one login per backoff step; the database refuses a second email for one transition.
//! Against the local SMTP sink (`common::test_support::SmtpSink`), on a manual clock.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use common::Clock;
use common::settings::FromSource;
use common::test_support::SmtpSink;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::email::config::EmailConfig;
use proposal_callback::flow::email_worker::{self as worker, Mailer};
use proposal_callback::metrics::OutboxMetrics;
use proposal_callback::schema::proposal::email_outbox as o;
use proposal_callback::settings::EmailSettings;
use serde_json::{Value, json};

use crate::support::{TestApp, edited, example, read_mail, subject};

/// Where the clock of these tests stands: a date no wall clock shows while they run.
fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2029-05-06T07:08:09.123456Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn seconds(s: f64) -> chrono::Duration {
    chrono::Duration::microseconds((s * 1e6) as i64)
}

/// A service whose clock is `clock` (every email is queued at its time).
async fn app(clock: &Clock) -> TestApp {
    let clock = clock.clone();
    TestApp::start_with_state(move |state| state.with_clock(clock)).await
}

/// `SMTP_URL` and the retry pacing of the defaults: 2 s doubling, 10 min at most.
fn config(smtp_url: &str) -> EmailConfig {
    let mut env: HashMap<String, String> = HashMap::new();
    env.insert("SMTP_URL".into(), smtp_url.into());
    env.insert(
        "EMAIL_FROM".into(),
        "Imobiliária Demo A <propostas@demo-a.example.com>".into(),
    );
    env.insert("SMTP_TIMEOUT".into(), "5s".into());
    EmailSettings::from_source(&env).unwrap().config().unwrap()
}

fn mailer(smtp_url: &str, clock: &Clock) -> Mailer {
    Mailer::new(&config(smtp_url))
        .unwrap()
        .unwrap()
        .with_clock(clock.clone())
}

const CONTACT_99121: &str = "locatario.99121@demo-a.example.com";

/// A Message-ID as RFC 5322 wants it here: a version 4 UUID at EMAIL_FROM's domain.
fn is_uuid_at_sender_domain(id: &str) -> bool {
    let Some(inner) = id.strip_prefix('<').and_then(|s| s.strip_suffix('>')) else {
        return false;
    };
    let Some((left, right)) = inner.split_once('@') else {
        return false;
    };
    let uuid_v4 = left.len() == 36
        && left.chars().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            14 => c == '4',
            19 => matches!(c, '8' | '9' | 'a' | 'b'),
            _ => c.is_ascii_hexdigit() && !c.is_ascii_uppercase(),
        });
    uuid_v4 && right == "demo-a.example.com"
}

/// A header's value as the message carries it (unfolded), if any.
fn header(data: &str, name: &str) -> Option<String> {
    let head = data.split("\n\n").next().unwrap_or("");
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

/// (id, status, attempts, last_error, message_id) of each outbox row, oldest first.
async fn rows(t: &TestApp) -> Vec<(i64, String, i32, Option<String>, Option<String>)> {
    o::table
        .order(o::id)
        .select((o::id, o::status, o::attempts, o::last_error, o::message_id))
        .load(&mut t.conn().await)
        .await
        .unwrap()
}

#[actix_web::test]
async fn message_ids_are_stable_across_attempts_and_unique_across_databases() {
    let clock = Clock::manual(t0());
    let (a, b) = (app(&clock).await, app(&clock).await);
    let sink = SmtpSink::start().await;
    // The same callback to two databases: each queues its email as outbox row 1, for the
    // same customer. The old `<outbox-1@proposal-callback>` was the same for both.
    for t in [&a, &b] {
        let (s, body) = t.callback("demo-a", "too", example("too", "pending")).await;
        assert_eq!(s, 200, "{body}");
    }
    assert_eq!(rows(&a).await[0].0, rows(&b).await[0].0);

    // Database a's first attempt is refused after its DATA (a temporary refusal); its second,
    // after the backoff, is accepted: the same Message-ID both times.
    sink.refuse_data(CONTACT_99121, "451 4.3.0 Temporary local problem", Some(1));
    let send_a = mailer(&sink.url(), &clock);
    assert_eq!(send_a.run_once(&a.db.pool()).await.unwrap(), 0);
    let refused = sink.refused_messages();
    assert_eq!(refused.len(), 1);
    let first = refused[0].message_id().unwrap();
    let (_, status, attempts, error, stored) = rows(&a).await.remove(0);
    assert_eq!((status.as_str(), attempts), ("queued", 1));
    assert_eq!(
        error.as_deref(),
        Some("SMTP message: transient error (451): 4.3.0 Temporary local problem")
    );
    assert_eq!(stored.as_deref(), Some(first.as_str()));
    clock.advance(seconds(2.0));
    assert_eq!(send_a.run_once(&a.db.pool()).await.unwrap(), 1);
    assert_eq!(sink.copies_of(&first), 1, "the retry carries the same id");

    // Database b's email: another id, for the same customer and the same outbox row number.
    assert_eq!(
        mailer(&sink.url(), &clock)
            .run_once(&b.db.pool())
            .await
            .unwrap(),
        1
    );
    let delivered = sink.messages();
    assert_eq!(delivered.len(), 2);
    let ids: Vec<String> = delivered.iter().map(|m| m.message_id().unwrap()).collect();
    assert_ne!(ids[0], ids[1]);
    for (m, id) in delivered.iter().zip(&ids) {
        assert!(is_uuid_at_sender_domain(id), "{id}");
        assert_eq!(m.rcpt, vec![CONTACT_99121.to_owned()]);
        assert_eq!(read_mail(m).subject, subject("99121", "pending"));
        // Automatic mail says so (RFC 3834), and to Exchange too; replies go to From.
        assert_eq!(
            header(&m.data, "Auto-Submitted").as_deref(),
            Some("auto-generated")
        );
        assert_eq!(
            header(&m.data, "X-Auto-Response-Suppress").as_deref(),
            Some("OOF, AutoReply")
        );
        assert_eq!(header(&m.data, "Reply-To"), None);
    }
    assert_eq!(rows(&b).await[0].4.as_deref(), Some(ids[1].as_str()));
    // The admin routes show it, so an operator can find a forwarded copy.
    let (_, page) = a.get("/admin/emails", Some(&a.admin("demo-a"))).await;
    assert_eq!(page["items"][0]["message_id"], json!(first));
}

#[actix_web::test]
async fn a_permanent_refusal_fails_the_email_after_one_attempt_while_the_others_flow() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    let admin = t.admin("demo-a");
    for (insurer, outcome) in [
        ("too", "pending"),
        ("porto", "approved"),
        ("tokio", "approved"),
    ] {
        let (s, body) = t
            .callback("demo-a", insurer, example(insurer, outcome))
            .await;
        assert_eq!(s, 200, "{body}");
    }
    let sink = SmtpSink::start().await;
    let refusal = format!(
        "550 5.1.1 <{CONTACT_99121}>: Recipient address rejected: User unknown in virtual mailbox table"
    );
    sink.refuse_rcpt(CONTACT_99121, &refusal, None);
    let registry = prometheus::Registry::new();
    let metrics = OutboxMetrics::new();
    metrics.register(&registry);
    let send = mailer(&sink.url(), &clock).with_metrics(metrics.clone());

    // The refused one ends `failed` after one attempt; the other two go out over the same
    // connection (RSET after the refusal).
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 2);
    let failed_id = rows(&t).await[0].0;
    let expected_error = format!("SMTP RCPT TO: permanent error (550): {}", &refusal[4..]);
    assert_eq!(
        rows(&t)
            .await
            .into_iter()
            .map(|(_, s, n, e, _)| (s, n, e))
            .collect::<Vec<_>>(),
        vec![
            ("failed".to_owned(), 1, Some(expected_error.clone())),
            ("sent".to_owned(), 1, None),
            ("sent".to_owned(), 1, None),
        ]
    );
    let delivered = sink.messages();
    assert_eq!(
        delivered
            .iter()
            .map(|m| read_mail(m).subject)
            .collect::<Vec<_>>(),
        vec![
            subject("POR-2026-000123", "approved"),
            subject("548812", "approved")
        ]
    );
    assert_eq!(sink.connections(), 1);
    assert!(delivered.iter().all(|m| m.connection == 1));

    // An hour on, it has not been tried again: one attempt, one RCPT at the relay.
    clock.advance(chrono::Duration::hours(1));
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 0);
    assert_eq!(rows(&t).await[0].2, 1);
    let tried: Vec<_> = sink
        .rcpts()
        .into_iter()
        .filter(|r| r == CONTACT_99121)
        .collect();
    assert_eq!(tried.len(), 1);

    // What an operator sees: the relay's text, no next attempt, and a gauge to alert on.
    let (s, failed) = t.get("/admin/emails?status=failed", Some(&admin)).await;
    assert_eq!(s, 200, "{failed}");
    let item = &failed["items"][0];
    assert_eq!(failed["items"].as_array().unwrap().len(), 1);
    assert_eq!(
        (
            &item["id"],
            &item["status"],
            &item["attempts"],
            &item["last_error"],
            &item["next_attempt_at"],
            &item["failed_at"],
        ),
        (
            &json!(failed_id),
            &json!("failed"),
            &json!(1),
            &json!(expected_error),
            &Value::Null,
            &json!(t0().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        )
    );
    let (_, retrying) = t.get("/admin/emails?status=retrying", Some(&admin)).await;
    assert_eq!(retrying["items"], json!([]));
    worker::refresh_queue_metrics(&t.db.pool(), &clock, &metrics)
        .await
        .unwrap();
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    assert!(
        text.contains("proposal_callback_outbox_failed 1\n"),
        "{text}"
    );
    assert!(
        text.contains("proposal_callback_outbox_queued 0\n"),
        "{text}"
    );

    // Retry: refused for another tenant (not found), for a sent email and an unknown one.
    let retry = |id: i64| format!("/admin/emails/{id}/retry");
    let (s, b) = t
        .post(
            &retry(failed_id),
            Some(&t.admin("demo-b")),
            "application/json",
            vec![],
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (404, Some("not_found")), "{b}");
    let sent_id = rows(&t).await[1].0;
    let (s, b) = t
        .post(&retry(sent_id), Some(&admin), "application/json", vec![])
        .await;
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("email_not_failed")),
        "{b}"
    );
    assert_eq!(
        b["detail"],
        format!(
            "email {sent_id} is sent: only a failed email (refused for good by the relay) can be \
             sent again; the relay accepted it already"
        )
    );
    let (s, b) = t
        .post(&retry(999_999), Some(&admin), "application/json", vec![])
        .await;
    assert_eq!((s, b["code"].as_str()), (404, Some("not_found")));
    let (s, b) = t
        .post(
            "/admin/emails/x/retry",
            Some(&admin),
            "application/json",
            vec![],
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (400, Some("invalid_parameter")));

    // The mailbox exists now: retried, it goes back to the queue due now, and is delivered
    // with the Message-ID it was refused with.
    sink.accept_everything();
    let (s, b) = t
        .post(&retry(failed_id), Some(&admin), "application/json", vec![])
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        (
            &b["status"],
            &b["attempts"],
            &b["failed_at"],
            &b["next_attempt_at"]
        ),
        (
            &json!("retrying"),
            &json!(1),
            &Value::Null,
            &json!(
                clock
                    .now()
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
            )
        )
    );
    let (s, b) = t
        .post(&retry(failed_id), Some(&admin), "application/json", vec![])
        .await;
    assert_eq!(
        (s, b["code"].as_str()),
        (409, Some("email_not_failed")),
        "twice: {b}"
    );
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 1);
    let last = sink.messages().pop().unwrap();
    assert_eq!(read_mail(&last).subject, subject("99121", "pending"));
    assert_eq!(last.message_id(), rows(&t).await[0].4);
    let (_, story) = t.get("/admin/proposals/99121", Some(&admin)).await;
    let email = &story["emails"][0];
    assert_eq!(
        (&email["status"], &email["attempts"], &email["last_error"]),
        (&json!("sent"), &json!(2), &Value::Null)
    );
}

/// A 4xx answer to the recipient retries with the backoff: not before it, at it.
#[actix_web::test]
async fn a_transient_refusal_retries_after_the_backoff() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    t.callback("demo-a", "too", example("too", "pending")).await;
    let sink = SmtpSink::start().await;
    sink.refuse_rcpt(CONTACT_99121, "450 4.2.1 Mailbox busy, try later", Some(1));
    let send = mailer(&sink.url(), &clock);
    assert_eq!(send.run_once(&t.db.pool()).await.unwrap(), 0);
    let (_, status, attempts, error, _) = rows(&t).await.remove(0);
    assert_eq!(
        (status.as_str(), attempts, error.as_deref()),
        (
            "queued",
            1,
            Some("SMTP RCPT TO: transient error (450): 4.2.1 Mailbox busy, try later")
        )
    );
    clock.advance(seconds(1.9));
    assert_eq!(
        send.run_once(&t.db.pool()).await.unwrap(),
        0,
        "before the backoff"
    );
    clock.advance(seconds(0.1));
    assert_eq!(
        send.run_once(&t.db.pool()).await.unwrap(),
        1,
        "at the backoff"
    );
    assert_eq!(rows(&t).await[0].1, "sent");
}

/// Queues `n` emails: one per new proposal `BURST-<i>` (made here), each approved by porto.
async fn queue_burst(t: &TestApp, n: usize) {
    for i in 0..n {
        let id = format!("BURST-{i}");
        diesel::sql_query(
            "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email) \
             VALUES ('demo-a', $1, 'under_analysis', $2)",
        )
        .bind::<diesel::sql_types::Text, _>(&id)
        .bind::<diesel::sql_types::Text, _>(format!("burst.{i}@demo-a.example.com"))
        .execute(&mut t.conn().await)
        .await
        .unwrap();
        let body = edited("porto", "approved", |v| {
            v["idProposta"] = id.clone().into();
            v["protocolo"] = format!("burst-{i}").into();
        });
        let (s, b) = t.callback("demo-a", "porto", body).await;
        assert_eq!(s, 200, "{b}");
    }
}

#[actix_web::test]
async fn a_burst_goes_over_one_connection_and_one_login() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    queue_burst(&t, 10).await;
    let sink = SmtpSink::start().await;
    let url = format!("smtp://relay-user:secret@127.0.0.1:{}", sink.port);

    // One round: ten emails, one connection, one login.
    assert_eq!(
        mailer(&url, &clock).run_once(&t.db.pool()).await.unwrap(),
        10
    );
    assert_eq!((sink.connections(), sink.logins()), (1, 1));
    assert_eq!(sink.messages().len(), 10);
    assert!(sink.messages().iter().all(|m| m.connection == 1));

    // What `serve`'s worker does each time it looks (`Mailer::run` is `drain` and a wait):
    // 25 more, in rounds of ten, still one connection (kept while full rounds follow each
    // other, closed once nothing more is due). No task runs on its own: the counts do not
    // depend on when it would be scheduled.
    queue_burst_more(&t, 25).await;
    assert_eq!(mailer(&url, &clock).drain(&t.db.pool()).await.unwrap(), 25);
    assert!(rows(&t).await.iter().all(|(_, s, ..)| s == "sent"));
    assert_eq!(sink.messages().len(), 35);
    assert_eq!((sink.connections(), sink.logins()), (2, 2));
    assert!(sink.messages()[10..].iter().all(|m| m.connection == 2));
    assert!(
        rows(&t)
            .await
            .iter()
            .all(|(_, s, n, _, _)| s == "sent" && *n == 1)
    );
}

/// As [`queue_burst`], for proposals `MORE-<i>`.
async fn queue_burst_more(t: &TestApp, n: usize) {
    for i in 0..n {
        let id = format!("MORE-{i}");
        diesel::sql_query(
            "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email) \
             VALUES ('demo-a', $1, 'under_analysis', $2)",
        )
        .bind::<diesel::sql_types::Text, _>(&id)
        .bind::<diesel::sql_types::Text, _>(format!("more.{i}@demo-a.example.com"))
        .execute(&mut t.conn().await)
        .await
        .unwrap();
        let body = edited("porto", "approved", |v| {
            v["idProposta"] = id.clone().into();
            v["protocolo"] = format!("more-{i}").into();
        });
        let (s, b) = t.callback("demo-a", "porto", body).await;
        assert_eq!(s, 200, "{b}");
    }
}

/// A relay refusing the password (as a relay's brute-force protection counts it): one login
/// per backoff step of the relay (2 s, 4 s, ...), however many emails wait and however often
/// the worker looks; then, fixed, the queue goes out over one connection.
#[actix_web::test]
async fn a_wrong_password_costs_one_login_per_backoff_step_not_one_per_email() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    for insurer in ["porto", "tokio", "too"] {
        t.callback("demo-a", insurer, example(insurer, "approved"))
            .await;
    }
    let sink = SmtpSink::start().await;
    sink.refuse_logins("535 5.7.8 Error: authentication failed", None);
    let url = format!("smtp://relay-user:wrong@127.0.0.1:{}", sink.port);
    let send = mailer(&url, &clock);
    let pool = t.db.pool();
    let mut logins = Vec::new();
    // (seconds to advance, then five looks at the queue), as a worker polling every 200 ms.
    for advance in [0.0, 1.9, 0.1, 3.9, 0.1, 7.9, 0.1] {
        clock.advance(seconds(advance));
        for _ in 0..5 {
            assert_eq!(send.run_once(&pool).await.unwrap(), 0);
        }
        logins.push(sink.logins());
    }
    assert_eq!(logins, [1, 1, 2, 2, 3, 3, 4]);
    assert!(sink.messages().is_empty());
    // Each email was tried in turn (one per step), the error kept on it.
    let tried: Vec<(i32, Option<String>)> = rows(&t)
        .await
        .into_iter()
        .map(|(_, _, n, e, _)| (n, e))
        .collect();
    let refused = "SMTP AUTH: permanent error (535): 5.7.8 Error: authentication failed";
    assert_eq!(
        tried,
        vec![
            (2, Some(refused.to_owned())),
            (1, Some(refused.to_owned())),
            (1, Some(refused.to_owned())),
        ]
    );
    assert!(
        rows(&t).await.iter().all(|(_, s, ..)| s == "queued"),
        "a login refusal fails no email for good"
    );

    // The password fixed at the relay: after the relay's backoff, everything goes out.
    sink.accept_everything();
    clock.advance(seconds(16.0));
    assert_eq!(send.run_once(&pool).await.unwrap(), 3);
    assert_eq!(sink.logins(), 5);
    assert_eq!(
        sink.messages()
            .iter()
            .map(|m| m.connection)
            .collect::<Vec<_>>(),
        vec![sink.connections(); 3]
    );
}

/// A relay that lets the worker log in and then refuses every sender (MAIL FROM: a relay
/// policy, `EMAIL_FROM` not allowed) is the relay's trouble, not the emails': it is knocked
/// at once per backoff step, the backoff growing, and no email ends `failed`.
#[actix_web::test]
async fn a_relay_refusing_the_sender_is_backed_off_and_fails_no_email() {
    let clock = Clock::manual(t0());
    let t = app(&clock).await;
    for insurer in ["porto", "tokio"] {
        t.callback("demo-a", insurer, example(insurer, "approved"))
            .await;
    }
    let sink = SmtpSink::start().await;
    sink.refuse_senders("553 5.7.1 Sender address rejected: not owned by user", None);
    let url = format!("smtp://relay-user:secret@127.0.0.1:{}", sink.port);
    let send = mailer(&url, &clock);
    let pool = t.db.pool();
    let mut logins = Vec::new();
    for advance in [0.0, 1.9, 0.1, 3.9, 0.1] {
        clock.advance(seconds(advance));
        for _ in 0..5 {
            assert_eq!(send.run_once(&pool).await.unwrap(), 0);
        }
        logins.push(sink.logins());
    }
    assert_eq!(logins, [1, 1, 2, 2, 3], "the backoff grows: 2 s, then 4 s");
    let refused = "the relay refuses the sender: SMTP MAIL FROM: permanent error (553): 5.7.1 \
                   Sender address rejected: not owned by user";
    assert_eq!(
        rows(&t)
            .await
            .into_iter()
            .map(|(_, s, n, e, _)| (s, n, e))
            .collect::<Vec<_>>(),
        vec![
            ("queued".to_owned(), 2, Some(refused.to_owned())),
            ("queued".to_owned(), 1, Some(refused.to_owned())),
        ]
    );
    sink.accept_everything();
    clock.advance(seconds(8.0));
    assert_eq!(send.run_once(&pool).await.unwrap(), 2);
}

/// The database itself refuses a second email for a transition, and a second transition for
/// a callback: not only the code that avoids them.
#[actix_web::test]
async fn the_database_refuses_a_second_email_for_one_transition() {
    let t = TestApp::start().await;
    let (s, b) = t
        .callback("demo-a", "too", example("too", "approved"))
        .await;
    assert_eq!(s, 200, "{b}");
    let mut conn = t.conn().await;
    let again = diesel::sql_query(
        "INSERT INTO proposal.email_outbox (proposal_id, history_id, recipient, subject, body) \
         SELECT proposal_id, history_id, recipient, subject, body FROM proposal.email_outbox",
    )
    .execute(&mut conn)
    .await
    .unwrap_err();
    assert!(
        again.to_string().contains(
            "duplicate key value violates unique constraint \"email_outbox_one_per_transition\""
        ),
        "{again}"
    );
    let twice = diesel::sql_query(
        "INSERT INTO proposal.integration_history \
             (proposal_id, insurer, receipt_id, from_status, to_status) \
         SELECT proposal_id, insurer, receipt_id, from_status, to_status \
         FROM proposal.integration_history",
    )
    .execute(&mut conn)
    .await
    .unwrap_err();
    assert!(
        twice.to_string().contains(
            "duplicate key value violates unique constraint \"integration_history_one_per_receipt\""
        ),
        "{twice}"
    );
    let emails: i64 = o::table.count().get_result(&mut conn).await.unwrap();
    assert_eq!(emails, 1);
}
