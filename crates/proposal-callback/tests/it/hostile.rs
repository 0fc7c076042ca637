//! Bodies that must be refused cleanly: a NUL character PostgreSQL cannot store, a key given
//! twice. Each is a 422 naming the field, with only the receipt written, also on replay.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::schema::proposal::callback_receipts as r;
use serde_json::{Value, json};

use crate::support::{TestApp, edited};

type Edit = fn(&mut Value);

/// The last receipt: (id, status, http status, error code, body).
async fn last_receipt(t: &TestApp) -> (i64, String, Option<i16>, Option<String>, Vec<u8>) {
    r::table
        .order(r::id.desc())
        .select((r::id, r::status, r::http_status, r::error_code, r::body))
        .first(&mut *t.conn().await)
        .await
        .unwrap()
}

#[actix_web::test]
async fn a_nul_in_any_text_field_of_each_insurer_is_422_naming_it() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    let cases: Vec<(&str, &str, &str, &str, Edit)> = vec![
        ("porto", "pending", "POR-2026-000124", "idProposta", |v| {
            v["idProposta"] = json!("POR-2026-000124\u{0}")
        }),
        ("porto", "pending", "POR-2026-000124", "motivo", |v| {
            v["motivo"] = json!("renda\u{0}ilegível")
        }),
        ("porto", "pending", "POR-2026-000124", "protocolo", |v| {
            v["protocolo"] = json!("\u{0}")
        }),
        ("porto", "pending", "POR-2026-000124", "situacao", |v| {
            v["situacao"] = json!("PENDENTE\u{0}")
        }),
        ("porto", "pending", "POR-2026-000124", "extra", |v| {
            v["extra"] = json!("\u{0}")
        }),
        ("tokio", "pending", "548813", "event_id", |v| {
            v["event_id"] = json!("evt\u{0}")
        }),
        ("tokio", "pending", "548813", "data.proposal.id", |v| {
            v["data"]["proposal"]["id"] = json!("548813\u{0}")
        }),
        (
            "tokio",
            "pending",
            "548813",
            "data.result.description",
            |v| v["data"]["result"]["description"] = json!("a\u{0}b"),
        ),
        (
            "tokio",
            "pending",
            "548813",
            "data.proposal.external_ref",
            |v| v["data"]["proposal"]["external_ref"] = json!("\u{0}"),
        ),
        ("too", "pending", "99121", "parecer.observacoes", |v| {
            v["parecer"]["observacoes"] = json!("\u{0}")
        }),
        ("too", "pending", "99121", "pendencias[1].descricao", |v| {
            v["pendencias"][1]["descricao"] = json!("IR\u{0}")
        }),
        ("too", "pending", "99121", "pendencias[0].documento", |v| {
            v["pendencias"][0]["documento"] = json!("RG\u{0}")
        }),
        ("too", "pending", "99121", "emitidoEm", |v| {
            v["emitidoEm"] = json!("20/11/2026 14:06:00\u{0}")
        }),
    ];
    for (insurer, outcome, proposal, field, edit) in cases {
        let before = t.proposal("demo-a", proposal).await;
        let body = edited(insurer, outcome, edit);
        assert!(
            String::from_utf8_lossy(&body).contains("\\u0000"),
            "the body carries an escaped NUL"
        );
        let (s, b) = t.callback("demo-a", insurer, body.clone()).await;
        assert_eq!(
            (s, b["code"].as_str(), b["errors"][0]["field"].as_str()),
            (422, Some("invalid_payload"), Some(field)),
            "{insurer} {field}: {b}"
        );
        assert!(b["detail"].as_str().unwrap().contains("NUL"), "{b}");
        let (id, status, http, code, stored) = last_receipt(&t).await;
        assert_eq!(
            (status.as_str(), http, code.as_deref(), stored),
            ("failed", Some(422), Some("invalid_payload"), body),
            "{insurer} {field}"
        );
        assert_eq!(
            t.proposal("demo-a", proposal).await,
            before,
            "{insurer} {field}"
        );
        // Replayed: the same 422, never a 500.
        let (s, b2) = t
            .post(
                &format!("/admin/receipts/{id}/replay"),
                Some(&admin),
                "application/json",
                vec![],
            )
            .await;
        assert_eq!(
            (s, &b2["errors"]),
            (422, &b["errors"]),
            "replay {insurer} {field}"
        );
        assert_eq!(t.proposal("demo-a", proposal).await, before);
    }
}

#[actix_web::test]
async fn a_key_given_twice_is_422_and_changes_nothing() {
    let t = TestApp::start().await;
    let body = br#"{"idProposta":"POR-2026-000125","situacao":"RECUSADA","situacao":"APROVADA",
        "dataHora":"2026-11-20T14:09:03-03:00","motivo":null,"protocolo":"5c9a8b7d"}"#;
    let before = t.proposal("demo-a", "POR-2026-000125").await;
    let (s, b) = t.callback("demo-a", "porto", body.to_vec()).await;
    assert_eq!(
        (s, b["code"].as_str(), b["errors"][0]["field"].as_str()),
        (422, Some("invalid_payload"), Some("situacao")),
        "{b}"
    );
    assert_eq!(t.proposal("demo-a", "POR-2026-000125").await, before);
    assert_eq!(before.status, "under_analysis");
    let (_, status, _, code, _) = last_receipt(&t).await;
    assert_eq!(
        (status.as_str(), code.as_deref()),
        ("failed", Some("invalid_payload"))
    );
    // Nested, for the other two insurers.
    let tokio = br#"{"event_id":"e1","event":"proposal.analysis_completed","sent_at":1763658191,
        "data":{"proposal":{"id":"548812"},"result":{"code":30,"code":10}}}"#;
    let (s, b) = t.callback("demo-a", "tokio", tokio.to_vec()).await;
    assert_eq!(
        (s, b["errors"][0]["field"].as_str()),
        (422, Some("data.result.code"))
    );
    let too = br#"{"numeroProposta":99120,"numeroProposta":99121,
        "parecer":{"resultado":"A"},"emitidoEm":"20/11/2026 14:03:11"}"#;
    let (s, b) = t.callback("demo-a", "too", too.to_vec()).await;
    assert_eq!(
        (s, b["errors"][0]["field"].as_str()),
        (422, Some("numeroProposta"))
    );
    assert_eq!(
        t.proposal("demo-a", "548812").await.status,
        "under_analysis"
    );
    assert_eq!(t.proposal("demo-a", "99120").await.status, "under_analysis");
}

#[actix_web::test]
async fn a_nul_in_an_admin_parameter_is_400_naming_it() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    for (path, field) in [
        ("/admin/receipts?proposal_id=%00", "proposal_id"),
        ("/admin/receipts?code=%00", "code"),
        (
            "/admin/receipts?status=failed&code=proposal_not_found%00",
            "code",
        ),
        ("/admin/emails?proposal_id=99121%00", "proposal_id"),
        ("/admin/proposals/%00", "proposalId"),
        ("/admin/proposals/99121%00", "proposalId"),
    ] {
        let (s, b) = t.get(path, Some(&admin)).await;
        assert_eq!(
            (s, b["code"].as_str(), b["errors"][0]["field"].as_str()),
            (400, Some("invalid_parameter"), Some(field)),
            "{path}: {b}"
        );
        assert!(
            b["errors"][0]["message"].as_str().unwrap().contains("NUL"),
            "{path}: {b}"
        );
        assert_eq!(b["type"], "urn:problem-type:invalid_parameter", "{path}");
    }
    // Text that only looks like one (`%2500` is `%00`) is an ordinary filter.
    let (s, b) = t
        .get("/admin/receipts?proposal_id=%2500", Some(&admin))
        .await;
    assert_eq!((s, &b["items"]), (200, &json!([])), "{b}");
}

#[actix_web::test]
async fn a_nul_in_a_replay_filter_is_400_naming_the_field() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    for (body, field) in [
        (json!({"code": "\u{0}proposal_not_found"}), "code"),
        (json!({"proposal_id": "99121\u{0}"}), "proposal_id"),
        (json!({"status": "failed", "code": "\u{0}"}), "code"),
    ] {
        let (s, b) = t
            .post(
                "/admin/receipts/replay",
                Some(&admin),
                "application/json",
                serde_json::to_vec(&body).unwrap(),
            )
            .await;
        assert_eq!(
            (s, b["code"].as_str(), b["errors"][0]["field"].as_str()),
            (400, Some("invalid_payload"), Some(field)),
            "{body}: {b}"
        );
        assert!(
            b["errors"][0]["message"].as_str().unwrap().contains("NUL"),
            "{body}: {b}"
        );
    }
}
