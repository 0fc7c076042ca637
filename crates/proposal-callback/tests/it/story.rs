//! What an operator sees without psql: a proposal's story, receipts that name their proposal,
//! filters, the emails and their delivery, bulk replays.

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use common::settings::FromSource;
use common::test_support::SmtpSink;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::flow::email_worker::Mailer;
use proposal_callback::schema::proposal::{
    callback_receipts as r, email_outbox as o, integration_history as h, proposal_events as e,
    proposals as p,
};
use proposal_callback::settings::EmailSettings;
use serde_json::{Value, json};

use crate::support::{TestApp, edited, example, strings, subject};

fn mailer(sink: &SmtpSink) -> Mailer {
    let env: std::collections::HashMap<String, String> = [
        ("SMTP_URL", sink.url()),
        ("EMAIL_RETRY_BASE", "10m".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    Mailer::new(&EmailSettings::from_source(&env).unwrap().config().unwrap())
        .unwrap()
        .unwrap()
}

fn time(t: DateTime<Utc>) -> Value {
    serde_json::to_value(t).unwrap()
}

fn too_approved_99121() -> Vec<u8> {
    edited("too", "approved", |v| {
        v["numeroProposta"] = json!(99121);
        v["emitidoEm"] = json!("21/11/2026 10:00:00");
    })
}

/// The story the route tells is the rows the database holds, field by field, oldest first.
#[actix_web::test]
async fn a_proposals_story_is_what_the_database_holds() {
    let t = TestApp::start().await;
    let sink = SmtpSink::start().await;
    let admin = t.admin("demo-a");
    // Pending (its email sent), the same again (duplicate), then approved (its email refused).
    assert_eq!(
        t.callback("demo-a", "too", example("too", "pending"))
            .await
            .1["result"],
        "processed"
    );
    assert_eq!(mailer(&sink).run_once(&t.db.pool()).await.unwrap(), 1);
    assert_eq!(
        t.callback("demo-a", "too", example("too", "pending"))
            .await
            .1["result"],
        "duplicate"
    );
    assert_eq!(
        t.callback("demo-a", "too", too_approved_99121()).await.1["result"],
        "processed"
    );
    sink.down.store(true, Ordering::SeqCst);
    assert_eq!(mailer(&sink).run_once(&t.db.pool()).await.unwrap(), 0);

    let (s, story) = t.get("/admin/proposals/99121", Some(&admin)).await;
    assert_eq!(s, 200, "{story}");

    // What psql shows, as JSON.
    let mut conn = t.conn().await;
    let (pk, created, updated, last_event, email): (
        i64,
        DateTime<Utc>,
        DateTime<Utc>,
        Option<DateTime<Utc>>,
        String,
    ) = p::table
        .filter(p::tenant_id.eq("demo-a").and(p::proposal_id.eq("99121")))
        .select((
            p::id,
            p::created_at,
            p::updated_at,
            p::last_event_at,
            p::contact_email,
        ))
        .first(&mut conn)
        .await
        .unwrap();
    let history: Vec<Value> = h::table
        .filter(h::proposal_id.eq(pk))
        .order(h::id)
        .select((
            h::id,
            h::from_status,
            h::to_status,
            h::insurer,
            h::insurer_event_id,
            h::insurer_note,
            h::insurer_time,
            h::receipt_id,
            h::created_at,
        ))
        .load::<(
            i64,
            String,
            String,
            String,
            Option<String>,
            Option<String>,
            Option<DateTime<Utc>>,
            Option<i64>,
            DateTime<Utc>,
        )>(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .map(|(id, from, to, insurer, event, note, at, receipt, rec)| {
            json!({"id": id, "from": from, "to": to, "insurer": insurer, "insurer_event_id": event,
                   "insurer_note": note, "insurer_time": at.map(time), "receipt_id": receipt,
                   "recorded_at": time(rec)})
        })
        .collect();
    let events: Vec<Value> = e::table
        .filter(e::proposal_id.eq(pk))
        .order(e::id)
        .select((e::id, e::kind, e::data, e::receipt_id, e::created_at))
        .load::<(i64, String, Value, Option<i64>, DateTime<Utc>)>(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .map(|(id, kind, data, receipt, at)| {
            json!({"id": id, "kind": kind, "data": data, "receipt_id": receipt, "recorded_at": time(at)})
        })
        .collect();
    let emails: Vec<Value> = o::table
        .filter(o::proposal_id.eq(pk))
        .order(o::id)
        .select((
            o::id,
            o::history_id,
            o::recipient,
            o::subject,
            o::status,
            o::attempts,
            o::last_error,
            o::next_attempt_at,
            o::created_at,
            o::sent_at,
            o::failed_at,
            o::message_id,
        ))
        .load::<(
            i64,
            Option<i64>,
            String,
            String,
            String,
            i32,
            Option<String>,
            DateTime<Utc>,
            DateTime<Utc>,
            Option<DateTime<Utc>>,
            Option<DateTime<Utc>>,
            Option<String>,
        )>(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .map(
            |(id, hist, to, subj, status, attempts, error, next, queued, sent, failed, mid)| {
                let delivery = match (status.as_str(), &error) {
                    ("sent", _) => "sent",
                    ("failed", _) => "failed",
                    (_, Some(_)) => "retrying",
                    _ => "queued",
                };
                json!({"id": id, "proposal_id": "99121", "history_id": hist, "recipient": to,
                   "subject": subj, "status": delivery, "attempts": attempts, "last_error": error,
                   "next_attempt_at": matches!(delivery, "queued" | "retrying").then(|| time(next)),
                   "queued_at": time(queued), "sent_at": sent.map(time),
                   "failed_at": failed.map(time), "message_id": mid})
            },
        )
        .collect();
    let receipts: Vec<Value> = r::table
        .filter(r::tenant_id.eq("demo-a").and(r::proposal_id.eq("99121")))
        .order(r::id)
        .select((
            r::id,
            r::received_at,
            r::status,
            r::http_status,
            r::event_at,
            r::attempts,
            r::processed_at,
            r::body,
            r::headers,
        ))
        .load::<(
            i64,
            DateTime<Utc>,
            String,
            Option<i16>,
            Option<DateTime<Utc>>,
            i32,
            Option<DateTime<Utc>>,
            Vec<u8>,
            Value,
        )>(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .map(
            |(id, at, status, http, event, attempts, done, body, headers)| {
                json!({"id": id, "insurer": "too", "received_at": time(at), "status": status,
                   "outcome": status, "http_status": http, "error_code": null,
                   "error_detail": null, "proposal_id": "99121", "event_at": event.map(time),
                   "attempts": attempts, "processed_at": done.map(time), "headers": headers,
                   "body": String::from_utf8(body).unwrap(), "body_erased_at": null})
            },
        )
        .collect();
    assert_eq!(
        story,
        json!({
            "proposal_id": "99121",
            "status": "approved",
            "in_queue": false,
            "contact_email": email,
            "created_at": time(created),
            "updated_at": time(updated),
            "last_event_at": last_event.map(time),
            "history": history,
            "events": events,
            "emails": emails,
            "receipts": receipts,
        })
    );
    // And what that says, in words.
    let from_to: Vec<_> = story["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            format!(
                "{}->{}",
                h["from"].as_str().unwrap(),
                h["to"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        from_to,
        strings(&["under_analysis->pending", "pending->approved"])
    );
    let kinds: Vec<_> = story["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "callback_received",
            "status_changed",
            "email_queued",
            "callback_received",
            "status_changed",
            "left_queue",
            "email_queued"
        ]
    );
    let mails = story["emails"].as_array().unwrap();
    assert_eq!(
        (
            &mails[0]["subject"],
            &mails[0]["status"],
            &mails[0]["attempts"]
        ),
        (
            &json!(subject("99121", "pending")),
            &json!("sent"),
            &json!(1)
        )
    );
    assert_eq!(
        (
            &mails[1]["subject"],
            &mails[1]["status"],
            &mails[1]["attempts"]
        ),
        (
            &json!(subject("99121", "approved")),
            &json!("retrying"),
            &json!(1)
        )
    );
    assert!(mails[1]["last_error"].as_str().unwrap().contains("421"));
    let outcomes: Vec<_> = story["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["processed", "duplicate", "processed"]);

    // Another tenant has no such proposal.
    let (s, b) = t
        .get("/admin/proposals/99121", Some(&t.admin("demo-b")))
        .await;
    assert_eq!((s, b["code"].as_str()), (404, Some("proposal_not_found")));
    let (s, b) = t.get("/admin/proposals/nope", Some(&admin)).await;
    assert_eq!((s, b["code"].as_str()), (404, Some("proposal_not_found")));
    let (s, _) = t.get("/admin/proposals/99121", None).await;
    assert_eq!(s, 401);

    // The tenant's emails by delivery state.
    let (s, retrying) = t.get("/admin/emails?status=retrying", Some(&admin)).await;
    assert_eq!(s, 200);
    assert_eq!(retrying["items"], json!([emails[1]]));
    assert_eq!(retrying["next_before_id"], Value::Null);
    let (_, failed) = t.get("/admin/emails?status=failed", Some(&admin)).await;
    assert_eq!(
        failed["items"],
        json!([]),
        "a relay that is down fails no email for good"
    );
    let (_, sent) = t.get("/admin/emails?status=sent", Some(&admin)).await;
    assert_eq!(sent["items"], json!([emails[0]]));
    let (_, queued) = t.get("/admin/emails?status=queued", Some(&admin)).await;
    assert_eq!(queued["items"], json!([]));
    let (_, all) = t
        .get("/admin/emails?proposal_id=99121&limit=1", Some(&admin))
        .await;
    assert_eq!(all["items"], json!([emails[1]]));
    assert_eq!(all["next_before_id"], emails[1]["id"]);
    let (_, other) = t
        .get("/admin/emails?status=failed", Some(&t.admin("demo-b")))
        .await;
    assert_eq!(other["items"], json!([]));
    let (s, b) = t.get("/admin/emails?status=lost", Some(&admin)).await;
    assert_eq!((s, b["errors"][0]["field"].as_str()), (400, Some("status")));
}

/// Every failed receipt names the proposal it concerned, with its code and detail, and the
/// list filters by outcome, code, insurer, proposal and time.
#[actix_web::test]
async fn failed_receipts_name_their_proposal_and_filter() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    // Not found, an unknown outcome code, a forbidden transition, and one applied.
    let unknown = edited("porto", "approved", |v| {
        v["idProposta"] = json!("POR-NEW-1")
    });
    assert_eq!(t.callback("demo-a", "porto", unknown).await.0, 404);
    let bad_code = edited("tokio", "approved", |v| {
        v["data"]["result"]["code"] = json!(99)
    });
    assert_eq!(t.callback("demo-a", "tokio", bad_code).await.0, 422);
    assert_eq!(
        t.callback("demo-a", "too", too_approved_99121()).await.0,
        200
    );
    let later_pending = edited("too", "pending", |v| {
        v["emitidoEm"] = json!("22/11/2026 10:00:00")
    });
    assert_eq!(t.callback("demo-a", "too", later_pending).await.0, 409);

    let (s, page) = t.get("/admin/receipts?status=failed", Some(&admin)).await;
    assert_eq!(s, 200, "{page}");
    let failed: Vec<_> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["insurer"].as_str().unwrap().to_owned(),
                r["proposal_id"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
                r["http_status"].as_i64().unwrap(),
                r["error_detail"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        vec![
            (
                "too".into(),
                "99121".into(),
                "invalid_transition".into(),
                409,
                "a callback cannot move a proposal from approved to pending".into()
            ),
            (
                "tokio".into(),
                "548812".into(),
                "invalid_payload".into(),
                422,
                "field `data.result.code`: unknown outcome code 99".into()
            ),
            (
                "porto".into(),
                "POR-NEW-1".into(),
                "proposal_not_found".into(),
                404,
                "no proposal \"POR-NEW-1\" for this tenant".into()
            ),
        ]
    );

    let outcomes = |page: &Value| -> Vec<String> {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["outcome"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, p) = t
        .get("/admin/receipts?code=invalid_transition", Some(&admin))
        .await;
    assert_eq!(outcomes(&p), strings(&["invalid_transition"]));
    let (_, p) = t
        .get("/admin/receipts?insurer=tokio&status=failed", Some(&admin))
        .await;
    assert_eq!(outcomes(&p), strings(&["invalid_payload"]));
    let (_, p) = t
        .get("/admin/receipts?proposal_id=99121", Some(&admin))
        .await;
    assert_eq!(outcomes(&p), strings(&["invalid_transition", "processed"]));
    let (_, p) = t
        .get("/admin/receipts?since=2100-01-01T00:00:00Z", Some(&admin))
        .await;
    assert_eq!(p["items"], json!([]));
    let (s, b) = t.get("/admin/receipts?insurer=allianz", Some(&admin)).await;
    assert_eq!(
        (s, b["errors"][0]["field"].as_str()),
        (400, Some("insurer"))
    );
    let (s, b) = t.get("/admin/receipts?since=yesterday", Some(&admin)).await;
    assert_eq!((s, b["errors"][0]["field"].as_str()), (400, Some("since")));
}

async fn replay_all(t: &TestApp, admin: &str, body: Value) -> (u16, Value) {
    t.post(
        "/admin/receipts/replay",
        Some(admin),
        "application/json",
        serde_json::to_vec(&body).unwrap(),
    )
    .await
}

/// A bulk replay takes what matches, oldest first, applies what can be applied once, and says
/// how each ended; a replayed duplicate stays a duplicate; another tenant's receipts are never
/// touched.
#[actix_web::test]
async fn a_bulk_replay_repairs_what_matches_and_counts_the_outcomes() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    let new_1 = edited("porto", "approved", |v| {
        v["idProposta"] = json!("POR-NEW-1")
    });
    let new_2 = edited("porto", "refused", |v| v["idProposta"] = json!("POR-NEW-2"));
    assert_eq!(t.callback("demo-a", "porto", new_1).await.0, 404);
    assert_eq!(t.callback("demo-a", "porto", new_2).await.0, 404);
    let bad_code = edited("tokio", "approved", |v| {
        v["data"]["result"]["code"] = json!(99)
    });
    assert_eq!(t.callback("demo-a", "tokio", bad_code).await.0, 422);
    assert_eq!(
        t.callback("demo-a", "porto", example("porto", "pending"))
            .await
            .0,
        200
    );
    // demo-b has a failed receipt of its own.
    let b_receipt = edited("porto", "approved", |v| {
        v["idProposta"] = json!("POR-NEW-1")
    });
    assert_eq!(t.callback("demo-b", "porto", b_receipt).await.0, 404);

    // The proposal the first one names now exists.
    proposal_callback::store::proposals::insert_if_absent(
        &mut *t.conn().await,
        "demo-a",
        "POR-NEW-1",
        "locatario@example.com",
        chrono::Utc::now(),
    )
    .await
    .unwrap();

    let (s, report) = replay_all(
        &t,
        &admin,
        json!({"status": "failed", "code": "proposal_not_found"}),
    )
    .await;
    assert_eq!(s, 200, "{report}");
    assert_eq!(
        report,
        json!({"dry_run": false, "replayed": 2,
        "outcomes": {"processed": 1, "proposal_not_found": 1}, "next_after_id": null,
        "items": [
            {"receipt_id": report["items"][0]["receipt_id"], "insurer": "porto",
             "proposal_id": "POR-NEW-1", "status_before": "under_analysis",
             "status_after": "approved", "outcome": "processed", "email": true},
            {"receipt_id": report["items"][1]["receipt_id"], "insurer": "porto",
             "proposal_id": "POR-NEW-2", "status_before": null, "status_after": null,
             "outcome": "proposal_not_found", "email": false}
        ]})
    );
    assert!(
        report["items"][0]["receipt_id"].as_i64() < report["items"][1]["receipt_id"].as_i64(),
        "oldest first: {report}"
    );
    let p = t.proposal("demo-a", "POR-NEW-1").await;
    assert_eq!(
        (p.status.as_str(), p.history.clone(), p.emails.len()),
        ("approved", strings(&["under_analysis->approved"]), 1)
    );

    // Everything porto again: the applied ones are duplicates, nothing moves twice.
    let (_, report) = replay_all(&t, &admin, json!({"insurer": "porto"})).await;
    assert_eq!(
        (
            &report["replayed"],
            &report["outcomes"],
            &report["next_after_id"]
        ),
        (
            &json!(3),
            &json!({"duplicate": 2, "proposal_not_found": 1}),
            &Value::Null
        )
    );
    let each: Vec<_> = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["proposal_id"].as_str().unwrap(),
                i["outcome"].as_str().unwrap(),
                i["email"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        each,
        [
            ("POR-NEW-1", "duplicate", false),
            ("POR-NEW-2", "proposal_not_found", false),
            ("POR-2026-000124", "duplicate", false)
        ]
    );
    assert_eq!(t.proposal("demo-a", "POR-NEW-1").await, p);
    assert_eq!(
        t.proposal("demo-a", "POR-2026-000124").await.history,
        strings(&["under_analysis->pending"])
    );

    // A page at a time, oldest first.
    let (_, first) = replay_all(&t, &admin, json!({"limit": 1})).await;
    assert_eq!(first["replayed"], 1);
    assert_eq!(first["outcomes"], json!({"duplicate": 1}));
    let after = first["next_after_id"].as_i64().unwrap();
    let (_, rest) = replay_all(&t, &admin, json!({"after_id": after, "limit": 500})).await;
    assert_eq!(
        (&rest["replayed"], &rest["outcomes"], &rest["next_after_id"]),
        (
            &json!(3),
            &json!({"duplicate": 1, "invalid_payload": 1, "proposal_not_found": 1}),
            &Value::Null
        )
    );
    assert!(
        rest["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["receipt_id"].as_i64().unwrap() > after),
        "{rest}"
    );

    // demo-b's receipt was never replayed by demo-a's admin.
    let (_, b_page) = t.get("/admin/receipts", Some(&t.admin("demo-b"))).await;
    assert_eq!(b_page["items"][0]["attempts"], 1);
    let (_, b_report) = replay_all(&t, &t.admin("demo-b"), json!({})).await;
    assert_eq!(
        (
            &b_report["replayed"],
            &b_report["outcomes"],
            &b_report["next_after_id"]
        ),
        (&json!(1), &json!({"proposal_not_found": 1}), &Value::Null)
    );
    assert_eq!(
        b_report["items"][0]["proposal_id"], "POR-NEW-1",
        "{b_report}"
    );

    // Bad filters name the field.
    for (body, field) in [
        (json!({"limit": 501}), "limit"),
        (json!({"limit": 0}), "limit"),
        (json!({"insurer": "allianz"}), "insurer"),
    ] {
        let (s, b) = replay_all(&t, &admin, body).await;
        assert_eq!(
            (s, b["errors"][0]["field"].as_str()),
            (400, Some(field)),
            "{b}"
        );
    }
    for body in [json!({"status": "lost"}), json!({"outcome": "failed"})] {
        let (s, b) = replay_all(&t, &admin, body).await;
        assert_eq!(
            (s, b["code"].as_str()),
            (400, Some("invalid_payload")),
            "{b}"
        );
    }
}
