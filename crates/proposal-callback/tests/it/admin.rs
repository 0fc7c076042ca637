use serde_json::json;

use crate::support::{TestApp, edited, strings};

#[actix_web::test]
async fn a_failed_callback_is_stored_and_replayed_once_the_proposal_exists() {
    let t = TestApp::start().await;
    let body = edited("porto", "approved", |v| {
        v["idProposta"] = json!("POR-NEW-1")
    });
    let (s, _) = t.callback("demo-a", "porto", body.clone()).await;
    assert_eq!(s, 404);

    let admin = t.admin("demo-a");
    let (s, page) = t.get("/admin/receipts?status=failed", Some(&admin)).await;
    assert_eq!(s, 200, "{page}");
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    let r = &items[0];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["http_status"], 404);
    assert_eq!(r["error_code"], "proposal_not_found");
    assert_eq!(r["proposal_id"], "POR-NEW-1");
    assert_eq!(r["insurer"], "porto");
    assert_eq!(r["attempts"], 1);
    // The body exactly as received, and the headers that matter (never Authorization).
    assert_eq!(r["body"].as_str().unwrap().as_bytes(), body.as_slice());
    assert_eq!(r["headers"]["content-type"], "application/json");
    assert_eq!(r["headers"]["peer_addr"], "127.0.0.1");
    assert!(r["headers"].get("authorization").is_none());
    let id = r["id"].as_i64().unwrap();

    // Another tenant's admin sees nothing of it and cannot replay it.
    let (_, other) = t.get("/admin/receipts", Some(&t.admin("demo-b"))).await;
    assert_eq!(other["items"], json!([]));
    let (s, b) = t
        .post(
            &format!("/admin/receipts/{id}/replay"),
            Some(&t.admin("demo-b")),
            "application/json",
            vec![],
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (404, Some("not_found")));

    // Replayed before the proposal exists: the same 404, recorded again.
    let replay = format!("/admin/receipts/{id}/replay");
    let (s, b) = t
        .post(&replay, Some(&admin), "application/json", vec![])
        .await;
    assert_eq!((s, b["code"].as_str()), (404, Some("proposal_not_found")));

    // The proposal is created; the replay now applies it, once.
    proposal_callback::store::proposals::insert_if_absent(
        &mut *t.conn().await,
        "demo-a",
        "POR-NEW-1",
        "x@example.com",
    )
    .await
    .unwrap();
    let (s, b) = t
        .post(&replay, Some(&admin), "application/json", vec![])
        .await;
    assert_eq!(
        (s, b),
        (
            200,
            json!({"result": "processed", "proposal_id": "POR-NEW-1", "status": "approved"})
        )
    );
    let (s, b) = t
        .post(&replay, Some(&admin), "application/json", vec![])
        .await;
    assert_eq!((s, b["result"].as_str()), (200, Some("duplicate")));
    let p = t.proposal("demo-a", "POR-NEW-1").await;
    assert_eq!(p.history, strings(&["under_analysis->approved"]));
    assert_eq!(p.emails.len(), 1);

    // The insurer's own redelivery of it is a duplicate as well.
    assert_eq!(
        t.callback("demo-a", "porto", body).await.1["result"],
        "duplicate"
    );

    let (_, failed) = t.get("/admin/receipts?status=failed", Some(&admin)).await;
    assert_eq!(failed["items"], json!([]));
    let (_, all) = t.get("/admin/receipts?limit=1", Some(&admin)).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1);
    assert_eq!(all["items"][0]["status"], "duplicate");
    let next = all["next_before_id"].as_i64().unwrap();
    let (_, rest) = t
        .get(&format!("/admin/receipts?before_id={next}"), Some(&admin))
        .await;
    assert_eq!(
        rest["items"][0]["status"], "duplicate",
        "the replayed receipt answered duplicate last"
    );
    assert_eq!(rest["items"][0]["attempts"], 4);
}

#[actix_web::test]
async fn admin_routes_need_an_admin_token_and_valid_parameters() {
    let t = TestApp::start().await;
    let (s, _) = t.get("/admin/receipts", None).await;
    assert_eq!(s, 401);
    // A callback token is not an admin token.
    let (s, _) = t
        .get("/admin/receipts", Some(&t.bearer("demo-a", "porto")))
        .await;
    assert_eq!(s, 401);
    #[derive(serde::Serialize)]
    struct NotAdmin<'a> {
        sub: &'a str,
        tenant: &'a str,
        role: &'a str,
        exp: i64,
    }
    let viewer = proposal_callback::auth::jwt::admin_keys(&t.keys)
        .issue(&NotAdmin {
            sub: "v",
            tenant: "demo-a",
            role: "viewer",
            exp: common::auth::now_secs() + 60,
        })
        .unwrap();
    let (s, b) = t.get("/admin/receipts", Some(&viewer)).await;
    assert_eq!((s, b["code"].as_str()), (403, Some("forbidden")));
    let admin = t.admin("demo-a");
    let (s, b) = t.get("/admin/receipts?status=lost", Some(&admin)).await;
    assert_eq!((s, b["errors"][0]["field"].as_str()), (400, Some("status")));
    let (s, b) = t.get("/admin/receipts?limit=0", Some(&admin)).await;
    assert_eq!((s, b["errors"][0]["field"].as_str()), (400, Some("limit")));
    let (s, b) = t
        .post(
            "/admin/receipts/abc/replay",
            Some(&admin),
            "application/json",
            vec![],
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (400, Some("invalid_parameter")));
}

#[actix_web::test]
async fn prune_deletes_old_receipts_only() {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use proposal_callback::schema::proposal::callback_receipts as r;
    let t = TestApp::start().await;
    assert_eq!(t.callback("demo-a", "too", b"junk".to_vec()).await.0, 400);
    assert_eq!(
        t.callback("demo-a", "too", crate::support::example("too", "approved"))
            .await
            .0,
        200
    );
    let mut conn = t.conn().await;
    let oldest: i64 = r::table
        .select(diesel::dsl::min(r::id))
        .first::<Option<i64>>(&mut conn)
        .await
        .unwrap()
        .unwrap();
    diesel::update(r::table.find(oldest))
        .set(r::received_at.eq(chrono::Utc::now() - chrono::Duration::days(91)))
        .execute(&mut conn)
        .await
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .args(["prune", "--older-than", "90d"])
        .env("DATABASE_URL", t.db.url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["deleted_receipts"], 1);
    let left: Vec<i64> = r::table.select(r::id).load(&mut conn).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_ne!(left[0], oldest);
    // The applied callback's history survives its receipt.
    assert_eq!(t.proposal("demo-a", "99120").await.history.len(), 1);
}
