//! Retention of personal data in raw bodies (docs/proposal-callback.md, "Retention of raw
//! bodies"): past its tenant's retention (90 days unless set), a processed receipt's body is
//! erased and everything else about it stays; its replay is a clear 409 `body_erased` that
//! changes nothing; receipts not applied yet keep their body; `prune` works as before.

use chrono::{DateTime, Utc};
use common::Clock;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::flow::retention::{self, Erased};
use proposal_callback::schema::proposal::{
    applied_callbacks as a, callback_receipts as r, integration_history as h,
};
use serde_json::{Value, json};

use crate::support::{TestApp, edited, example};

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2029-08-09T10:11:12.345678Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// The receipt `id` the last callback of `tenant` stored.
async fn last_receipt(t: &TestApp, tenant: &str) -> i64 {
    r::table
        .filter(r::tenant_id.eq(tenant))
        .order(r::id.desc())
        .select(r::id)
        .first(&mut t.conn().await)
        .await
        .unwrap()
}

/// Every column of every receipt but the body and its erasure, as JSON, by id.
async fn metadata(t: &TestApp) -> Vec<Value> {
    diesel::sql_query(
        "SELECT to_jsonb(r) - 'body' - 'body_erased_at' AS row \
         FROM proposal.callback_receipts r ORDER BY id",
    )
    .load::<Row>(&mut t.conn().await)
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.row)
    .collect()
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Jsonb)]
    row: Value,
}

/// (body, body_erased_at) of receipt `id`.
async fn body(t: &TestApp, id: i64) -> (Vec<u8>, Option<DateTime<Utc>>) {
    r::table
        .find(id)
        .select((r::body, r::body_erased_at))
        .first(&mut t.conn().await)
        .await
        .unwrap()
}

async fn received_days_ago(t: &TestApp, id: i64, days: i64) {
    diesel::update(r::table.find(id))
        .set(r::received_at.eq(t0() - chrono::Duration::days(days)))
        .execute(&mut t.conn().await)
        .await
        .unwrap();
}

#[actix_web::test]
async fn bodies_past_the_retention_are_erased_and_their_receipts_replay_as_a_clear_409() {
    let clock = Clock::manual(t0());
    let t = {
        let clock = clock.clone();
        TestApp::start_with_state(move |state| state.with_clock(clock)).await
    };
    let admin = t.admin("demo-a");

    // demo-a: a processed receipt and a failed one, 91 days old; a deferred one (its
    // integration paused) as old; a processed one 40 days old; one of today.
    let approved = example("porto", "approved");
    assert_eq!(t.callback("demo-a", "porto", approved.clone()).await.0, 200);
    let processed = last_receipt(&t, "demo-a").await;
    let missing = edited("porto", "approved", |v| {
        v["idProposta"] = json!("NOVA-9");
        v["protocolo"] = json!("nova-9");
    });
    assert_eq!(t.callback("demo-a", "porto", missing.clone()).await.0, 404);
    let failed = last_receipt(&t, "demo-a").await;
    let tokio = t.integration_id("demo-a", "tokio");
    let (s, _) = t
        .post(
            &format!("/admin/integrations/{tokio}/pause"),
            Some(&admin),
            "application/json",
            vec![],
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        t.callback("demo-a", "tokio", example("tokio", "approved"))
            .await
            .0,
        202
    );
    let deferred = last_receipt(&t, "demo-a").await;
    assert_eq!(
        t.callback("demo-a", "too", example("too", "pending"))
            .await
            .0,
        200
    );
    let forty_days = last_receipt(&t, "demo-a").await;
    assert_eq!(
        t.callback("demo-a", "too", example("too", "approved"))
            .await
            .0,
        200
    );
    let today = last_receipt(&t, "demo-a").await;
    for id in [processed, failed, deferred] {
        received_days_ago(&t, id, 91).await;
    }
    received_days_ago(&t, forty_days, 40).await;

    // demo-b keeps bodies 30 days (set with the command operators use): its 40-day-old one
    // goes, where demo-a's of the same age stays.
    diesel::sql_query(
        "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email) \
         VALUES ('demo-b', 'B-1', 'under_analysis', 'b.1@demo-b.example.com')",
    )
    .execute(&mut t.conn().await)
    .await
    .unwrap();
    let b_body = edited("porto", "approved", |v| v["idProposta"] = json!("B-1"));
    assert_eq!(t.callback("demo-b", "porto", b_body).await.0, 200);
    let other_tenant = last_receipt(&t, "demo-b").await;
    received_days_ago(&t, other_tenant, 40).await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .args(["retention", "--tenant", "demo-b", "--days", "30"])
        .env("DATABASE_URL", t.db.url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        json!({"tenant": "demo-b", "body_retention_days": 30})
    );

    let before = metadata(&t).await;
    let kept_bodies: Vec<_> = {
        let mut v = Vec::new();
        for id in [deferred, forty_days, today] {
            v.push(body(&t, id).await.0);
        }
        v
    };
    let erased = retention::erase_expired_bodies(&mut *t.conn().await, &clock)
        .await
        .unwrap();
    assert_eq!(
        erased,
        Erased {
            erased_bodies: 3,
            per_tenant: [("demo-a".to_owned(), 2), ("demo-b".to_owned(), 1)].into(),
        }
    );
    for id in [processed, failed, other_tenant] {
        assert_eq!(body(&t, id).await, (Vec::new(), Some(t0())), "receipt {id}");
    }
    for (id, kept) in [deferred, forty_days, today].into_iter().zip(kept_bodies) {
        assert_eq!(body(&t, id).await, (kept, None), "receipt {id}");
    }
    // Everything else stays: outcome, answer, proposal, headers, SHA-256, times, attempts.
    assert_eq!(metadata(&t).await, before);
    let mut conn = t.conn().await;
    let history: Vec<Option<i64>> = h::table
        .select(h::receipt_id)
        .order(h::id)
        .load(&mut conn)
        .await
        .unwrap();
    assert!(history.contains(&Some(processed)), "{history:?}");
    let keys: i64 = a::table
        .filter(a::receipt_id.eq(processed))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(keys, 1);
    drop(conn);

    // What an operator reads of it.
    let (_, page) = t
        .get("/admin/receipts?proposal_id=POR-2026-000123", Some(&admin))
        .await;
    let item = &page["items"][0];
    assert_eq!(
        (
            &item["id"],
            &item["status"],
            &item["outcome"],
            &item["body"],
            &item["body_erased_at"]
        ),
        (
            &json!(processed),
            &json!("processed"),
            &json!("processed"),
            &json!(""),
            &json!(iso(t0()))
        )
    );

    // Its replay: 409 saying why, and nothing changes (not even its attempts).
    let replay = |id: i64| format!("/admin/receipts/{id}/replay");
    let (s, b) = t
        .post(&replay(processed), Some(&admin), "application/json", vec![])
        .await;
    assert_eq!((s, b["code"].as_str()), (409, Some("body_erased")), "{b}");
    assert_eq!(
        b["detail"],
        format!(
            "receipt {processed} cannot be processed again: its raw body was erased at {} \
             (tenant demo-a keeps the raw bodies of its callbacks 90 days); its outcome, \
             references and metadata are kept",
            t0().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )
    );
    let (s, b) = t
        .post(&replay(failed), Some(&admin), "application/json", vec![])
        .await;
    assert_eq!((s, b["code"].as_str()), (409, Some("body_erased")), "{b}");
    let (s, b) = t
        .post(
            "/admin/receipts/replay",
            Some(&admin),
            "application/json",
            br#"{"status": "failed"}"#.to_vec(),
        )
        .await;
    assert_eq!(
        (s, b),
        (
            200,
            json!({"dry_run": false, "replayed": 1, "outcomes": {"body_erased": 1},
                   "next_after_id": null,
                   "items": [{"receipt_id": failed, "insurer": "porto", "proposal_id": "NOVA-9",
                              "status_before": null, "status_after": null,
                              "outcome": "body_erased", "email": false}]})
        )
    );
    assert_eq!(
        metadata(&t).await,
        before,
        "a refused replay changes nothing"
    );

    // The console says so where the body was.
    let session = sign_in(&t, &admin).await;
    let (s, html) = page_of(
        &t,
        &format!("/admin/integracao/callbacks/{processed}"),
        &session,
    )
    .await;
    assert_eq!(s, 200);
    let shown =
        proposal_callback::console::text::when(t0(), proposal_callback::seed::DEMO_TIME_ZONE);
    assert!(
        html.contains(&format!(
            "Corpo removido em <time datetime=\"{}\">{}</time>",
            shown.iso, shown.text
        )),
        "{html}"
    );
    assert!(!html.contains("idProposta"), "no trace of the body");
    let (_, list) = page_of(&t, "/admin/integracao/callbacks?resultado=failed", &session).await;
    assert!(list.contains("corpo removido em"), "{list}");
    assert!(
        !list.contains(&format!("Reprocessar o callback nº {failed}")),
        "{list}"
    );

    // A second erasure finds nothing; prune deletes old receipts as before (not the
    // deferred one), and their history outlives them.
    assert_eq!(
        retention::erase_expired_bodies(&mut *t.conn().await, &clock)
            .await
            .unwrap(),
        Erased::default()
    );
    let deleted = proposal_callback::store::receipts::prune(
        &mut *t.conn().await,
        t0() - chrono::Duration::days(60),
        1000,
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(deleted, 2);
    assert!(body(&t, deferred).await.1.is_none());
    let history: Vec<Option<i64>> = h::table
        .select(h::receipt_id)
        .load(&mut t.conn().await)
        .await
        .unwrap();
    assert!(!history.contains(&Some(processed)));
    assert_eq!(
        t.proposal("demo-a", "POR-2026-000123").await.status,
        "approved"
    );
}

/// A retention out of 1..=3650 days, or for no such tenant, is refused by the command.
#[actix_web::test]
async fn the_retention_command_refuses_what_it_cannot_keep() {
    let t = TestApp::start().await;
    for (args, says) in [
        (vec!["--tenant", "demo-a", "--days", "0"], "--days"),
        (vec!["--tenant", "demo-a", "--days", "3651"], "--days"),
        (
            vec!["--tenant", "nobody", "--days", "30"],
            "no tenant \"nobody\"",
        ),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
            .arg("retention")
            .args(&args)
            .env("DATABASE_URL", t.db.url())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .args(["retention", "--tenant", "demo-a"])
        .env("DATABASE_URL", t.db.url())
        .output()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        json!({"tenant": "demo-a", "body_retention_days": retention::DEFAULT_BODY_RETENTION_DAYS})
    );
}

/// Signs in to the console with `token`: the session cookie (`name=value`).
async fn sign_in(t: &TestApp, token: &str) -> String {
    let res = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{}/admin/integracao/entrar", t.base))
        .header("sec-fetch-site", "same-origin")
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    res.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|c| c.starts_with("console_session=") && !c.contains("Max-Age=0"))
        .map(|c| c.split(';').next().unwrap().to_owned())
        .expect("a session")
}

async fn page_of(t: &TestApp, path: &str, cookie: &str) -> (u16, String) {
    let res = reqwest::Client::new()
        .get(format!("{}{path}", t.base))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}
