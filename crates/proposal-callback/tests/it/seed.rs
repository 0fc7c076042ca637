//! The demo seed's history: callbacks of the last days, received through the callback path on
//! a manual clock that ends at the seeding clock's now; idempotent; revived when old. Every
//! time here is a manual clock's, never compared with the wall clock.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use common::Clock;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Jsonb, Text};
use diesel_async::RunQueryDsl;
use proposal_callback::domain::status::Status;
use proposal_callback::schema::proposal::{
    callback_receipts as r, email_outbox as o, integration_history as h, proposal_events as e,
    proposals as p,
};
use proposal_callback::seed::{
    self, DEMO_PROPOSALS, HistoryAction, SEED_USER_AGENT, SeedOptions, SeedReport,
};
use serde_json::{Value, json};

use crate::support::{TestApp, example};

type Time = DateTime<Utc>;
/// A time that may be unset (`processed_at`, `sent_at`).
type Sometime = Option<Time>;

/// Where the tests' seeding clock stands: any instant does.
fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2031-07-14T18:25:43.250017Z")
        .unwrap()
        .with_timezone(&Utc)
}

async fn seed_at(t: &TestApp, at: DateTime<Utc>, options: SeedOptions) -> SeedReport {
    let mut conn = t.conn().await;
    seed::run(&mut conn, &Clock::manual(at), options)
        .await
        .unwrap()
}

/// The seeded receipts (those the seed's user agent brought): (id, received_at, status).
async fn seeded_receipts(t: &TestApp) -> Vec<(i64, DateTime<Utc>, String)> {
    r::table
        .filter(
            diesel::dsl::sql::<diesel::sql_types::Bool>("headers->>'user-agent' = ")
                .bind::<Text, _>(SEED_USER_AGENT),
        )
        .order(r::id)
        .select((r::id, r::received_at, r::status))
        .load(&mut *t.conn().await)
        .await
        .unwrap()
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Rows per table of the schema.
async fn counts(t: &TestApp) -> BTreeMap<&'static str, i64> {
    let mut out = BTreeMap::new();
    for table in [
        "tenants",
        "integrations",
        "tokens",
        "proposals",
        "callback_receipts",
        "applied_callbacks",
        "integration_history",
        "proposal_events",
        "email_outbox",
    ] {
        let c: Count = diesel::sql_query(format!("SELECT count(*) AS n FROM proposal.{table}"))
            .get_result(&mut *t.conn().await)
            .await
            .unwrap();
        out.insert(table, c.n);
    }
    out
}

/// Receipts of the 24 hours ending `days` days before `end`.
fn on_day(receipts: &[(i64, DateTime<Utc>, String)], end: DateTime<Utc>, days: i64) -> usize {
    let (from, to) = (end - Duration::days(days + 1), end - Duration::days(days));
    receipts
        .iter()
        .filter(|(_, at, _)| *at > from && *at <= to)
        .count()
}

#[actix_web::test]
async fn the_history_ends_within_the_last_hour_and_covers_every_recent_day() {
    let t = TestApp::start().await;
    let report = seed_at(&t, t0(), SeedOptions::default()).await;
    let history = &report.history;
    assert_eq!(history.action, HistoryAction::Created, "{history:?}");
    assert_eq!(history.now, t0());

    let receipts = seeded_receipts(&t).await;
    assert_eq!(receipts.len(), history.callbacks_added);
    let newest = receipts.iter().map(|(_, at, _)| *at).max().unwrap();
    assert!(
        newest <= t0() && newest > t0() - Duration::hours(1),
        "the newest seeded callback, {newest}, is within the hour before {}",
        t0()
    );
    assert_eq!(history.newest_after, Some(newest));
    let oldest = receipts.iter().map(|(_, at, _)| *at).min().unwrap();
    assert!(
        oldest > t0() - Duration::days(seed::HISTORY_DAYS),
        "{oldest}"
    );
    for day in 0..7 {
        assert!(
            on_day(&receipts, t0(), day) > 0,
            "receipts on day -{day}: {receipts:?}"
        );
    }
    // Receipts are numbered in the order they were received.
    assert!(receipts.windows(2).all(|w| w[0].1 <= w[1].1));

    // Both tenants, dozens of proposals each, and every kind of answer.
    let proposals: Vec<(String, i64)> = p::table
        .filter(p::proposal_id.ne_all(DEMO_PROPOSALS))
        .group_by(p::tenant_id)
        .select((p::tenant_id, diesel::dsl::count_star()))
        .load(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(proposals.len(), 2, "{proposals:?}");
    assert!(proposals.iter().all(|(_, n)| *n >= 30), "{proposals:?}");
    assert_eq!(
        proposals.iter().map(|(_, n)| *n as usize).sum::<usize>(),
        history.proposals_added
    );
    for outcome in ["processed", "duplicate", "stale", "ignored", "unchanged"] {
        assert!(
            history.outcomes.get(outcome).copied().unwrap_or(0) >= 2,
            "{outcome}: {:?}",
            history.outcomes
        );
    }
    assert_eq!(
        history.outcomes.get("invalid_transition"),
        Some(&2),
        "one refused by the transition table per tenant: {:?}",
        history.outcomes
    );
    let failed = receipts.iter().filter(|(_, _, s)| s == "failed").count();
    assert_eq!(failed, 2);

    // The nine example proposals still wait for the README's and the tests' callbacks.
    let examples: Vec<String> = p::table
        .filter(p::tenant_id.eq("demo-a"))
        .filter(p::proposal_id.eq_any(DEMO_PROPOSALS))
        .select(p::status)
        .load(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(examples.len(), 9);
    assert!(
        examples.iter().all(|s| s == "under_analysis"),
        "{examples:?}"
    );

    // Each email is recorded sent, a few seconds after its transition: none waits for a worker.
    let emails: Vec<(String, i32, Sometime, DateTime<Utc>)> = o::table
        .select((o::status, o::attempts, o::sent_at, o::created_at))
        .load(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(emails.len(), history.emails_recorded_sent);
    assert!(emails.len() >= 40);
    for (status, attempts, sent_at, created_at) in &emails {
        assert_eq!((status.as_str(), *attempts), ("sent", 1));
        let delay = sent_at.unwrap() - *created_at;
        assert!(delay > Duration::zero() && delay <= Duration::seconds(3));
    }

    // One instant per callback: its receipt, the proposal's change, its history row, its
    // events and its email all carry the time the seed's clock gave.
    let rows: Vec<(Time, Sometime, Time, Time)> = h::table
        .inner_join(r::table)
        .inner_join(o::table)
        .inner_join(p::table)
        .filter(p::updated_at.eq(h::created_at))
        .select((
            r::received_at,
            r::processed_at,
            h::created_at,
            o::created_at,
        ))
        .load(&mut *t.conn().await)
        .await
        .unwrap();
    assert!(
        rows.len() >= 2 * 30,
        "{} proposals changed last by a callback",
        rows.len()
    );
    for (received, processed, recorded, queued) in rows {
        assert_eq!(
            (processed, recorded, queued),
            (Some(received), received, received)
        );
    }
    let mismatched: i64 = e::table
        .inner_join(r::table)
        .filter(e::created_at.ne(r::received_at))
        .count()
        .get_result(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(
        mismatched, 0,
        "events recorded at another time than their callback"
    );
}

/// The JSON types of a value: what the tests compare of a seeded row and a live one.
fn shape(v: &Value) -> Value {
    match v {
        Value::Null => json!("null"),
        Value::Bool(_) => json!("bool"),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
        Value::Array(items) => {
            let mut shapes: Vec<Value> = items.iter().map(shape).collect();
            shapes.sort_by_key(|s| s.to_string());
            shapes.dedup();
            Value::Array(shapes)
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
    }
}

/// Only the keys, at every depth.
fn keys(v: &Value) -> Value {
    match v {
        Value::Array(items) => {
            let mut all: Vec<Value> = items.iter().map(keys).collect();
            all.sort_by_key(|s| s.to_string());
            all.dedup();
            Value::Array(all)
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), keys(v))).collect()),
        _ => Value::Null,
    }
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Jsonb)]
    row: Value,
}

/// A receipt's stored row, every column, as JSON.
async fn receipt_row(t: &TestApp, id: i64) -> Value {
    diesel::sql_query("SELECT to_jsonb(r) AS row FROM proposal.callback_receipts r WHERE id = $1")
        .bind::<BigInt, _>(id)
        .get_result::<Row>(&mut *t.conn().await)
        .await
        .unwrap()
        .row
}

/// A demo-a proposal of the history whose first transition was `insurer`'s move to pending.
async fn seeded_pending(t: &TestApp, insurer: &str) -> String {
    p::table
        .inner_join(h::table)
        .filter(p::tenant_id.eq("demo-a"))
        .filter(p::proposal_id.ne_all(DEMO_PROPOSALS))
        .filter(h::insurer.eq(insurer))
        .filter(h::from_status.eq(Status::UnderAnalysis))
        .filter(h::to_status.eq(Status::Pending))
        .select(p::proposal_id)
        .order(h::id)
        .first(&mut *t.conn().await)
        .await
        .unwrap()
}

/// The story's part that one transition to pending left: the history row, its events by
/// kind, its email's fields, the receipt that brought it.
fn first_transition(story: &Value) -> (Value, BTreeMap<String, Value>, Value, Value) {
    let history = &story["history"][0];
    let receipt_id = &history["receipt_id"];
    let events = story["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| &e["receipt_id"] == receipt_id)
        .map(|e| (e["kind"].as_str().unwrap().to_owned(), shape(e)))
        .collect();
    let email = story["emails"][0].clone();
    let receipt = story["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| &r["id"] == receipt_id)
        .unwrap()
        .clone();
    (shape(history), events, keys(&email), shape(&receipt))
}

#[actix_web::test]
async fn seeded_receipts_and_stories_have_the_shapes_a_live_callback_leaves() {
    let t = TestApp::start().await;
    seed_at(&t, t0(), SeedOptions::default()).await;
    let admin = t.admin("demo-a");
    for (insurer, example_proposal) in [
        ("porto", "POR-2026-000124"),
        ("tokio", "548813"),
        ("too", "99121"),
    ] {
        // A live callback through the route, with the headers an insurer sends.
        let res = t
            .client
            .post(format!("{}/callback/demo-a/{insurer}", t.base))
            .bearer_auth(t.bearer("demo-a", insurer))
            .header("content-type", "application/json")
            .header("user-agent", format!("{insurer}-callbacks/2.1"))
            .header("x-request-id", format!("live-{insurer}"))
            .body(example(insurer, "pending"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{insurer}");
        let live_receipt: i64 = r::table
            .filter(r::proposal_id.eq(example_proposal))
            .select(r::id)
            .first(&mut *t.conn().await)
            .await
            .unwrap();

        let seeded = seeded_pending(&t, insurer).await;
        let seeded_receipt: i64 = h::table
            .inner_join(p::table)
            .filter(p::tenant_id.eq("demo-a"))
            .filter(p::proposal_id.eq(&seeded))
            .order(h::id)
            .select(h::receipt_id)
            .first::<Option<i64>>(&mut *t.conn().await)
            .await
            .unwrap()
            .unwrap();

        // The stored rows: the same columns, null in the same places, the same kept headers.
        let (live_row, seeded_row) = (
            receipt_row(&t, live_receipt).await,
            receipt_row(&t, seeded_receipt).await,
        );
        assert_eq!(
            shape(&seeded_row),
            shape(&live_row),
            "{insurer}: {seeded_row}\n{live_row}"
        );
        assert_eq!(seeded_row["status"], "processed");
        assert_eq!(seeded_row["headers"]["user-agent"], SEED_USER_AGENT);

        // The bodies: the insurer's own shape (the example payloads').
        let body_of = |row: &Value| -> Value {
            let hex = row["body"].as_str().unwrap().trim_start_matches("\\x");
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            serde_json::from_slice(&bytes).unwrap()
        };
        assert_eq!(
            keys(&body_of(&seeded_row)),
            keys(&body_of(&live_row)),
            "{insurer}"
        );

        // The admin story: the same fields at every depth; the transition's history row,
        // events and receipt of the same types; the email's fields the same (a seeded email
        // is sent, the live one queued).
        let (s, live) = t
            .get(
                &format!("/admin/proposals/{example_proposal}"),
                Some(&admin),
            )
            .await;
        assert_eq!(s, 200, "{live}");
        let (s, story) = t
            .get(&format!("/admin/proposals/{seeded}"), Some(&admin))
            .await;
        assert_eq!(s, 200, "{story}");
        assert_eq!(
            keys(&story).as_object().unwrap().keys().collect::<Vec<_>>(),
            keys(&live).as_object().unwrap().keys().collect::<Vec<_>>()
        );
        let (live_history, live_events, live_email, live_receipt) = first_transition(&live);
        let (history, events, email, receipt) = first_transition(&story);
        assert_eq!(history, live_history, "{insurer}");
        assert_eq!(events, live_events, "{insurer}");
        assert_eq!(email, live_email, "{insurer}");
        assert_eq!(receipt, live_receipt, "{insurer}");
        assert_eq!(story["emails"][0]["status"], "sent");
        assert_eq!(live["emails"][0]["status"], "queued");
    }
}

#[actix_web::test]
async fn a_second_seed_adds_nothing_and_rotating_tokens_changes_only_tokens() {
    let t = TestApp::start().await;
    let first = seed_at(&t, t0(), SeedOptions::default()).await;
    let before = counts(&t).await;
    for later in [t0(), t0() + Duration::hours(11)] {
        let again = seed_at(&t, later, SeedOptions::default()).await;
        assert_eq!(again.history.action, HistoryAction::Current);
        assert_eq!(again.history.callbacks_added, 0);
        assert!(again.integrations.iter().all(|i| i.token.is_none()));
        assert!(
            again.history.summary().contains("current"),
            "{}",
            again.history.summary()
        );
        assert_eq!(counts(&t).await, before);
    }
    assert_eq!(first.history.newest_after, {
        let again = seed_at(&t, t0(), SeedOptions::default()).await;
        again.history.newest_before
    });

    let rotated = seed_at(
        &t,
        t0(),
        SeedOptions {
            rotate_tokens: true,
            ..SeedOptions::default()
        },
    )
    .await;
    assert!(rotated.integrations.iter().all(|i| i.token.is_some()));
    let mut after = counts(&t).await;
    assert_eq!(after.remove("tokens"), Some(before["tokens"] + 6));
    let mut expected = before.clone();
    expected.remove("tokens");
    assert_eq!(after, expected);
}

#[actix_web::test]
async fn a_demo_seeded_long_ago_is_brought_back_to_life_at_now() {
    let t = TestApp::start().await;
    let long_ago = t0() - Duration::days(10);
    let first = seed_at(&t, long_ago, SeedOptions::default()).await;
    assert_eq!(first.history.action, HistoryAction::Created);
    let old = seeded_receipts(&t).await;
    assert!(old.iter().all(|(_, at, _)| *at <= long_ago));

    let revived = seed_at(&t, t0(), SeedOptions::default()).await;
    let history = &revived.history;
    assert_eq!(history.action, HistoryAction::Revived, "{history:?}");
    assert_eq!(history.newest_before, first.history.newest_after);
    assert_eq!(history.from, first.history.newest_after);
    let summary = history.summary();
    assert!(
        summary.starts_with("demo history revived: its newest callback was 10 days 0 hours old"),
        "{summary}"
    );
    assert!(
        summary.contains("Nothing recorded before was changed"),
        "{summary}"
    );

    // What was there is kept as it was; the days since are added, ending now.
    let all = seeded_receipts(&t).await;
    assert_eq!(&all[..old.len()], &old[..]);
    let added = &all[old.len()..];
    assert_eq!(added.len(), history.callbacks_added);
    assert!(added.iter().all(|(_, at, _)| *at > long_ago && *at <= t0()));
    let newest = added.iter().map(|(_, at, _)| *at).max().unwrap();
    assert!(newest > t0() - Duration::hours(1), "{newest}");
    for day in 0..10 {
        assert!(on_day(&all, t0(), day) > 0, "receipts on day -{day}");
    }
    assert!(history.proposals_added >= 2 * 20, "{history:?}");

    // Revived once: the next seed finds it current.
    let counted = counts(&t).await;
    let again = seed_at(&t, t0() + Duration::minutes(30), SeedOptions::default()).await;
    assert_eq!(again.history.action, HistoryAction::Current);
    assert_eq!(counts(&t).await, counted);
}

/// The binary: the report on stdout (JSON), what it did to the history on stderr.
#[actix_web::test]
async fn the_seed_command_reports_on_stdout_and_says_what_it_did_on_stderr() {
    let t = TestApp::start().await;
    let seed = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
            .arg("seed")
            .env("DATABASE_URL", t.db.url())
            .output()
            .unwrap()
    };
    let first = seed();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(report["history"]["action"], "created", "{report}");
    assert!(stderr.contains("demo history created:"), "{stderr}");
    assert!(stderr.contains("none was handed to a relay"), "{stderr}");

    let second = seed();
    let stderr = String::from_utf8_lossy(&second.stderr);
    let report: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(report["history"]["action"], "current", "{report}");
    assert_eq!(report["history"]["callbacks_added"], 0);
    assert!(stderr.contains("demo history current:"), "{stderr}");

    let bare = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .args(["seed", "--no-history"])
        .env("DATABASE_URL", t.db.url())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&bare.stdout).unwrap();
    assert_eq!(report["history"]["action"], "skipped", "{report}");
}
