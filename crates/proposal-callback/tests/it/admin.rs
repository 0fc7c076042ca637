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
        chrono::Utc::now(),
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

/// `prune` deletes the receipts older than the cutoff, a batch at a time, and only those; what
/// a deleted receipt led to (history, events, the applied key) stays, its reference nulled.
#[actix_web::test]
async fn prune_deletes_old_receipts_only_in_batches() {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use proposal_callback::schema::proposal::{
        applied_callbacks as a, callback_receipts as r, integration_history as h,
        proposal_events as e,
    };
    let t = TestApp::start().await;
    for _ in 0..3 {
        assert_eq!(t.callback("demo-a", "too", b"junk".to_vec()).await.0, 400);
    }
    let approved = crate::support::example("too", "approved");
    assert_eq!(t.callback("demo-a", "too", approved).await.0, 200);
    let mut conn = t.conn().await;
    let old: Vec<i64> = r::table
        .select(r::id)
        .order(r::id)
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(old.len(), 4);
    diesel::update(r::table.filter(r::id.eq_any(&old)))
        .set(r::received_at.eq(chrono::Utc::now() - chrono::Duration::days(91)))
        .execute(&mut conn)
        .await
        .unwrap();
    // A receipt of today stays.
    assert_eq!(t.callback("demo-a", "too", b"junk".to_vec()).await.0, 400);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .args(["prune", "--older-than", "90d", "--batch", "3"])
        .env("DATABASE_URL", t.db.url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&report["deleted_receipts"], &report["batches"]),
        (&serde_json::json!(4), &serde_json::json!(2)),
        "{report}"
    );
    let left: Vec<i64> = r::table.select(r::id).load(&mut conn).await.unwrap();
    assert_eq!(left.len(), 1);
    assert!(!old.contains(&left[0]));
    // The applied callback's history, events and key survive their receipt.
    assert_eq!(t.proposal("demo-a", "99120").await.history.len(), 1);
    let dangling = |n: i64| assert_eq!(n, 0);
    dangling(
        h::table
            .filter(h::receipt_id.is_not_null())
            .count()
            .get_result(&mut conn)
            .await
            .unwrap(),
    );
    dangling(
        e::table
            .filter(e::receipt_id.eq_any(&old))
            .count()
            .get_result(&mut conn)
            .await
            .unwrap(),
    );
    let keys: Vec<Option<i64>> = a::table
        .select(a::receipt_id)
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(keys, vec![None]);
}

#[actix_web::test]
async fn prune_refuses_a_batch_of_zero() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .args(["prune", "--older-than", "90d", "--batch", "0"])
        .env("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--batch"), "{stderr}");
}
