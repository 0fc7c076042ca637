use serde_json::{Value, json};

use crate::support::{ProposalState, TestApp, edited, example, strings, subject};

const EXAMPLES: [(&str, &str, &str); 9] = [
    ("porto", "approved", "POR-2026-000123"),
    ("porto", "pending", "POR-2026-000124"),
    ("porto", "refused", "POR-2026-000125"),
    ("tokio", "approved", "548812"),
    ("tokio", "pending", "548813"),
    ("tokio", "refused", "548814"),
    ("too", "approved", "99120"),
    ("too", "pending", "99121"),
    ("too", "refused", "99122"),
];

#[actix_web::test]
async fn each_insurers_three_outcomes() {
    let t = TestApp::start().await;
    for (insurer, outcome, id) in EXAMPLES {
        let (status, body) = t
            .callback("demo-a", insurer, example(insurer, outcome))
            .await;
        assert_eq!(status, 200, "{insurer}/{outcome}: {body}");
        assert_eq!(
            body,
            json!({"result": "processed", "proposal_id": id, "status": outcome}),
            "{insurer}/{outcome}"
        );
        let final_ = outcome != "pending";
        let mut events = strings(&["callback_received", "status_changed"]);
        if final_ {
            events.push("left_queue".into());
        }
        events.push("email_queued".into());
        assert_eq!(
            t.proposal("demo-a", id).await,
            ProposalState {
                status: outcome.into(),
                in_queue: !final_,
                events,
                history: vec![format!("under_analysis->{outcome}")],
                emails: vec![subject(id, outcome)],
            },
            "{insurer}/{outcome}"
        );
    }
}

#[actix_web::test]
async fn a_pending_email_says_what_the_insurer_asks_for() {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use proposal_callback::schema::proposal::email_outbox as o;
    let t = TestApp::start().await;
    for insurer in ["porto", "tokio", "too"] {
        assert_eq!(
            t.callback("demo-a", insurer, example(insurer, "pending"))
                .await
                .0,
            200
        );
    }
    let bodies: Vec<(String, String)> = o::table
        .order(o::id)
        .select((o::recipient, o::body))
        .load(&mut t.conn().await)
        .await
        .unwrap();
    // In Portuguese, with the insurer's name, the proposal and the tenant, and each thing the
    // insurer asks for on a line of its own.
    let pending = |insurer: &str, id: &str, asks: &[&str]| {
        let asks: String = asks.iter().map(|a| format!("- {a}\n")).collect();
        format!(
            "Olá,\n\nA seguradora {insurer} precisa de mais informações para concluir a análise da proposta {id} de seguro fiança locatícia:\n\n{asks}\nImobiliária Demo A vai orientar você sobre como enviar o que foi pedido. A análise continua assim que tudo chegar.\n\nAtenciosamente,\nImobiliária Demo A\n\nMensagem automática sobre a proposta {id}. Em caso de dúvida, fale com Imobiliária Demo A.\n"
        )
    };
    assert_eq!(
        bodies,
        vec![
            (
                "locatario.por-2026-000124@demo-a.example.com".into(),
                pending(
                    "Porto Seguro",
                    "POR-2026-000124",
                    &["Comprovante de renda ilegível"]
                )
            ),
            (
                "locatario.548813@demo-a.example.com".into(),
                pending("Tokio Marine", "548813", &["Pending: guarantor documents"])
            ),
            (
                "locatario.99121@demo-a.example.com".into(),
                pending(
                    "Too Seguros",
                    "99121",
                    &[
                        "Aguardando documentos",
                        "RG: Documento de identidade do fiador",
                        "IR: Declaração de imposto de renda"
                    ]
                )
            ),
        ]
    );
}

fn problem(status: u16, code: &str, detail: &str) -> Value {
    let title = actix_web::http::StatusCode::from_u16(status)
        .unwrap()
        .canonical_reason()
        .unwrap()
        .to_owned();
    json!({"type": format!("urn:problem-type:{code}"), "title": title, "status": status,
           "detail": detail, "code": code})
}

#[actix_web::test]
async fn every_row_of_the_status_table() {
    let t = TestApp::start().await;
    let porto = || example("porto", "approved");

    // 400 bad path parameter.
    let (s, b) = t.callback("demo%20a", "porto", porto()).await;
    let mut expected = problem(
        400,
        "invalid_parameter",
        "parameter `dsTenantId`: must be 1 to 64 of A-Z, a-z, 0-9, `_` and `-`",
    );
    expected["errors"] = json!([{"field": "dsTenantId", "message": "must be 1 to 64 of A-Z, a-z, 0-9, `_` and `-`"}]);
    assert_eq!((s, &b), (400, &expected));
    let (s, _) = t.callback(&"x".repeat(65), "porto", porto()).await;
    assert_eq!(s, 400);

    // 400 body not JSON.
    let (s, b) = t
        .callback("demo-a", "porto", b"{\"idProposta\": ".to_vec())
        .await;
    assert_eq!(
        (s, b["code"].as_str()),
        (400, Some("invalid_payload")),
        "{b}"
    );

    // 401 no token, a bad token, an expired one, an admin token.
    let path = "/callback/demo-a/porto";
    for token in [
        None,
        Some("junk".to_owned()),
        Some(expired(&t)),
        Some(t.admin("demo-a")),
    ] {
        let (s, b) = t
            .post(path, token.as_deref(), "application/json", porto())
            .await;
        assert_eq!(
            (s, b["code"].as_str()),
            (401, Some("unauthorized")),
            "{token:?}"
        );
    }

    // 403 a token of another tenant, and of another insurer.
    let (s, b) = t
        .post(
            path,
            Some(&t.bearer("demo-b", "porto")),
            "application/json",
            porto(),
        )
        .await;
    assert_eq!(
        (s, &b),
        (
            403,
            &problem(
                403,
                "forbidden",
                "this token belongs to another tenant or insurer"
            )
        )
    );
    let (s, _) = t
        .post(
            path,
            Some(&t.bearer("demo-a", "tokio")),
            "application/json",
            porto(),
        )
        .await;
    assert_eq!(s, 403);

    // 404 unknown insurer, and unknown proposal.
    let (s, b) = t.callback("demo-a", "allianz", porto()).await;
    assert_eq!(
        (s, &b),
        (
            404,
            &problem(
                404,
                "unknown_insurer",
                "no insurer is known by the identifier \"allianz\""
            )
        )
    );
    let (s, b) = t
        .callback(
            "demo-a",
            "porto",
            edited("porto", "approved", |v| v["idProposta"] = json!("NOPE-1")),
        )
        .await;
    assert_eq!(
        (s, &b),
        (
            404,
            &problem(
                404,
                "proposal_not_found",
                "no proposal \"NOPE-1\" for this tenant"
            )
        )
    );
    // A proposal of another tenant is not found either.
    let (s, b) = t.callback("demo-b", "porto", porto()).await;
    assert_eq!((s, b["code"].as_str()), (404, Some("proposal_not_found")));

    // 409 approved -> refused.
    assert_eq!(t.callback("demo-a", "porto", porto()).await.0, 200);
    let refuse = edited("porto", "refused", |v| {
        v["idProposta"] = json!("POR-2026-000123")
    });
    let (s, b) = t.callback("demo-a", "porto", refuse).await;
    assert_eq!(
        (s, &b),
        (
            409,
            &problem(
                409,
                "invalid_transition",
                "a callback cannot move a proposal from approved to refused"
            )
        )
    );

    // 413 over 64 KiB (valid JSON all the same).
    let mut big = edited("porto", "pending", |v| {
        v["padding"] = json!("x".repeat(64 * 1024))
    });
    let (s, b) = t
        .callback("demo-a", "porto", std::mem::take(&mut big))
        .await;
    assert_eq!((s, b["code"].as_str()), (413, Some("payload_too_large")));

    // 415 not application/json.
    let (s, b) = t
        .post(
            path,
            Some(&t.bearer("demo-a", "porto")),
            "text/plain",
            porto(),
        )
        .await;
    assert_eq!(
        (s, b["code"].as_str()),
        (415, Some("unsupported_media_type"))
    );

    // Nothing of the above touched the pending proposal.
    assert_eq!(
        t.proposal("demo-a", "POR-2026-000124").await.status,
        "under_analysis"
    );
}

fn expired(t: &TestApp) -> String {
    #[derive(serde::Serialize)]
    struct Claims<'a> {
        sub: &'a str,
        tenant: &'a str,
        insurer: &'a str,
        iat: i64,
        exp: i64,
    }
    let now = common::auth::now_secs();
    t.keys
        .issue(&Claims {
            sub: "1",
            tenant: "demo-a",
            insurer: "porto",
            iat: now - 7200,
            exp: now - 3600,
        })
        .unwrap()
}

/// 422 for each parser's broken variants: a missing essential field names it, a wrong shape
/// or an unknown outcome is `invalid_payload`.
#[actix_web::test]
async fn broken_payloads_of_each_insurer_are_422() {
    let t = TestApp::start().await;
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, &str, Edit, &str, &str)> = vec![
        (
            "porto",
            "approved",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("idProposta");
            }),
            "missing_field",
            "idProposta",
        ),
        (
            "porto",
            "approved",
            Box::new(|v| v["protocolo"] = json!(null)),
            "missing_field",
            "protocolo",
        ),
        (
            "porto",
            "approved",
            Box::new(|v| v["situacao"] = json!("CANCELADA")),
            "invalid_payload",
            "situacao",
        ),
        (
            "porto",
            "approved",
            Box::new(|v| v["idProposta"] = json!(123)),
            "invalid_payload",
            "idProposta",
        ),
        (
            "tokio",
            "approved",
            Box::new(|v| {
                v["data"]["proposal"].as_object_mut().unwrap().remove("id");
            }),
            "missing_field",
            "data.proposal.id",
        ),
        (
            "tokio",
            "approved",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("event_id");
            }),
            "missing_field",
            "event_id",
        ),
        (
            "tokio",
            "approved",
            Box::new(|v| v["data"]["result"]["code"] = json!(99)),
            "invalid_payload",
            "data.result.code",
        ),
        (
            "tokio",
            "approved",
            Box::new(|v| v["event"] = json!(null)),
            "missing_field",
            "event",
        ),
        (
            "too",
            "approved",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("numeroProposta");
            }),
            "missing_field",
            "numeroProposta",
        ),
        (
            "too",
            "approved",
            Box::new(|v| v["parecer"] = json!({})),
            "missing_field",
            "parecer.resultado",
        ),
        (
            "too",
            "approved",
            Box::new(|v| v["parecer"]["resultado"] = json!("Z")),
            "invalid_payload",
            "parecer.resultado",
        ),
        (
            "too",
            "approved",
            Box::new(|v| v["emitidoEm"] = json!("ontem")),
            "invalid_payload",
            "emitidoEm",
        ),
    ];
    for (insurer, outcome, edit, code, field) in cases {
        let (s, b) = t
            .callback("demo-a", insurer, edited(insurer, outcome, edit))
            .await;
        assert_eq!(
            (s, b["code"].as_str()),
            (422, Some(code)),
            "{insurer} {field}: {b}"
        );
        assert_eq!(b["errors"][0]["field"], field, "{b}");
    }
    // Unknown extra fields are ignored.
    let extra = edited("tokio", "approved", |v| v["data"]["novo"] = json!([1, 2]));
    assert_eq!(t.callback("demo-a", "tokio", extra).await.0, 200);
}

#[actix_web::test]
async fn metrics_count_per_tenant_insurer_and_outcome() {
    let t = TestApp::start().await;
    t.callback("demo-a", "too", example("too", "approved"))
        .await;
    t.callback("demo-a", "too", example("too", "approved"))
        .await;
    t.callback("demo-a", "too", b"nope".to_vec()).await;
    let text = t
        .client
        .get(format!("{}/metrics", t.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // The counter is process-wide and tests run in parallel: check it is exposed, labelled.
    for outcome in ["processed", "duplicate", "invalid_payload"] {
        let line = format!(
            "proposal_callback_callbacks_total{{insurer=\"too\",outcome=\"{outcome}\",tenant=\"demo-a\"}}"
        );
        assert!(text.contains(&line), "{line} in\n{text}");
    }
}

#[actix_web::test]
async fn openapi_documents_every_route() {
    let t = TestApp::start().await;
    let (s, doc) = t.get("/openapi.json", None).await;
    assert_eq!(s, 200);
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    for p in [
        "/callback/auth",
        "/callback/{dsTenantId}/{insuranceCompany}",
        "/admin/receipts",
        "/admin/receipts/{id}/replay",
        "/admin/integrations",
        "/admin/integrations/{id}/register-callback",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(paths.iter().any(|k| k.as_str() == p), "{p} in {paths:?}");
    }
    for schema in [
        "CallbackResult",
        "AccessToken",
        "ReceiptPage",
        "IntegrationView",
        "ProblemDocument",
    ] {
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{schema}"
        );
    }
}

/// The fixtures are the insurers' example payloads (docs/insurers.md): checked against the
/// originals when a copy of them is beside the checkout, skipped otherwise.
#[test]
fn fixtures_equal_the_shared_examples() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/insurers");
    if !shared.exists() {
        eprintln!("{} not found; skipping the comparison", shared.display());
        return;
    }
    for (insurer, outcome, _) in EXAMPLES {
        let theirs = std::fs::read(shared.join(insurer).join(format!("{outcome}.json"))).unwrap();
        assert_eq!(example(insurer, outcome), theirs, "{insurer}/{outcome}");
    }
}

/// A callback's statements, which diesel would not cache (the receipt's insert with the JWT's
/// check; the pause, the proposal's lock and the key; the transition's writes), are kept
/// prepared on the connection (`common::db::cached_by_text`): after three callbacks on a pool
/// of one connection, each is there once, so PostgreSQL parsed and planned it once
/// (docs/operations.md, bench/callback).
#[actix_web::test]
async fn a_callbacks_statements_are_prepared_once_per_connection() {
    use diesel::sql_types::{BigInt, Text};
    use diesel_async::RunQueryDsl;

    let pool = std::sync::Arc::new(std::sync::Mutex::new(None));
    let held = pool.clone();
    let t = TestApp::start_with_state(move |state| {
        state.pool.resize(1);
        *held.lock().unwrap() = Some(state.pool.clone());
        state
    })
    .await;
    for (outcome, id) in [
        ("approved", "POR-2026-000123"),
        ("pending", "POR-2026-000124"),
        ("refused", "POR-2026-000125"),
    ] {
        let (status, body) = t
            .callback("demo-a", "porto", example("porto", outcome))
            .await;
        assert_eq!(
            (status, body),
            (
                200,
                json!({"result": "processed", "proposal_id": id, "status": outcome})
            )
        );
    }

    #[derive(diesel::QueryableByName, Debug)]
    struct Prepared {
        #[diesel(sql_type = Text)]
        statement: String,
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let pool = pool.lock().unwrap().clone().unwrap();
    let mut conn = pool.get().await.unwrap();
    let prepared: Vec<Prepared> = diesel::sql_query(
        "SELECT left(statement, 40) AS statement, count(*) AS n FROM pg_prepared_statements \
         WHERE statement NOT LIKE '%pg_prepared_statements%' GROUP BY 1 ORDER BY 1",
    )
    .load(&mut *conn)
    .await
    .unwrap();
    let prepared: Vec<(&str, i64)> = prepared
        .iter()
        .map(|p| (p.statement.as_str(), p.n))
        .collect();
    // Every statement of a callback, each prepared once; the transition's writes too,
    // whatever the number of events (three for a pending proposal, four for a final status):
    // one array per column, one text.
    assert_eq!(
        prepared,
        [
            // The receipt, stored while the JWT's integration holds its live Basic token.
            (r#"INSERT INTO "proposal"."callback_receipt"#, 1),
            // The pause, the proposal's lock and the redelivery key.
            ("WITH i AS MATERIALIZED (\n    SELECT paus", 1),
            // The proposal, history, outbox, events and the receipt's outcome.
            ("WITH u AS (\n    UPDATE \"proposal\".\"propo", 1),
        ]
    );
}
