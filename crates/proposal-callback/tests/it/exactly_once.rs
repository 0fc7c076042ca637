use serde_json::json;

use crate::support::{TestApp, edited, example, strings};

#[actix_web::test]
async fn a_redelivery_is_duplicate_and_changes_nothing() {
    let t = TestApp::start().await;
    for (insurer, id) in [
        ("porto", "POR-2026-000124"),
        ("tokio", "548813"),
        ("too", "99121"),
    ] {
        let body = example(insurer, "pending");
        assert_eq!(t.callback("demo-a", insurer, body.clone()).await.0, 200);
        let before = t.proposal("demo-a", id).await;
        let (s, b) = t.callback("demo-a", insurer, body).await;
        assert_eq!(
            (s, b),
            (
                200,
                json!({"result": "duplicate", "proposal_id": id, "status": "pending"})
            ),
            "{insurer}"
        );
        assert_eq!(t.proposal("demo-a", id).await, before, "{insurer}");
    }
}

#[actix_web::test]
async fn a_redelivery_after_the_proposal_moved_on_is_still_duplicate() {
    let t = TestApp::start().await;
    let pending = example("porto", "pending");
    assert_eq!(t.callback("demo-a", "porto", pending.clone()).await.0, 200);
    // Decided after the pending (a later `dataHora`), so not stale.
    let approved = edited("porto", "approved", |v| {
        v["idProposta"] = json!("POR-2026-000124");
        v["dataHora"] = json!("2026-11-20T15:00:00-03:00");
    });
    assert_eq!(
        t.callback("demo-a", "porto", approved).await.1["status"],
        "approved"
    );
    let (s, b) = t.callback("demo-a", "porto", pending).await;
    assert_eq!(
        (s, b["result"].as_str(), b["status"].as_str()),
        (200, Some("duplicate"), Some("approved"))
    );
}

#[actix_web::test]
async fn the_same_status_again_is_unchanged() {
    let t = TestApp::start().await;
    assert_eq!(
        t.callback("demo-a", "tokio", example("tokio", "approved"))
            .await
            .0,
        200
    );
    // A new event (new id) with the status the proposal already has.
    let again = edited("tokio", "approved", |v| v["event_id"] = json!("evt_other"));
    let (s, b) = t.callback("demo-a", "tokio", again).await;
    assert_eq!(
        (s, b),
        (
            200,
            json!({"result": "unchanged", "proposal_id": "548812", "status": "approved"})
        )
    );
    // Too has no event id: a different body (another time) with the same outcome.
    assert_eq!(
        t.callback("demo-a", "too", example("too", "refused"))
            .await
            .0,
        200
    );
    let later = edited("too", "refused", |v| {
        v["emitidoEm"] = json!("21/11/2026 09:00:00")
    });
    assert_eq!(
        t.callback("demo-a", "too", later).await.1["result"],
        "unchanged"
    );
    let p = t.proposal("demo-a", "548812").await;
    assert_eq!(p.history.len(), 1);
    assert_eq!(p.emails.len(), 1);
    assert_eq!(
        p.events,
        strings(&[
            "callback_received",
            "status_changed",
            "left_queue",
            "email_queued",
            "callback_received"
        ])
    );
}

/// Pending -> under analysis is allowed (the insurer took the documents and analyses again).
#[actix_web::test]
async fn back_to_under_analysis_stays_in_the_queue() {
    let t = TestApp::start().await;
    assert_eq!(
        t.callback("demo-a", "porto", example("porto", "pending"))
            .await
            .0,
        200
    );
    let again = edited("porto", "pending", |v| {
        v["situacao"] = json!("EM_ANALISE");
        v["protocolo"] = json!("p-2");
    });
    let (s, b) = t.callback("demo-a", "porto", again).await;
    assert_eq!((s, b["status"].as_str()), (200, Some("under_analysis")));
    let p = t.proposal("demo-a", "POR-2026-000124").await;
    assert!(p.in_queue);
    assert_eq!(
        p.history,
        strings(&["under_analysis->pending", "pending->under_analysis"])
    );
    assert!(!p.events.contains(&"left_queue".to_owned()));
}

/// Identical deliveries racing on separate connections: one transition, one email.
#[actix_web::test]
async fn racing_twins_make_one_transition_and_one_email() {
    let t = TestApp::start().await;
    for (insurer, id) in [("tokio", "548812"), ("too", "99120")] {
        let body = example(insurer, "approved");
        let token = t.bearer("demo-a", insurer);
        let url = format!("{}/callback/demo-a/{insurer}", t.base);
        let sends = (0..8).map(|_| {
            // A client each, so each request has its own TCP connection.
            let req = reqwest::Client::new()
                .post(&url)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(body.clone());
            async move {
                let res = req.send().await.unwrap();
                let status = res.status().as_u16();
                let body: serde_json::Value = res.json().await.unwrap();
                (status, body["result"].as_str().unwrap_or("").to_owned())
            }
        });
        let mut results = futures_util::future::join_all(sends).await;
        results.sort();
        let mut expected = vec![(200, "duplicate".to_owned()); 7];
        expected.push((200, "processed".to_owned()));
        assert_eq!(results, expected, "{insurer}");
        let p = t.proposal("demo-a", id).await;
        assert_eq!(p.history, strings(&["under_analysis->approved"]));
        assert_eq!(p.emails.len(), 1);
        assert_eq!(
            p.events.iter().filter(|e| *e == "status_changed").count(),
            1
        );
    }
}
