//! Insurers watched for silence (docs/proposal-callback.md, "Silent insurers"), on a manual
//! clock: an integration with a regular rhythm goes silent, is flagged after its threshold and
//! not before, its tenant's operator gets one email (two replicas checking at once), the
//! metric, `GET /admin/integrations` and the console say so, and a callback clears it with a
//! second email. The rhythm is learned by hour of the weekday: a night or a weekend without
//! callbacks is not a silence for an integration that sleeps then.
//!
//! Each test judges its own (tenant, insurer), so the process-wide gauge each one reads is
//! only ever set by that test.

use std::collections::HashMap;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};
use common::Clock;
use common::db::Pool;
use common::settings::FromSource;
use common::test_support::SmtpSink;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::domain::silence::SilenceRule;
use proposal_callback::flow::email_worker::Mailer;
use proposal_callback::flow::silence::{SilenceWatch, WatchConfig};
use proposal_callback::schema::proposal::{email_outbox as o, integration_silences as s};
use proposal_callback::settings::EmailSettings;
use serde_json::{Value, json};

use crate::support::{Mail, TestApp, example, read_mail};

/// Where demo-a's operator is told, in the first test.
const OPS: &str = "ops@demo-a.example.com";

/// A Tuesday, 10:00 in Brasília.
fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2031-03-04T13:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// A stored episode: since, flagged at, ended at, cleared at, learned from, with its alert
/// email, with its resume email.
type Episode = (
    DateTime<Utc>,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    String,
    bool,
    bool,
);

fn watch(k: f64, floor_minutes: u64, window_days: u64) -> SilenceWatch {
    SilenceWatch::new(WatchConfig {
        interval: StdDuration::from_secs(60),
        rule: SilenceRule {
            k,
            floor: StdDuration::from_secs(floor_minutes * 60),
            learning_window: StdDuration::from_secs(window_days * 86_400),
        },
        console_url: "https://callbacks.example.com/admin/integracao".into(),
    })
}

/// Stores callbacks of `tenant`'s `insurer` integration received every `step_minutes` from
/// `from` to `to` (both included), as an insurer with a regular rhythm leaves them; with
/// `business_hours`, only those from 09:00 to 17:59 Brasília time, Monday to Friday.
async fn rhythm(
    t: &TestApp,
    tenant: &str,
    insurer: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    step_minutes: i64,
    business_hours: bool,
) -> usize {
    let filter = if business_hours {
        "WHERE extract(isodow FROM (at AT TIME ZONE 'UTC') - interval '3 hours') < 6 \
           AND extract(hour FROM (at AT TIME ZONE 'UTC') - interval '3 hours') BETWEEN 9 AND 17"
    } else {
        ""
    };
    diesel::sql_query(format!(
        "INSERT INTO proposal.callback_receipts \
             (tenant_id, insurer, integration_id, received_at, body, body_sha256, status) \
         SELECT $1, $2, $3, at, convert_to('{{}}', 'UTF8'), sha256(convert_to('{{}}', 'UTF8')), \
                'processed' \
         FROM generate_series($4::timestamptz, $5::timestamptz, make_interval(mins => $6)) at \
         {filter}"
    ))
    .bind::<diesel::sql_types::Text, _>(tenant)
    .bind::<diesel::sql_types::Text, _>(insurer)
    .bind::<diesel::sql_types::BigInt, _>(t.integration_id(tenant, insurer))
    .bind::<diesel::sql_types::Timestamptz, _>(from)
    .bind::<diesel::sql_types::Timestamptz, _>(to)
    .bind::<diesel::sql_types::Integer, _>(step_minutes as i32)
    .execute(&mut *t.conn().await)
    .await
    .unwrap()
}

/// The service on a manual clock at [`t0`], and that clock.
async fn app_at_t0() -> (Clock, TestApp) {
    let clock = Clock::manual(t0());
    let t = {
        let clock = clock.clone();
        TestApp::start_with_state(move |state| state.with_clock(clock)).await
    };
    (clock, t)
}

/// demo-a's porto called back every 10 minutes for a week, the last one at [`t0`]: how many
/// callbacks were stored.
async fn porto_every_10_minutes_for_a_week(t: &TestApp) -> usize {
    rhythm(
        t,
        "demo-a",
        "porto",
        t0() - Duration::days(7),
        t0(),
        10,
        false,
    )
    .await
}

async fn integration(t: &TestApp, tenant: &str, insurer: &str) -> Value {
    let (status, list) = t.get("/admin/integrations", Some(&t.admin(tenant))).await;
    assert_eq!(status, 200, "{list}");
    list.as_array()
        .unwrap()
        .iter()
        .find(|i| i["insurer"] == insurer)
        .unwrap()
        .clone()
}

/// The gauge's line for the tenant and insurer in `/metrics`.
async fn gauge(t: &TestApp, tenant: &str, insurer: &str) -> Option<String> {
    let text = t
        .client
        .get(format!("{}/metrics", t.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series = format!(
        "proposal_callback_integration_silent{{insurer=\"{insurer}\",tenant=\"{tenant}\"}} "
    );
    text.lines()
        .find_map(|l| l.strip_prefix(&series).map(str::to_owned))
}

/// The operator emails in the outbox (those about no proposal): recipient and subject.
async fn operator_emails(t: &TestApp) -> Vec<(String, String)> {
    o::table
        .filter(o::proposal_id.is_null())
        .order(o::id)
        .select((o::recipient, o::subject))
        .load(&mut *t.conn().await)
        .await
        .unwrap()
}

fn mailer(sink: &SmtpSink, clock: &Clock) -> Mailer {
    let mut env = HashMap::new();
    env.insert("SMTP_URL".to_owned(), sink.url());
    let config = EmailSettings::from_source(&env).unwrap().config().unwrap();
    Mailer::new(&config)
        .unwrap()
        .unwrap()
        .with_clock(clock.clone())
}

/// Every email the worker can send now; those the sink received for `to`, read as a mail
/// client reads them.
async fn deliver(pool: &Pool, sink: &SmtpSink, clock: &Clock, to: &str) -> Vec<Mail> {
    mailer(sink, clock).run_once(pool).await.unwrap();
    sink.messages()
        .iter()
        .map(read_mail)
        .filter(|m| m.to == [to])
        .collect()
}

async fn console_page(t: &TestApp, tenant: &str) -> String {
    let res = t
        .client
        .get(format!("{}/admin/integracao", t.base))
        .header("cookie", t.console_session(tenant).await)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

#[actix_web::test]
async fn a_regular_insurer_gone_silent_is_flagged_after_its_threshold_once_and_cleared_by_a_callback()
 {
    let (clock, t) = app_at_t0().await;
    let admin = t.admin("demo-a");
    // The operator's address is the tenant's to set.
    let (status, tenant) = t
        .client
        .patch(format!("{}/admin/tenant", t.base))
        .bearer_auth(&admin)
        .json(&json!({"operator_email": "Operações Demo A <ops@demo-a.example.com>"}))
        .send()
        .await
        .map(|r| (r.status().as_u16(), r))
        .unwrap();
    assert_eq!(status, 200);
    let tenant = tenant.json::<Value>().await.unwrap();
    assert_eq!(
        (&tenant["id"], &tenant["name"]),
        (&json!("demo-a"), &json!("Imobiliária Demo A"))
    );
    let operator = tenant["operator_email"].as_str().unwrap().to_owned();
    assert!(
        operator.contains("Operações Demo A") && operator.ends_with("<ops@demo-a.example.com>"),
        "{operator}"
    );

    // Porto called back every 10 minutes for a week, the last one at t0.
    let stored = porto_every_10_minutes_for_a_week(&t).await;
    assert_eq!(stored, 7 * 24 * 6 + 1);
    // Its usual gap at 10:00 on a Tuesday is 10 min: flagged past 3 x 10 = 30 min (the floor
    // is 20 min).
    // Learned over eight days, so the whole week stays in the window while the test runs.
    let mut replica_a = watch(3.0, 20, 8);
    let mut replica_b = watch(3.0, 20, 8);
    let pool = t.db.pool();

    for minutes_silent in [5, 29] {
        clock.set(t0() + Duration::minutes(minutes_silent));
        let round = replica_a.check_once(&pool, &clock).await.unwrap();
        assert!(
            round.flagged.is_empty() && round.silent.is_empty(),
            "{round:?}"
        );
    }
    clock.set(t0() + Duration::minutes(30));
    let round = replica_a.check_once(&pool, &clock).await.unwrap();
    assert!(
        round.flagged.is_empty(),
        "exactly at the threshold: not yet"
    );
    let porto = integration(&t, "demo-a", "porto").await;
    assert_eq!(porto["silent_since"], Value::Null);
    assert_eq!(porto["last_callback_at"], json!("2031-03-04T13:00:00Z"));
    assert_eq!(operator_emails(&t).await, []);

    // A second past it, two replicas check at once: one flags it, one email is queued.
    let flagged_at = t0() + Duration::minutes(30) + Duration::seconds(1);
    clock.set(flagged_at);
    let (a, b) = tokio::join!(
        replica_a.check_once(&pool, &clock),
        replica_b.check_once(&pool, &clock)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.flagged.len() + b.flagged.len(), 1, "{a:?} {b:?}");
    assert_eq!(a.emails + b.emails, 1);
    let porto_id = t.integration_id("demo-a", "porto");
    assert_eq!(
        (a.silent.clone(), b.silent.clone()),
        (vec![porto_id], vec![porto_id])
    );
    let subject =
        "Porto Seguro (Homologação) sem callbacks desde 04/03/2031 10:00 | Imobiliária Demo A";
    assert_eq!(
        operator_emails(&t).await,
        [(operator.clone(), subject.to_owned())]
    );
    let porto = integration(&t, "demo-a", "porto").await;
    assert_eq!(porto["silent_since"], json!("2031-03-04T13:00:00Z"));
    assert_eq!(porto["silence_threshold_seconds"], json!(1800.0));
    assert_eq!(gauge(&t, "demo-a", "porto").await.as_deref(), Some("1"));
    // The other integrations of the tenant are not silent.
    assert_eq!(
        integration(&t, "demo-a", "tokio").await["silent_since"],
        Value::Null
    );

    // The console's banner says it.
    let html = console_page(&t, "demo-a").await;
    assert!(
        html.contains(
            "<strong>Porto Seguro (Homologação) sem callbacks desde <time datetime=\"2031-03-04T13:00:00Z\">04/03/2031 10:00:00</time></strong>"
        ),
        "{html}"
    );
    assert!(html.contains("há 30 min nenhum callback chega"), "{html}");
    assert!(html.contains("não passar de 30 min"), "{html}");

    // The worker sends it: one email, to the operator, saying since when and what is usual.
    let sink = SmtpSink::start().await;
    let mails = deliver(&pool, &sink, &clock, OPS).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, ["ops@demo-a.example.com"]);
    assert_eq!(mails[0].subject, subject);
    assert!(
        mails[0].text.contains(
            "desde 04/03/2031 10:00 (horário de Brasília): 30 min sem nenhum callback até 04/03/2031 10:30."
        ),
        "{}",
        mails[0].text
    );
    assert!(
        mails[0]
            .text
            .contains("fica abaixo de 10 min em 99% das vezes")
    );
    assert!(
        mails[0]
            .html
            .as_deref()
            .unwrap()
            .contains("Seguradora sem enviar callbacks")
    );

    // Still silent later: no second flag, no second email.
    clock.set(t0() + Duration::minutes(45));
    let (a, b) = tokio::join!(
        replica_a.check_once(&pool, &clock),
        replica_b.check_once(&pool, &clock)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(
        (a.flagged.len(), b.flagged.len(), a.emails + b.emails),
        (0, 0, 0)
    );
    assert_eq!(deliver(&pool, &sink, &clock, OPS).await.len(), 1);

    // Porto calls back at 10:50: the integration is no longer shown silent, at once.
    clock.set(t0() + Duration::minutes(50));
    let (status, body) = t
        .callback("demo-a", "porto", example("porto", "approved"))
        .await;
    assert_eq!(
        (status, &body["result"]),
        (200, &json!("processed")),
        "{body}"
    );
    let porto = integration(&t, "demo-a", "porto").await;
    assert_eq!(porto["silent_since"], Value::Null);
    assert_eq!(porto["silence_threshold_seconds"], Value::Null);
    assert_eq!(porto["last_callback_at"], json!("2031-03-04T13:50:00Z"));
    assert!(
        !console_page(&t, "demo-a")
            .await
            .contains("sem callbacks desde")
    );

    // The next rounds clear it: one of the two replicas, one second email.
    clock.set(t0() + Duration::minutes(51));
    let (a, b) = tokio::join!(
        replica_a.check_once(&pool, &clock),
        replica_b.check_once(&pool, &clock)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.cleared.len() + b.cleared.len(), 1, "{a:?} {b:?}");
    assert_eq!(a.emails + b.emails, 1);
    assert!(a.silent.is_empty() && b.silent.is_empty());
    assert_eq!(gauge(&t, "demo-a", "porto").await.as_deref(), Some("0"));
    let mails = deliver(&pool, &sink, &clock, OPS).await;
    assert_eq!(mails.len(), 2);
    assert_eq!(mails[1].to, ["ops@demo-a.example.com"]);
    assert_eq!(
        mails[1].subject,
        "Porto Seguro (Homologação) voltou a enviar callbacks | Imobiliária Demo A"
    );
    assert!(
        mails[1].text.contains(
            "o primeiro chegou em 04/03/2031 10:50 (horário de Brasília). O silêncio durou 50 min, desde 04/03/2031 10:00."
        ),
        "{}",
        mails[1].text
    );

    // The episode as stored: one row, both emails, its start, end and when each was seen.
    let rows: Vec<Episode> = s::table
        .select((
            s::since,
            s::flagged_at,
            s::ended_at,
            s::cleared_at,
            s::learned_from,
            s::alert_email_id.is_not_null(),
            s::resume_email_id.is_not_null(),
        ))
        .load(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(
        rows,
        [(
            t0(),
            flagged_at,
            Some(t0() + Duration::minutes(50)),
            Some(t0() + Duration::minutes(51)),
            "hour".to_owned(),
            true,
            true
        )]
    );
    // And a later round changes nothing.
    clock.set(t0() + Duration::minutes(55));
    let round = replica_a.check_once(&pool, &clock).await.unwrap();
    assert_eq!(round, Default::default());
}

/// A business-hours insurer (09:00 to 17:59 Brasília, Monday to Friday, every 10 min, for
/// four weeks): its night and its weekend are not silences, an hour of silence on a weekday
/// morning is.
#[actix_web::test]
async fn the_rhythm_is_learned_per_hour_of_the_weekday() {
    let clock = Clock::manual(t0());
    let t = {
        let clock = clock.clone();
        TestApp::start_with_state(move |state| state.with_clock(clock)).await
    };
    let pool = t.db.pool();
    let mut w = watch(3.0, 30, 28);
    // Four weeks ending Friday 2031-03-07 17:50 Brasília (20:50 UTC).
    let friday_last = DateTime::parse_from_rfc3339("2031-03-07T20:50:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let start = friday_last - Duration::days(28);
    rhythm(&t, "demo-b", "too", start, friday_last, 10, true).await;

    // Friday night, Saturday morning, Sunday evening, Monday 08:30: its usual weekend.
    for at in [
        "2031-03-08T02:00:00Z",
        "2031-03-08T13:00:00Z",
        "2031-03-09T22:00:00Z",
        "2031-03-10T11:30:00Z",
    ] {
        clock.set(
            DateTime::parse_from_rfc3339(at)
                .unwrap()
                .with_timezone(&Utc),
        );
        let round = w.check_once(&pool, &clock).await.unwrap();
        assert!(round.flagged.is_empty(), "{at}: {round:?}");
    }
    assert_eq!(gauge(&t, "demo-b", "too").await.as_deref(), Some("0"));

    // Monday from 09:00 to 10:00 it calls back as usual, then stops.
    let monday_9 = DateTime::parse_from_rfc3339("2031-03-10T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    rhythm(
        &t,
        "demo-b",
        "too",
        monday_9,
        monday_9 + Duration::hours(1),
        10,
        true,
    )
    .await;
    let last = monday_9 + Duration::hours(1);
    // Its gaps that began at 10:00 on a Monday were 10 min each: past the 30 min floor.
    clock.set(last + Duration::minutes(30));
    assert!(
        w.check_once(&pool, &clock)
            .await
            .unwrap()
            .flagged
            .is_empty()
    );
    clock.set(last + Duration::minutes(31));
    let round = w.check_once(&pool, &clock).await.unwrap();
    assert_eq!(round.flagged.len(), 1, "{round:?}");
    let too = integration(&t, "demo-b", "too").await;
    assert_eq!(too["silent_since"], json!("2031-03-10T13:00:00Z"));
    assert_eq!(too["silence_threshold_seconds"], json!(1800.0));
    assert_eq!(gauge(&t, "demo-b", "too").await.as_deref(), Some("1"));
    // Its tenant's demo operator address got the email.
    assert_eq!(
        operator_emails(&t).await,
        [(
            "operacoes@demo-b.example.com".to_owned(),
            "Too Seguros (Homologação) sem callbacks desde 10/03/2031 10:00 | Imobiliária Demo B"
                .to_owned()
        )]
    );
}

/// An integration without enough history is not judged; a tenant without an operator address
/// gets the flag, the metric and the banner, and no email.
#[actix_web::test]
async fn without_history_nothing_is_judged_and_without_an_address_nobody_is_emailed() {
    let clock = Clock::manual(t0());
    let t = {
        let clock = clock.clone();
        TestApp::start_with_state(move |state| state.with_clock(clock)).await
    };
    let pool = t.db.pool();
    let admin = t.admin("demo-b");
    let (status, body) = t
        .client
        .patch(format!("{}/admin/tenant", t.base))
        .bearer_auth(&admin)
        .json(&json!({"operator_email": null}))
        .send()
        .await
        .map(|r| (r.status().as_u16(), r))
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        body.json::<Value>().await.unwrap()["operator_email"],
        Value::Null
    );

    // Porto: nineteen gaps of 10 min, too few to know a rhythm. Tokio: twenty, judged by the
    // whole window (one of them began at 10:00, too few for that hour alone).
    rhythm(
        &t,
        "demo-b",
        "porto",
        t0() - Duration::minutes(190),
        t0(),
        10,
        false,
    )
    .await;
    rhythm(
        &t,
        "demo-b",
        "tokio",
        t0() - Duration::minutes(200),
        t0(),
        10,
        false,
    )
    .await;
    let mut w = watch(3.0, 30, 7);
    clock.set(t0() + Duration::minutes(31));
    let round = w.check_once(&pool, &clock).await.unwrap();
    assert_eq!(round.flagged.len(), 1, "{round:?}");
    assert_eq!(round.silent, [t.integration_id("demo-b", "tokio")]);
    assert_eq!(round.emails, 0);
    // Three days later porto is still not judged.
    clock.set(t0() + Duration::days(3));
    let round = w.check_once(&pool, &clock).await.unwrap();
    assert_eq!(
        round.silent,
        [t.integration_id("demo-b", "tokio")],
        "{round:?}"
    );
    assert_eq!(
        integration(&t, "demo-b", "porto").await["silent_since"],
        Value::Null
    );

    let learned: String = s::table
        .select(s::learned_from)
        .first(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(learned, "window");
    assert_eq!(operator_emails(&t).await, []);
    assert_eq!(gauge(&t, "demo-b", "tokio").await.as_deref(), Some("1"));
    assert_eq!(gauge(&t, "demo-b", "porto").await.as_deref(), Some("0"));
    let html = console_page(&t, "demo-b").await;
    assert!(
        html.contains("Tokio Marine (Homologação) sem callbacks desde"),
        "{html}"
    );
    assert!(!html.contains("Porto Seguro (Homologação) sem callbacks desde"));
}

#[actix_web::test]
async fn the_operator_address_is_checked_and_only_the_admins_tenant_changes() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    let patch = |body: Value| {
        let req = t
            .client
            .patch(format!("{}/admin/tenant", t.base))
            .bearer_auth(&admin)
            .json(&body);
        async move {
            let res = req.send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let (_, before) = t.get("/admin/tenant", Some(&admin)).await;
    assert_eq!(
        before,
        json!({"id": "demo-a", "name": "Imobiliária Demo A",
               "operator_email": "operacoes@demo-a.example.com",
               "time_zone": "America/Sao_Paulo"})
    );
    for bad in ["not an address", "ops@", "a@b.c\r\nBcc: x@y.z"] {
        let (status, problem) = patch(json!({"operator_email": bad})).await;
        assert_eq!(status, 400, "{bad:?}: {problem}");
        assert_eq!(problem["code"], "invalid_payload");
        assert_eq!(problem["errors"][0]["field"], "operator_email", "{problem}");
    }
    let (status, problem) = patch(json!({"operador": "x@y.z"})).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (400, Some("invalid_payload"))
    );
    // Nothing changed by the refusals; an absent field changes nothing either.
    assert_eq!(patch(json!({})).await, (200, before.clone()));
    let (status, after) = patch(json!({"operator_email": " plantao@demo-a.example.com "})).await;
    assert_eq!(status, 200);
    assert_eq!(after["operator_email"], "plantao@demo-a.example.com");
    assert_eq!(t.get("/admin/tenant", Some(&admin)).await.1, after);
    // demo-b's is its own.
    let (_, other) = t.get("/admin/tenant", Some(&t.admin("demo-b"))).await;
    assert_eq!(other["operator_email"], "operacoes@demo-b.example.com");
    // Without a token: 401.
    let (status, _) = t.get("/admin/tenant", None).await;
    assert_eq!(status, 401);
}

/// The log lines written while `_guard` lives (on this thread: the test's own code), as JSON.
struct Logs {
    buffer: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Logs {
    fn capture() -> Logs {
        let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || LogWriter(sink.clone()))
            .finish();
        Logs {
            buffer,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// Each line's `fields`, by its message.
    fn lines(&self) -> Vec<Value> {
        let text = String::from_utf8(self.buffer.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["fields"].clone())
            .collect()
    }
}

struct LogWriter(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The watch's log lines say values: the operator email's id as a number and the silence's
/// end as a time, as a person searching the log types them; never Rust's `Some(...)`.
#[actix_web::test]
async fn the_watch_logs_the_email_and_the_end_as_values() {
    let (clock, t) = app_at_t0().await;
    porto_every_10_minutes_for_a_week(&t).await;
    let pool = t.db.pool();
    let logs = Logs::capture();
    let mut w = watch(3.0, 20, 8);
    clock.set(t0() + Duration::minutes(31));
    let round = w.check_once(&pool, &clock).await.unwrap();
    assert_eq!((round.flagged.len(), round.emails), (1, 1), "{round:?}");
    clock.set(t0() + Duration::minutes(50));
    let (status, body) = t
        .callback("demo-a", "porto", example("porto", "approved"))
        .await;
    assert_eq!(status, 200, "{body}");
    clock.set(t0() + Duration::minutes(51));
    let round = w.check_once(&pool, &clock).await.unwrap();
    assert_eq!((round.cleared.len(), round.emails), (1, 1), "{round:?}");

    let (alert, resume): (Option<i64>, Option<i64>) = s::table
        .select((s::alert_email_id, s::resume_email_id))
        .first(&mut *t.conn().await)
        .await
        .unwrap();
    let lines = logs.lines();
    let line = |message: &str| {
        lines
            .iter()
            .find(|l| l["message"] == message)
            .unwrap_or_else(|| panic!("no {message:?} line in {lines:#?}"))
            .clone()
    };
    let silent = line("integration silent: no callback for longer than its rhythm allows");
    assert_eq!(silent["email"], json!(alert.unwrap()), "{silent}");
    assert_eq!(
        silent["since"],
        json!("2031-03-04 13:00:00 UTC"),
        "{silent}"
    );
    let resumed = line("integration callbacks resumed");
    assert_eq!(resumed["email"], json!(resume.unwrap()), "{resumed}");
    assert_eq!(
        resumed["ended_at"],
        json!("2031-03-04 13:50:00 UTC"),
        "{resumed}"
    );
    let all = serde_json::to_string(&lines).unwrap();
    assert!(!all.contains("Some("), "{all}");
}
