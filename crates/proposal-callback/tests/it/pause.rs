//! Pausing an integration: its callbacks are stored and answered 202 `deferred`; resuming
//! applies them in arrival order, each once, also with two resumes at once and callbacks
//! arriving during the resume.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::flow::pause::{self, RESUME_MAX};
use proposal_callback::schema::proposal::callback_receipts as r;
use proposal_callback::store;
use serde_json::{Value, json};

use crate::support::{ProposalState, TestApp, edited, example, strings, subject};

/// A tokio analysis result: `code` 20 pending, 5 under analysis, 10 approved.
fn tokio(proposal: &str, code: i64, event: &str, sent_at: i64) -> Vec<u8> {
    edited("tokio", "approved", |v| {
        v["event_id"] = json!(event);
        v["sent_at"] = json!(sent_at);
        v["data"]["proposal"]["id"] = json!(proposal);
        v["data"]["result"]["code"] = json!(code);
    })
}

async fn post(t: &TestApp, path: &str, admin: &str) -> (u16, Value) {
    t.post(path, Some(admin), "application/json", vec![]).await
}

const PROPOSALS: [&str; 5] = ["T-1", "T-2", "T-3", "T-4", "T-5"];
const BASE: i64 = 1_763_658_000;

/// Fifty callbacks for five proposals, interleaved, while paused: each proposal goes
/// pending, under analysis, pending, ... ten times. Then, while two resumes run at once, ten
/// more arrive (pending, then approved, for each). Every one is applied once, in the order it
/// arrived: had any been applied out of order, the insurer's event times would have made a
/// later one `stale` or the final status a 409.
#[actix_web::test]
async fn a_paused_integration_applies_fifty_callbacks_once_in_order_after_resume() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    {
        let mut conn = t.conn().await;
        for id in PROPOSALS {
            store::proposals::insert_if_absent(
                &mut conn,
                "demo-a",
                id,
                "l@example.com",
                chrono::Utc::now(),
            )
            .await
            .unwrap();
        }
    }
    let tokio_id = t.integration_id("demo-a", "tokio");

    let (s, paused) = post(&t, &format!("/admin/integrations/{tokio_id}/pause"), &admin).await;
    assert_eq!(s, 200, "{paused}");
    assert_eq!(paused["id"], tokio_id);
    assert!(paused["paused_at"].is_string(), "{paused}");
    // Pausing again keeps the first pause.
    let (_, again) = post(&t, &format!("/admin/integrations/{tokio_id}/pause"), &admin).await;
    assert_eq!(again, paused);

    let mut n = 0;
    for step in 0..10 {
        for id in PROPOSALS {
            let code = if step % 2 == 0 { 20 } else { 5 };
            let body = tokio(id, code, &format!("evt-{n}"), BASE + n);
            let (s, b) = t.callback("demo-a", "tokio", body).await;
            assert_eq!((s, b), (202, json!({"result": "deferred"})), "callback {n}");
            n += 1;
        }
    }
    // Another integration of the tenant is not paused.
    let (s, b) = t
        .callback("demo-a", "porto", example("porto", "approved"))
        .await;
    assert_eq!((s, b["result"].as_str()), (200, Some("processed")));

    // Stored, nothing applied.
    for id in PROPOSALS {
        let p = t.proposal("demo-a", id).await;
        assert_eq!(
            (p.status.as_str(), p.history.len(), p.emails.len()),
            ("under_analysis", 0, 0)
        );
    }
    let (_, deferred) = t
        .get("/admin/receipts?status=deferred&limit=200", Some(&admin))
        .await;
    let items = deferred["items"].as_array().unwrap();
    assert_eq!(items.len(), 50);
    assert!(
        items
            .iter()
            .all(|r| r["http_status"] == 202 && r["outcome"] == "deferred")
    );
    // Not applied, but already found by proposal (the story lists them too).
    let (_, t1) = t
        .get(
            "/admin/receipts?status=deferred&proposal_id=T-1",
            Some(&admin),
        )
        .await;
    assert_eq!(t1["items"].as_array().unwrap().len(), 10);
    let (_, story) = t.get("/admin/proposals/T-1", Some(&admin)).await;
    assert_eq!(
        (
            story["status"].as_str(),
            story["receipts"].as_array().unwrap().len()
        ),
        (Some("under_analysis"), 10)
    );

    // Two resumes at once (one through HTTP, one as another replica would), and ten more
    // callbacks arriving meanwhile, in order per proposal.
    let late = async {
        let mut answers = Vec::new();
        for (k, code) in [20, 10].into_iter().enumerate() {
            for (j, id) in PROPOSALS.into_iter().enumerate() {
                let m = 50 + (k * 5 + j) as i64;
                let (s, b) = t
                    .callback(
                        "demo-a",
                        "tokio",
                        tokio(id, code, &format!("evt-{m}"), BASE + m),
                    )
                    .await;
                answers.push((s, b));
            }
        }
        answers
    };
    let resume_path = format!("/admin/integrations/{tokio_id}/resume");
    let http_resume = post(&t, &resume_path, &admin);
    let replica_resume = async {
        let mut conn = t.conn().await;
        pause::resume(
            &mut conn,
            &common::Clock::system(),
            "demo-a",
            tokio_id,
            RESUME_MAX,
        )
        .await
        .unwrap()
    };
    let (late, (s, resumed), replica) = tokio::join!(late, http_resume, replica_resume);
    assert_eq!(s, 200, "{resumed}");
    assert_eq!(resumed["integration"]["paused_at"], Value::Null);
    assert_eq!(resumed["remaining"], 0);
    assert!(replica.integration.paused_at.is_none());
    // Each late callback was applied at once (200) or deferred and applied by a resume (202).
    let mut live = 0;
    for (s, b) in &late {
        match s {
            200 => {
                assert_eq!(b["result"], "processed", "{b}");
                live += 1;
            }
            202 => assert_eq!(b, &json!({"result": "deferred"})),
            other => panic!("{other}: {b}"),
        }
    }
    let by_resumes =
        resumed["applied"].as_u64().unwrap() as usize + replica.outcomes.values().sum::<usize>();
    assert_eq!(by_resumes + live, 60, "{resumed} {:?}", replica.outcomes);
    assert!(
        resumed["outcomes"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| k == "processed"),
        "{resumed}"
    );
    assert!(
        replica.outcomes.keys().all(|k| k == "processed"),
        "{:?}",
        replica.outcomes
    );

    // Every proposal: twelve transitions in the order they were sent, twelve emails, approved.
    let mut expected_history = Vec::new();
    let mut expected_emails = Vec::new();
    for step in 0..10 {
        let (from, to) = if step % 2 == 0 {
            ("under_analysis", "pending")
        } else {
            ("pending", "under_analysis")
        };
        expected_history.push(format!("{from}->{to}"));
        expected_emails.push(to);
    }
    expected_history.extend(strings(&["under_analysis->pending", "pending->approved"]));
    expected_emails.extend(["pending", "approved"]);
    for id in PROPOSALS {
        let p = t.proposal("demo-a", id).await;
        assert_eq!(
            p,
            ProposalState {
                status: "approved".into(),
                in_queue: false,
                events: p.events.clone(),
                history: expected_history.clone(),
                emails: expected_emails.iter().map(|s| subject(id, s)).collect(),
            },
            "{id}"
        );
        assert_eq!(
            p.events
                .iter()
                .filter(|e| *e == "callback_received")
                .count(),
            12
        );
    }
    // Every receipt of the integration ended processed: none duplicate, stale or failed.
    let statuses: Vec<String> = r::table
        .filter(r::integration_id.eq(tokio_id))
        .select(r::status)
        .load(&mut t.conn().await)
        .await
        .unwrap();
    assert_eq!(statuses.len(), 60);
    assert!(statuses.iter().all(|s| s == "processed"), "{statuses:?}");

    // Resumed: callbacks apply at once again; resuming again changes nothing.
    let (s, b) = t
        .callback("demo-a", "tokio", example("tokio", "pending"))
        .await;
    assert_eq!((s, b["result"].as_str()), (200, Some("processed")));
    let (s, again) = post(
        &t,
        &format!("/admin/integrations/{tokio_id}/resume"),
        &admin,
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(
        (&again["applied"], &again["outcomes"], &again["remaining"]),
        (&json!(0), &json!({}), &json!(0))
    );
}

/// A deferred callback that cannot be applied on resume fails then, with its code, like a live
/// one; a replay while paused defers again; another tenant cannot pause or resume.
#[actix_web::test]
async fn pause_and_resume_refuse_strangers_and_failures_are_recorded_on_resume() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    let too = t.integration_id("demo-a", "too");
    for action in ["pause", "resume"] {
        let (s, b) = post(
            &t,
            &format!("/admin/integrations/{too}/{action}"),
            &t.admin("demo-b"),
        )
        .await;
        assert_eq!(
            (s, b["code"].as_str()),
            (403, Some("forbidden")),
            "{action}"
        );
        let (s, b) = post(&t, &format!("/admin/integrations/999999/{action}"), &admin).await;
        assert_eq!(
            (s, b["code"].as_str()),
            (404, Some("not_found")),
            "{action}"
        );
        let (s, _) = post(
            &t,
            &format!("/admin/integrations/{too}/{action}"),
            &t.bearer("demo-a", "too"),
        )
        .await;
        assert_eq!(s, 401, "{action}");
    }
    let (_, list) = t.get("/admin/integrations", Some(&admin)).await;
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .all(|i| i["paused_at"].is_null())
    );

    assert_eq!(
        post(&t, &format!("/admin/integrations/{too}/pause"), &admin)
            .await
            .0,
        200
    );
    let unknown = edited("too", "approved", |v| v["numeroProposta"] = json!(1234));
    let (s, b) = t.callback("demo-a", "too", unknown).await;
    assert_eq!((s, b), (202, json!({"result": "deferred"})));
    let (s, b) = t.callback("demo-a", "too", example("too", "pending")).await;
    assert_eq!(s, 202, "{b}");
    // A replay while paused defers again.
    let (_, page) = t.get("/admin/receipts?status=deferred", Some(&admin)).await;
    let oldest = page["items"][1]["id"].as_i64().unwrap();
    let (s, b) = post(&t, &format!("/admin/receipts/{oldest}/replay"), &admin).await;
    assert_eq!((s, b), (202, json!({"result": "deferred"})));
    let (_, list) = t.get("/admin/integrations", Some(&admin)).await;
    let paused: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| !i["paused_at"].is_null())
        .map(|i| i["insurer"].as_str().unwrap())
        .collect();
    assert_eq!(paused, ["too"]);

    let (s, resumed) = post(&t, &format!("/admin/integrations/{too}/resume"), &admin).await;
    assert_eq!(s, 200, "{resumed}");
    assert_eq!(
        (
            &resumed["applied"],
            &resumed["outcomes"],
            &resumed["remaining"]
        ),
        (
            &json!(2),
            &json!({"processed": 1, "proposal_not_found": 1}),
            &json!(0)
        )
    );
    let (_, failed) = t.get("/admin/receipts?status=failed", Some(&admin)).await;
    assert_eq!(failed["items"][0]["proposal_id"], "1234");
    assert_eq!(failed["items"][0]["outcome"], "proposal_not_found");
    assert_eq!(
        t.proposal("demo-a", "99121").await.history,
        strings(&["under_analysis->pending"])
    );
}
