//! Repairs previewed (docs/proposal-callback.md, "Repairs previewed"): the dry run of a bulk
//! replay and of a resume answers, per receipt, what the real run then does, row for row,
//! and changes nothing (every table of the schema compared before and after).

use std::collections::BTreeMap;

use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use proposal_callback::schema::proposal::{
    callback_receipts as r, email_outbox as o, integration_history as h,
};
use serde_json::{Value, json};

use crate::support::{TestApp, edited};

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Rows {
    #[diesel(sql_type = Text)]
    rows: String,
}

/// Every row of every table of the schema, as JSON text, by table.
async fn snapshot(t: &TestApp) -> BTreeMap<String, String> {
    let mut conn = t.conn().await;
    let tables: Vec<Name> = diesel::sql_query(
        "SELECT table_name::text AS name FROM information_schema.tables \
         WHERE table_schema = 'proposal' AND table_type = 'BASE TABLE' ORDER BY 1",
    )
    .load(&mut conn)
    .await
    .unwrap();
    assert!(tables.len() >= 10, "the schema's tables");
    let mut all = BTreeMap::new();
    for Name { name } in tables {
        let Rows { rows } = diesel::sql_query(format!(
            "SELECT coalesce(json_agg(to_jsonb(x) ORDER BY to_jsonb(x)::text), '[]')::text AS rows \
             FROM proposal.\"{name}\" x"
        ))
        .get_result(&mut conn)
        .await
        .unwrap();
        all.insert(name, rows);
    }
    all
}

/// A porto callback for `proposal` with `situacao`, its own `protocolo` (event id) and time.
fn porto(proposal: &str, situacao: &str, protocolo: &str, minute: u32) -> Vec<u8> {
    edited("porto", "approved", |v| {
        v["idProposta"] = json!(proposal);
        v["situacao"] = json!(situacao);
        v["protocolo"] = json!(protocolo);
        v["dataHora"] = json!(format!("2026-11-20T14:{minute:02}:00-03:00"));
    })
}

/// A tokio analysis result: `code` 20 pending, 10 approved.
fn tokio(proposal: &str, code: i64, event: &str, sent_at: i64) -> Vec<u8> {
    edited("tokio", "approved", |v| {
        v["event_id"] = json!(event);
        v["sent_at"] = json!(sent_at);
        v["data"]["proposal"]["id"] = json!(proposal);
        v["data"]["result"]["code"] = json!(code);
    })
}

async fn create_proposal(t: &TestApp, id: &str) {
    proposal_callback::store::proposals::insert_if_absent(
        &mut *t.conn().await,
        "demo-a",
        id,
        &format!("{}@example.com", id.to_lowercase()),
        chrono::Utc::now(),
    )
    .await
    .unwrap();
}

async fn post(t: &TestApp, path: &str, admin: &str, body: Value) -> Value {
    let (status, answer) = t
        .post(
            path,
            Some(admin),
            "application/json",
            serde_json::to_vec(&body).unwrap(),
        )
        .await;
    assert_eq!(status, 200, "{path}: {answer}");
    answer
}

/// What the database says each receipt's repair did: `[receipt, outcome or code, from, to,
/// emails]`, where from/to are the transition the receipt recorded (null when none).
async fn effects_in_db(t: &TestApp, receipts: &[i64]) -> Vec<Value> {
    let mut conn = t.conn().await;
    let mut out = Vec::new();
    for &id in receipts {
        let (status, code): (String, Option<String>) = r::table
            .find(id)
            .select((r::status, r::error_code))
            .first(&mut conn)
            .await
            .unwrap();
        let moves: Vec<(i64, String, String)> = h::table
            .filter(h::receipt_id.eq(id))
            .select((h::id, h::from_status, h::to_status))
            .load(&mut conn)
            .await
            .unwrap();
        let emails: i64 = o::table
            .filter(o::history_id.eq_any(moves.iter().map(|m| m.0).collect::<Vec<_>>()))
            .count()
            .get_result(&mut conn)
            .await
            .unwrap();
        let (from, to) = match moves.as_slice() {
            [] => (Value::Null, Value::Null),
            [(_, f, t)] => (json!(f), json!(t)),
            more => panic!("receipt {id} moved its proposal twice: {more:?}"),
        };
        out.push(json!([id, code.unwrap_or(status), from, to, emails]));
    }
    out
}

/// The preview's items as the same `[receipt, outcome, from, to, emails]`: a transition
/// where an email is queued, none otherwise.
fn effects_previewed(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .map(|i| {
            let email = i["email"].as_bool().unwrap();
            let (from, to) = if email {
                (i["status_before"].clone(), i["status_after"].clone())
            } else {
                (Value::Null, Value::Null)
            };
            json!([i["receipt_id"], i["outcome"], from, to, i64::from(email)])
        })
        .collect()
}

fn receipt_ids(items: &[Value]) -> Vec<i64> {
    items
        .iter()
        .map(|i| i["receipt_id"].as_i64().unwrap())
        .collect()
}

#[actix_web::test]
async fn a_bulk_replays_preview_is_what_the_replay_then_does_and_changes_nothing() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    // Callbacks for proposals not created yet: NEW-1 pending then approved, NEW-2 approved and
    // its redelivery (same protocolo), NEW-3 approved (never created); and 99121 approved,
    // then pending (a move the table refuses).
    let sent = [
        ("NEW-1", "PENDENTE", "p-1", 1, 404),
        ("NEW-1", "APROVADA", "p-2", 2, 404),
        ("NEW-2", "APROVADA", "p-3", 3, 404),
        ("NEW-2", "APROVADA", "p-3", 3, 404),
        ("NEW-3", "APROVADA", "p-4", 4, 404),
        ("99121", "APROVADA", "p-5", 5, 200),
        ("99121", "PENDENTE", "p-6", 6, 409),
    ];
    for (proposal, situacao, protocolo, minute, expected) in sent {
        let (status, body) = t
            .callback(
                "demo-a",
                "porto",
                porto(proposal, situacao, protocolo, minute),
            )
            .await;
        assert_eq!(status, expected, "{proposal} {situacao}: {body}");
    }
    create_proposal(&t, "NEW-1").await;
    create_proposal(&t, "NEW-2").await;

    let filter = json!({"status": "failed"});
    let before = snapshot(&t).await;
    let preview = post(
        &t,
        "/admin/receipts/replay?dry_run=true",
        &admin,
        filter.clone(),
    )
    .await;
    assert_eq!(
        snapshot(&t).await,
        before,
        "the preview changed nothing, in any table"
    );
    assert_eq!(preview["dry_run"], true);
    let items = preview["items"].as_array().unwrap().clone();
    let ids = receipt_ids(&items);
    let item =
        |i: usize, proposal: &str, before: Value, after: Value, outcome: &str, email: bool| {
            json!({"receipt_id": ids[i], "insurer": "porto", "proposal_id": proposal,
               "status_before": before, "status_after": after, "outcome": outcome,
               "email": email})
        };
    // Each receipt sees the ones before it applied: NEW-1's approval comes from pending, and
    // NEW-2's redelivery is a duplicate of the approval just before it.
    assert_eq!(
        items,
        [
            item(
                0,
                "NEW-1",
                json!("under_analysis"),
                json!("pending"),
                "processed",
                true
            ),
            item(
                1,
                "NEW-1",
                json!("pending"),
                json!("approved"),
                "processed",
                true
            ),
            item(
                2,
                "NEW-2",
                json!("under_analysis"),
                json!("approved"),
                "processed",
                true
            ),
            item(
                3,
                "NEW-2",
                json!("approved"),
                json!("approved"),
                "duplicate",
                false
            ),
            item(
                4,
                "NEW-3",
                Value::Null,
                Value::Null,
                "proposal_not_found",
                false
            ),
            item(
                5,
                "99121",
                json!("approved"),
                json!("approved"),
                "invalid_transition",
                false
            ),
        ]
    );
    assert_eq!(
        (
            &preview["replayed"],
            &preview["outcomes"],
            &preview["next_after_id"]
        ),
        (
            &json!(6),
            &json!({"processed": 3, "duplicate": 1, "proposal_not_found": 1, "invalid_transition": 1}),
            &Value::Null
        )
    );
    // Previewing again answers the same: the first left nothing behind.
    let again = post(
        &t,
        "/admin/receipts/replay?dry_run=true",
        &admin,
        filter.clone(),
    )
    .await;
    assert_eq!(again, preview);
    // `dry_run=false` is the real run.
    let real = post(&t, "/admin/receipts/replay?dry_run=false", &admin, filter).await;
    assert_eq!(real["dry_run"], false);
    for field in ["items", "replayed", "outcomes", "next_after_id"] {
        assert_eq!(real[field], preview[field], "{field}");
    }
    // And the database holds what the preview said, receipt by receipt.
    assert_eq!(effects_in_db(&t, &ids).await, effects_previewed(&items));
    assert_ne!(snapshot(&t).await, before);
    let new1 = t.proposal("demo-a", "NEW-1").await;
    assert_eq!((new1.status.as_str(), new1.emails.len()), ("approved", 2));
}

#[actix_web::test]
async fn a_resumes_preview_is_what_the_resume_then_does_and_changes_nothing() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    for id in ["T-1", "T-2"] {
        create_proposal(&t, id).await;
    }
    let tokio_id = t.integration_id("demo-a", "tokio");
    let pause = post(
        &t,
        &format!("/admin/integrations/{tokio_id}/pause"),
        &admin,
        json!(null),
    )
    .await;
    assert!(pause["paused_at"].is_string(), "{pause}");
    let base = 1_763_658_000;
    let deferred = [
        tokio("T-1", 20, "e-1", base),
        tokio("T-1", 10, "e-2", base + 1),
        tokio("T-2", 10, "e-3", base + 2),
        tokio("T-2", 10, "e-3", base + 2),
        tokio("T-3", 10, "e-4", base + 3),
        tokio("T-1", 20, "e-5", base + 4),
    ];
    for body in deferred {
        let (status, answer) = t.callback("demo-a", "tokio", body).await;
        assert_eq!((status, answer), (202, json!({"result": "deferred"})));
    }

    let path = format!("/admin/integrations/{tokio_id}/resume");
    let before = snapshot(&t).await;
    let preview = post(&t, &format!("{path}?dry_run=true"), &admin, json!(null)).await;
    assert_eq!(snapshot(&t).await, before, "the preview changed nothing");
    assert_eq!(preview["dry_run"], true);
    assert_eq!(
        preview["integration"]["paused_at"], pause["paused_at"],
        "still paused"
    );
    let items = preview["items"].as_array().unwrap().clone();
    let ids = receipt_ids(&items);
    let item =
        |i: usize, proposal: &str, before: Value, after: Value, outcome: &str, email: bool| {
            json!({"receipt_id": ids[i], "insurer": "tokio", "proposal_id": proposal,
               "status_before": before, "status_after": after, "outcome": outcome,
               "email": email})
        };
    assert_eq!(
        items,
        [
            item(
                0,
                "T-1",
                json!("under_analysis"),
                json!("pending"),
                "processed",
                true
            ),
            item(
                1,
                "T-1",
                json!("pending"),
                json!("approved"),
                "processed",
                true
            ),
            item(
                2,
                "T-2",
                json!("under_analysis"),
                json!("approved"),
                "processed",
                true
            ),
            item(
                3,
                "T-2",
                json!("approved"),
                json!("approved"),
                "duplicate",
                false
            ),
            item(
                4,
                "T-3",
                Value::Null,
                Value::Null,
                "proposal_not_found",
                false
            ),
            item(
                5,
                "T-1",
                json!("approved"),
                json!("approved"),
                "invalid_transition",
                false
            ),
        ]
    );
    assert_eq!(
        (&preview["applied"], &preview["remaining"]),
        (&json!(6), &json!(0))
    );
    let (_, list) = t.get("/admin/integrations", Some(&admin)).await;
    let tokio_now = list
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == tokio_id)
        .unwrap();
    assert_eq!(tokio_now["paused_at"], pause["paused_at"]);
    let (_, still) = t.get("/admin/receipts?status=deferred", Some(&admin)).await;
    assert_eq!(still["items"].as_array().unwrap().len(), 6);

    let real = post(&t, &path, &admin, json!(null)).await;
    assert_eq!(real["dry_run"], false);
    for field in ["items", "applied", "outcomes", "remaining"] {
        assert_eq!(real[field], preview[field], "{field}");
    }
    assert_eq!(
        real["integration"]["paused_at"],
        Value::Null,
        "the pause ended"
    );
    assert_eq!(effects_in_db(&t, &ids).await, effects_previewed(&items));

    // A preview of an integration that is not paused: nothing to apply.
    let idle = post(&t, &format!("{path}?dry_run=true"), &admin, json!(null)).await;
    assert_eq!(
        (&idle["applied"], &idle["items"], &idle["remaining"]),
        (&json!(0), &json!([]), &json!(0))
    );
}

#[actix_web::test]
async fn a_bad_dry_run_value_is_a_400_naming_it_and_another_tenants_resume_preview_is_403() {
    let t = TestApp::start().await;
    let admin = t.admin("demo-a");
    let (status, problem) = t
        .post(
            "/admin/receipts/replay?dry_run=maybe",
            Some(&admin),
            "application/json",
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(status, 400, "{problem}");
    assert_eq!(problem["code"], "invalid_parameter");
    assert_eq!(problem["errors"][0]["field"], "dry_run", "{problem}");
    let other = t.integration_id("demo-b", "porto");
    let (status, problem) = t
        .post(
            &format!("/admin/integrations/{other}/resume?dry_run=true"),
            Some(&admin),
            "application/json",
            Vec::new(),
        )
        .await;
    assert_eq!((status, problem["code"].as_str()), (403, Some("forbidden")));
    // Without a token nothing is previewed.
    let (status, _) = t
        .post(
            "/admin/receipts/replay?dry_run=true",
            None,
            "application/json",
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(status, 401);
}

/// The console's previews with nothing to do: only the way back, no confirmation.
#[actix_web::test]
async fn a_console_preview_with_nothing_to_do_offers_no_confirmation() {
    let t = TestApp::start().await;
    let porto = t.integration_id("demo-a", "porto");
    let cookie = t.console_session("demo-a").await;
    let page = |path: String| {
        let req = t
            .client
            .get(format!("{}{path}", t.base))
            .header("cookie", cookie.clone());
        async move {
            let res = req.send().await.unwrap();
            (res.status().as_u16(), res.text().await.unwrap())
        }
    };
    let (status, html) = page(format!("/admin/integracao/integracoes/{porto}/retomar")).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("Esta integração não está pausada: retomar não muda nada."),
        "{html}"
    );
    assert!(!html.contains("<form method=\"post\" action=\"/admin/integracao/integracoes"));
    assert!(html.contains(">Voltar</a>"));
    let (status, html) =
        page("/admin/integracao/callbacks/reprocessar?resultado=stale".into()).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("Nenhum callback com estes filtros."),
        "{html}"
    );
    assert!(!html.contains("Confirmar: reprocessar"));
    // Another tenant's integration: its preview is refused.
    let other = t.integration_id("demo-b", "porto");
    let (status, html) = page(format!("/admin/integracao/integracoes/{other}/retomar")).await;
    assert_eq!(status, 403, "{html}");
    // A bad filter names it.
    let (status, html) =
        page("/admin/integracao/callbacks/reprocessar?seguradora=allianz".into()).await;
    assert_eq!(status, 400);
    assert!(html.contains("Filtro inválido"), "{html}");
}
