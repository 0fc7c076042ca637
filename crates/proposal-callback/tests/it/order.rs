//! Order of callbacks: an older callback never undoes a newer one (`stale`), a redelivery
//! stays `duplicate` whatever its time, events without a result are `ignored`.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::join_all;
use proposal_callback::schema::proposal::callback_receipts as r;
use proposal_callback::store;
use serde_json::{Value, json};

use crate::support::{TestApp, edited, strings};

/// The receipts of the tenant, oldest first: (status, proposal id, event time as RFC 3339).
pub async fn receipts(t: &TestApp) -> Vec<(String, Option<String>, Option<String>)> {
    let rows: Vec<(
        String,
        Option<String>,
        Option<chrono::DateTime<chrono::Utc>>,
    )> = r::table
        .filter(r::tenant_id.eq("demo-a"))
        .order(r::id)
        .select((r::status, r::proposal_id, r::event_at))
        .load(&mut *t.conn().await)
        .await
        .unwrap();
    rows.into_iter()
        .map(|(s, p, e)| (s, p, e.map(|e| e.to_rfc3339())))
        .collect()
}

fn porto(proposal: &str, situacao: &str, data_hora: &str, protocolo: &str) -> Vec<u8> {
    edited("porto", "pending", |v| {
        v["idProposta"] = json!(proposal);
        v["situacao"] = json!(situacao);
        v["dataHora"] = json!(data_hora);
        v["protocolo"] = json!(protocolo);
    })
}

#[actix_web::test]
async fn porto_pending_then_an_older_under_analysis_is_stale() {
    let t = TestApp::start().await;
    let id = "POR-2026-000124";
    let newer = porto(id, "PENDENTE", "2026-11-20T14:05:00-03:00", "p-new");
    let older = porto(id, "EM_ANALISE", "2026-11-20T14:00:00-03:00", "p-old");
    let (s, b) = t.callback("demo-a", "porto", newer).await;
    assert_eq!((s, b["result"].as_str()), (200, Some("processed")));
    let (s, b) = t.callback("demo-a", "porto", older.clone()).await;
    assert_eq!(
        (s, b),
        (
            200,
            json!({"result": "stale", "proposal_id": id, "status": "pending"})
        )
    );
    let p = t.proposal("demo-a", id).await;
    assert_eq!(p.status, "pending");
    assert_eq!(p.history, strings(&["under_analysis->pending"]));
    assert_eq!(p.emails.len(), 1, "{:?}", p.emails);
    assert_eq!(
        p.events,
        strings(&["callback_received", "status_changed", "email_queued"])
    );
    assert_eq!(
        receipts(&t).await,
        vec![
            (
                "processed".into(),
                Some(id.into()),
                Some("2026-11-20T17:05:00+00:00".into())
            ),
            (
                "stale".into(),
                Some(id.into()),
                Some("2026-11-20T17:00:00+00:00".into())
            ),
        ]
    );
    // Delivered again, the stale event is the same event: `duplicate`, still nothing applied.
    let (s, b) = t.callback("demo-a", "porto", older).await;
    assert_eq!((s, b["result"].as_str()), (200, Some("duplicate")));
    assert_eq!(t.proposal("demo-a", id).await, p);
}

#[actix_web::test]
async fn a_tokio_approval_older_than_the_pending_applied_is_stale() {
    let t = TestApp::start().await;
    let pending = edited("tokio", "pending", |v| {
        v["data"]["proposal"]["id"] = json!("548812");
        v["sent_at"] = json!(1_763_658_400);
    });
    let approved = edited("tokio", "approved", |v| v["sent_at"] = json!(1_763_658_399));
    assert_eq!(
        t.callback("demo-a", "tokio", pending).await.1["result"],
        "processed"
    );
    let (s, b) = t.callback("demo-a", "tokio", approved).await;
    assert_eq!(
        (s, b),
        (
            200,
            json!({"result": "stale", "proposal_id": "548812", "status": "pending"})
        )
    );
    let p = t.proposal("demo-a", "548812").await;
    assert_eq!(
        (p.status.as_str(), p.history, p.emails.len()),
        ("pending", strings(&["under_analysis->pending"]), 1)
    );
}

/// Equal event times are not stale: the later arrival is applied (whole seconds cannot order
/// two decisions taken within one).
#[actix_web::test]
async fn an_equal_event_time_is_applied_in_arrival_order() {
    let t = TestApp::start().await;
    let id = "POR-2026-000124";
    let at = "2026-11-20T14:05:00-03:00";
    let pending = porto(id, "PENDENTE", at, "p-1");
    let approved = porto(id, "APROVADA", at, "p-2");
    assert_eq!(
        t.callback("demo-a", "porto", pending).await.1["result"],
        "processed"
    );
    let (s, b) = t.callback("demo-a", "porto", approved).await;
    assert_eq!(
        (s, b["result"].as_str(), b["status"].as_str()),
        (200, Some("processed"), Some("approved"))
    );
    // An `unchanged` callback moves the proposal's time on too: what is older is stale.
    let t2 = TestApp::start().await;
    let id2 = "POR-2026-000125";
    for (situacao, at, protocolo, result) in [
        ("PENDENTE", "2026-11-20T14:05:00-03:00", "q-1", "processed"),
        ("PENDENTE", "2026-11-20T14:10:00-03:00", "q-2", "unchanged"),
        ("EM_ANALISE", "2026-11-20T14:07:00-03:00", "q-3", "stale"),
    ] {
        let (s, b) = t2
            .callback("demo-a", "porto", porto(id2, situacao, at, protocolo))
            .await;
        assert_eq!(
            (s, b["result"].as_str()),
            (200, Some(result)),
            "{protocolo}"
        );
    }
    assert_eq!(t2.proposal("demo-a", id2).await.status, "pending");
}

/// A newer and an older callback race on two connections, twenty times: whichever the
/// database serialises first, the proposal ends at the newer one's status, and every applied
/// event made exactly one transition.
#[actix_web::test]
async fn newer_and_older_callbacks_racing_end_at_the_newer() {
    let t = TestApp::start().await;
    const ROUNDS: usize = 20;
    {
        let mut conn = t.conn().await;
        for i in 0..ROUNDS {
            store::proposals::insert_if_absent(
                &mut conn,
                "demo-a",
                &format!("RACE-{i}"),
                "r@example.com",
                chrono::Utc::now(),
            )
            .await
            .unwrap();
        }
    }
    let mut stale = 0;
    for i in 0..ROUNDS {
        let id = format!("RACE-{i}");
        let newer = porto(
            &id,
            "PENDENTE",
            "2026-11-20T14:05:00-03:00",
            &format!("new-{i}"),
        );
        let older = porto(
            &id,
            "EM_ANALISE",
            "2026-11-20T14:00:00-03:00",
            &format!("old-{i}"),
        );
        // Sent at once: HTTP/1.1 cannot share a connection, so each has its own.
        let (a, b) = futures_util::future::join(
            t.callback("demo-a", "porto", newer),
            t.callback("demo-a", "porto", older),
        )
        .await;
        assert_eq!(
            (a.0, a.1["result"].as_str()),
            (200, Some("processed")),
            "{id}"
        );
        assert_eq!(b.0, 200, "{id}: {}", b.1);
        match b.1["result"].as_str() {
            // It came second.
            Some("stale") => stale += 1,
            // It came first: under_analysis was already the status.
            Some("unchanged") => {}
            other => panic!("{id}: {other:?}"),
        }
        let p = t.proposal("demo-a", &id).await;
        assert_eq!(p.status, "pending", "{id}");
        assert_eq!(p.history, strings(&["under_analysis->pending"]), "{id}");
        assert_eq!(p.emails.len(), 1, "{id}");
    }
    let processed = receipts(&t)
        .await
        .iter()
        .filter(|r| r.0 == "processed")
        .count();
    assert_eq!(processed, ROUNDS);
    eprintln!("{stale} of {ROUNDS} older callbacks arrived second (stale)");
}

/// One tokio event delivered 100 times at once, each copy with its own `sent_at`: one
/// transition, one email; every other copy is `duplicate` (never `stale`: the id decides).
#[actix_web::test]
async fn a_hundred_redeliveries_with_different_sent_at_apply_once() {
    let t = TestApp::start().await;
    let calls = (0..100).map(|i| {
        let body = edited("tokio", "approved", |v| {
            v["sent_at"] = json!(1_763_658_191 + 50 - i)
        });
        let t = &t;
        async move {
            // 100 at once may exhaust the pool (8 connections): a 503 is retried, as the
            // insurer does.
            loop {
                let answer = t.callback("demo-a", "tokio", body.clone()).await;
                if answer.0 != 503 {
                    return answer;
                }
            }
        }
    });
    let answers: Vec<(u16, Value)> = join_all(calls).await;
    let count = |what: &str| {
        answers
            .iter()
            .filter(|(s, b)| *s == 200 && b["result"] == what)
            .count()
    };
    assert_eq!(
        (count("processed"), count("duplicate")),
        (1, 99),
        "{answers:?}"
    );
    let p = t.proposal("demo-a", "548812").await;
    assert_eq!(p.history, strings(&["under_analysis->approved"]));
    assert_eq!(p.emails.len(), 1);
}

#[actix_web::test]
async fn a_tokio_event_without_a_result_is_ignored_and_stored() {
    let t = TestApp::start().await;
    let before = t.proposal("demo-a", "548812").await;
    let body = edited("tokio", "approved", |v| {
        v["event"] = json!("proposal.documents_received");
        v["event_id"] = json!("evt_docs");
    });
    let (s, b) = t.callback("demo-a", "tokio", body.clone()).await;
    assert_eq!((s, b), (200, json!({"result": "ignored"})));
    assert_eq!(t.proposal("demo-a", "548812").await, before);
    assert_eq!(receipts(&t).await, vec![("ignored".into(), None, None)]);
    // The receipt keeps the body; an operator sees it as `ignored`.
    let (s, page) = t
        .get("/admin/receipts?status=ignored", Some(&t.admin("demo-a")))
        .await;
    assert_eq!(s, 200);
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    let stored: Value = serde_json::from_str(page["items"][0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(stored["event"], "proposal.documents_received");
    // An unknown status code in an analysis result stays 422.
    let unknown = edited("tokio", "approved", |v| {
        v["data"]["result"]["code"] = json!(40)
    });
    let (s, b) = t.callback("demo-a", "tokio", unknown).await;
    assert_eq!((s, b["code"].as_str()), (422, Some("invalid_payload")));
}

/// The event time is essential: without it (or unreadable) a callback cannot be ordered.
#[actix_web::test]
async fn a_missing_or_bad_event_time_is_422_naming_it() {
    let t = TestApp::start().await;
    type Edit = fn(&mut Value);
    let cases: [(&str, &str, Edit, u16, &str, &str); 6] = [
        (
            "porto",
            "approved",
            |v| {
                v.as_object_mut().unwrap().remove("dataHora");
            },
            422,
            "missing_field",
            "dataHora",
        ),
        (
            "porto",
            "approved",
            |v| v["dataHora"] = json!("20/11/2026 14:00"),
            422,
            "invalid_payload",
            "dataHora",
        ),
        (
            "tokio",
            "approved",
            |v| v["sent_at"] = json!(null),
            422,
            "missing_field",
            "sent_at",
        ),
        (
            "tokio",
            "approved",
            |v| v["sent_at"] = json!("yesterday"),
            422,
            "invalid_payload",
            "sent_at",
        ),
        (
            "too",
            "approved",
            |v| v["emitidoEm"] = json!(""),
            422,
            "missing_field",
            "emitidoEm",
        ),
        (
            "too",
            "approved",
            |v| v["emitidoEm"] = json!("31/02/2026 10:00:00"),
            422,
            "invalid_payload",
            "emitidoEm",
        ),
    ];
    for (insurer, outcome, edit, status, code, field) in cases {
        let (s, b) = t
            .callback("demo-a", insurer, edited(insurer, outcome, edit))
            .await;
        assert_eq!(
            (s, b["code"].as_str(), b["errors"][0]["field"].as_str()),
            (status, Some(code), Some(field)),
            "{insurer}: {b}"
        );
    }
    assert!(receipts(&t).await.iter().all(|r| r.0 == "failed"));
}
