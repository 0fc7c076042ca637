//! The service asks its clock (`AppState::clock`) for "now": a callback's receipt, the
//! proposal's change, its history, events and email carry the clock's time, and the sweeper's
//! and the email worker's "due" are the clock's. A manual clock here, never the wall clock.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use common::Clock;
use common::settings::FromSource;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::flow::email_worker::Mailer;
use proposal_callback::flow::sweep;
use proposal_callback::schema::proposal::{
    applied_callbacks as a, callback_receipts as r, email_outbox as o, integration_history as h,
    proposal_events as e, proposals as p,
};
use proposal_callback::settings::EmailSettings;
use sha2::{Digest, Sha256};

use crate::support::{TestApp, example};
use common::test_support::SmtpSink;

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2029-02-03T04:05:06.789012Z")
        .unwrap()
        .with_timezone(&Utc)
}

#[actix_web::test]
async fn a_callback_is_timestamped_by_the_services_clock() {
    let clock = Clock::manual(t0());
    let t = {
        let clock = clock.clone();
        TestApp::start_with_state(move |state| state.with_clock(clock)).await
    };
    let (s, b) = t
        .callback("demo-a", "porto", example("porto", "approved"))
        .await;
    assert_eq!(s, 200, "{b}");
    let mut conn = t.conn().await;
    let (received, processed): (DateTime<Utc>, Option<DateTime<Utc>>) = r::table
        .select((r::received_at, r::processed_at))
        .first(&mut conn)
        .await
        .unwrap();
    assert_eq!((received, processed), (t0(), Some(t0())));
    let proposal: (DateTime<Utc>, i64) = p::table
        .filter(p::proposal_id.eq("POR-2026-000123"))
        .select((p::updated_at, p::id))
        .first(&mut conn)
        .await
        .unwrap();
    assert_eq!(proposal.0, t0());
    let history: Vec<DateTime<Utc>> = h::table
        .select(h::created_at)
        .load(&mut conn)
        .await
        .unwrap();
    let events: Vec<DateTime<Utc>> = e::table
        .select(e::created_at)
        .load(&mut conn)
        .await
        .unwrap();
    let emails: Vec<(DateTime<Utc>, DateTime<Utc>)> = o::table
        .select((o::created_at, o::next_attempt_at))
        .load(&mut conn)
        .await
        .unwrap();
    let keys: Vec<DateTime<Utc>> = a::table
        .select(a::created_at)
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(history, [t0()]);
    assert_eq!(events, [t0(); 4]);
    assert_eq!(emails, [(t0(), t0())]);
    assert_eq!(keys, [t0()]);

    // A replay five minutes later is processed then.
    clock.advance(Duration::minutes(5));
    let id: i64 = r::table.select(r::id).first(&mut conn).await.unwrap();
    let (s, b) = t
        .post(
            &format!("/admin/receipts/{id}/replay"),
            Some(&t.admin("demo-a")),
            "application/json",
            Vec::new(),
        )
        .await;
    assert_eq!(
        (s, &b["result"]),
        (200, &serde_json::json!("duplicate")),
        "{b}"
    );
    let processed: Option<DateTime<Utc>> = r::table
        .select(r::processed_at)
        .first(&mut conn)
        .await
        .unwrap();
    assert_eq!(processed, Some(t0() + Duration::minutes(5)));

    // The email is due at the clock's t0: a worker whose clock stands a second before sends
    // nothing; at t0 it sends it and records it sent then.
    let sink = SmtpSink::start().await;
    let mut env = HashMap::new();
    env.insert("SMTP_URL".to_owned(), sink.url());
    let config = EmailSettings::from_source(&env).unwrap().config().unwrap();
    let worker_clock = Clock::manual(t0() - Duration::seconds(1));
    let mailer = Mailer::new(&config)
        .unwrap()
        .unwrap()
        .with_clock(worker_clock.clone());
    assert_eq!(mailer.run_once(&t.db.pool()).await.unwrap(), 0);
    worker_clock.set(t0());
    assert_eq!(mailer.run_once(&t.db.pool()).await.unwrap(), 1);
    let sent: Option<DateTime<Utc>> = o::table.select(o::sent_at).first(&mut conn).await.unwrap();
    assert_eq!(sent, Some(t0()));
}

#[actix_web::test]
async fn the_sweeper_takes_what_its_clock_says_is_older_than_the_grace() {
    let t = TestApp::start().await;
    let body = example("too", "pending");
    let id: i64 = diesel::insert_into(r::table)
        .values((
            r::tenant_id.eq("demo-a"),
            r::insurer.eq("too"),
            r::integration_id.eq(Some(t.integration_id("demo-a", "too"))),
            r::body_sha256.eq(Sha256::digest(&body).to_vec()),
            r::body.eq(body),
            r::received_at.eq(t0()),
        ))
        .returning(r::id)
        .get_result(&mut *t.conn().await)
        .await
        .unwrap();
    let grace = std::time::Duration::from_secs(60);
    let clock = Clock::manual(t0() + Duration::seconds(59));
    let swept = sweep::sweep_once(&t.db.pool(), &clock, grace)
        .await
        .unwrap();
    assert_eq!(
        swept.settled, 0,
        "59 s after it arrived: a live request may still hold it"
    );
    clock.advance(Duration::seconds(2));
    let swept = sweep::sweep_once(&t.db.pool(), &clock, grace)
        .await
        .unwrap();
    assert_eq!(swept.settled, 1);
    let (status, processed): (String, Option<DateTime<Utc>>) = r::table
        .find(id)
        .select((r::status, r::processed_at))
        .first(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(
        (status.as_str(), processed),
        ("processed", Some(clock.now()))
    );
}
