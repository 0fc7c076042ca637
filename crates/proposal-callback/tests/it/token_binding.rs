//! Tokens bound to their kind and to the integration's live Basic token.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::auth::jwt;
use proposal_callback::schema::proposal::tokens;
use proposal_callback::store::integrations;
use serde_json::json;

use crate::support::{TestApp, example};

/// A callback JWT for the seeded integration, issued `ago` seconds ago.
fn issued_ago(t: &TestApp, insurer: &str, ago: i64) -> String {
    let now = common::auth::now_secs();
    t.keys
        .issue(&json!({
            "sub": t.integration_id("demo-a", insurer).to_string(),
            "tenant": "demo-a",
            "insurer": insurer,
            "iat": now - ago,
            "exp": now - ago + 3600,
        }))
        .unwrap()
}

/// Dates the seeded tokens' activation an hour back, so a JWT issued a few seconds ago was
/// issued while they were live (no waiting on the clock).
async fn age_tokens(t: &TestApp) {
    diesel::update(tokens::table)
        .set(tokens::activated_at.eq(diesel::dsl::sql::<
            diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>,
        >("now() - interval '1 hour'")))
        .execute(&mut *t.conn().await)
        .await
        .unwrap();
}

async fn post_callback(t: &TestApp, insurer: &str, token: &str) -> (u16, serde_json::Value) {
    t.post(
        &format!("/callback/demo-a/{insurer}"),
        Some(token),
        "application/json",
        example(insurer, "pending"),
    )
    .await
}

#[actix_web::test]
async fn a_jwt_issued_before_the_basic_token_was_rotated_is_refused() {
    let t = TestApp::start().await;
    age_tokens(&t).await;
    let old = issued_ago(&t, "porto", 10);
    let earlier = crate::support::edited("porto", "approved", |v| {
        v["idProposta"] = json!("POR-2026-000125")
    });
    let (s, b) = t
        .post(
            "/callback/demo-a/porto",
            Some(&old),
            "application/json",
            earlier,
        )
        .await;
    assert_eq!((s, b["result"].as_str()), (200, Some("processed")), "{b}");
    {
        let mut conn = t.conn().await;
        let hash = proposal_callback::domain::basic_token::token_hash("a-brand-new-token");
        integrations::rotate_token(&mut conn, t.integration_id("demo-a", "porto"), &hash)
            .await
            .unwrap();
    }
    let before = t.proposal("demo-a", "POR-2026-000124").await;
    let (s, b) = post_callback(&t, "porto", &old).await;
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")), "{b}");
    assert!(
        b["detail"]
            .as_str()
            .unwrap()
            .contains("revoked or replaced"),
        "{b}"
    );
    assert_eq!(t.proposal("demo-a", "POR-2026-000124").await, before);
    // A JWT from the new Basic token works.
    let res = t
        .client
        .post(format!("{}/callback/auth", t.base))
        .header("Authorization", "Basic a-brand-new-token")
        .send()
        .await
        .unwrap();
    let (s, fresh) = crate::support::read(res).await;
    assert_eq!(s, 200);
    let (s, b) = post_callback(&t, "porto", fresh["access_token"].as_str().unwrap()).await;
    assert_eq!((s, b["result"].as_str()), (200, Some("processed")), "{b}");
}

#[actix_web::test]
async fn a_jwt_of_a_deactivated_integration_is_refused() {
    let t = TestApp::start().await;
    age_tokens(&t).await;
    let jwt = issued_ago(&t, "tokio", 10);
    let (s, _) = post_callback(&t, "tokio", &jwt).await;
    assert_eq!(s, 200);
    // Deactivated: its live token revoked, none in its place.
    diesel::update(
        tokens::table.filter(tokens::integration_id.eq(t.integration_id("demo-a", "tokio"))),
    )
    .set(tokens::revoked_at.eq(diesel::dsl::now))
    .execute(&mut *t.conn().await)
    .await
    .unwrap();
    let again = edited_event(&t);
    let (s, b) = t
        .post(
            "/callback/demo-a/tokio",
            Some(&jwt),
            "application/json",
            again,
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")), "{b}");
    // Nothing stored for a refused token.
    let receipts: i64 = proposal_callback::schema::proposal::callback_receipts::table
        .count()
        .get_result(&mut *t.conn().await)
        .await
        .unwrap();
    assert_eq!(receipts, 1);
    assert_eq!(t.proposal("demo-a", "548813").await.status, "pending");
}

fn edited_event(_: &TestApp) -> Vec<u8> {
    crate::support::edited("tokio", "approved", |v| {
        v["data"]["proposal"]["id"] = json!("548813");
        v["sent_at"] = json!(1_763_659_000);
    })
}

/// A token whose claims would do for both kinds is only the kind its audience says.
#[actix_web::test]
async fn a_callback_jwt_is_not_an_admin_token_and_back() {
    let t = TestApp::start().await;
    let now = common::auth::now_secs();
    let claims = json!({
        "sub": t.integration_id("demo-a", "porto").to_string(),
        "tenant": "demo-a", "insurer": "porto", "role": "admin",
        "iat": now, "exp": now + 600,
    });
    let as_callback = t.keys.issue(&claims).unwrap();
    let as_admin = jwt::admin_keys(&t.keys).issue(&claims).unwrap();
    let (s, _) = t.get("/admin/receipts", Some(&as_admin)).await;
    assert_eq!(s, 200);
    let (s, b) = t.get("/admin/receipts", Some(&as_callback)).await;
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")));
    let (s, b) = post_callback(&t, "porto", &as_admin).await;
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")));
    let (s, b) = post_callback(&t, "porto", &as_callback).await;
    assert_eq!((s, b["result"].as_str()), (200, Some("processed")));
    // A token for dispatch-api, on the same secret, is neither.
    let dispatch = common::auth::JwtKeys::new(
        &secrecy::SecretString::from(crate::support::SECRET),
        "dispatch-api",
        std::time::Duration::from_secs(12 * 3600),
    )
    .issue(&claims)
    .unwrap();
    assert_eq!(post_callback(&t, "porto", &dispatch).await.0, 401);
    assert_eq!(t.get("/admin/receipts", Some(&dispatch)).await.0, 401);
}

async fn receipts_count(t: &TestApp) -> i64 {
    proposal_callback::schema::proposal::callback_receipts::table
        .count()
        .get_result(&mut *t.conn().await)
        .await
        .unwrap()
}

/// A token is bound to the integration it was issued for: demo-b's porto token opens neither
/// demo-a's porto path nor demo-b's tokio path (403, as the contract says for a token of
/// another tenant or insurer), and one signed with demo-a in its `tenant` but demo-b's
/// integration as its `sub` is refused too (401): nothing is stored for any of them.
#[actix_web::test]
async fn a_token_opens_only_the_integration_it_was_issued_for() {
    let t = TestApp::start().await;
    age_tokens(&t).await;
    let (s, issued) = crate::support::read(
        t.client
            .post(format!("{}/callback/auth", t.base))
            .header(
                "Authorization",
                format!("Basic {}", t.basic_token("demo-b", "porto")),
            )
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{issued}");
    let demo_b_porto = issued["access_token"].as_str().unwrap().to_owned();
    let before = t.proposal("demo-a", "POR-2026-000124").await;
    for (path, insurer) in [
        ("/callback/demo-a/porto", "porto"),
        ("/callback/demo-b/tokio", "tokio"),
    ] {
        let (s, b) = t
            .post(
                path,
                Some(&demo_b_porto),
                "application/json",
                example(insurer, "approved"),
            )
            .await;
        assert_eq!(
            (s, b["code"].as_str()),
            (403, Some("forbidden")),
            "{path}: {b}"
        );
        assert!(
            b["detail"]
                .as_str()
                .unwrap()
                .contains("another tenant or insurer"),
            "{b}"
        );
    }
    // Validly signed, naming demo-a and porto, but issued for demo-b's integration.
    let now = common::auth::now_secs();
    let rebound = t
        .keys
        .issue(&json!({
            "sub": t.integration_id("demo-b", "porto").to_string(),
            "tenant": "demo-a", "insurer": "porto",
            "iat": now, "exp": now + 600,
        }))
        .unwrap();
    let (s, b) = t
        .post(
            "/callback/demo-a/porto",
            Some(&rebound),
            "application/json",
            example("porto", "approved"),
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")), "{b}");
    assert!(
        b["detail"]
            .as_str()
            .unwrap()
            .contains("not issued for this tenant's integration"),
        "{b}"
    );
    // demo-b's token with its `tenant` edited to demo-a: its signature no longer holds.
    let mut parts: Vec<String> = demo_b_porto.split('.').map(str::to_owned).collect();
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut claims: serde_json::Value =
        serde_json::from_slice(&b64.decode(&parts[1]).unwrap()).unwrap();
    claims["tenant"] = json!("demo-a");
    parts[1] = b64.encode(serde_json::to_vec(&claims).unwrap());
    let (s, b) = t
        .post(
            "/callback/demo-a/porto",
            Some(&parts.join(".")),
            "application/json",
            example("porto", "approved"),
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")), "{b}");
    assert_eq!(receipts_count(&t).await, 0);
    assert_eq!(t.proposal("demo-a", "POR-2026-000124").await, before);
    // The token does open its own integration.
    let (s, b) = t
        .post(
            "/callback/demo-b/porto",
            Some(&demo_b_porto),
            "application/json",
            example("porto", "approved"),
        )
        .await;
    assert!(s == 200 || s == 404, "{s} {b}");
    assert_eq!(receipts_count(&t).await, 1);
}

/// The integration id in `sub` is read only in its canonical decimal form.
#[actix_web::test]
async fn a_callback_token_whose_sub_is_not_canonical_is_refused_naming_sub() {
    let t = TestApp::start().await;
    age_tokens(&t).await;
    let id = t.integration_id("demo-a", "porto");
    let now = common::auth::now_secs();
    let token = |sub: String| {
        t.keys
            .issue(&json!({
                "sub": sub, "tenant": "demo-a", "insurer": "porto",
                "iat": now, "exp": now + 600,
            }))
            .unwrap()
    };
    for sub in [
        format!("0{id}"),
        format!("+{id}"),
        format!(" {id}"),
        format!("{id} "),
    ] {
        let (s, b) = post_callback(&t, "porto", &token(sub.clone())).await;
        assert_eq!(
            (s, b["code"].as_str()),
            (401, Some("unauthorized")),
            "{sub:?}: {b}"
        );
        assert_eq!(
            b["detail"], "the token's `sub` claim is malformed",
            "{sub:?}"
        );
    }
    assert_eq!(receipts_count(&t).await, 0);
    let (s, b) = post_callback(&t, "porto", &token(id.to_string())).await;
    assert_eq!((s, b["result"].as_str()), (200, Some("processed")), "{b}");
    assert_eq!(
        t.proposal("demo-a", "POR-2026-000124").await.status,
        "pending"
    );
}

/// The admin token's tenant is taken exactly as the callback URL spells it: `DEMO-A` opens
/// nothing of demo-a's, and a tenant with a space is a malformed token.
#[actix_web::test]
async fn an_admin_tokens_tenant_is_matched_exactly() {
    let t = TestApp::start().await;
    let (s, b) = t.get("/admin/tenant", Some(&t.admin("demo-a"))).await;
    assert_eq!((s, b["id"].as_str()), (200, Some("demo-a")), "{b}");
    let (s, b) = t.get("/admin/tenant", Some(&t.admin("DEMO-A"))).await;
    assert_eq!((s, b["code"].as_str()), (404, Some("not_found")), "{b}");
    let (s, b) = t.get("/admin/receipts", Some(&t.admin("DEMO-A"))).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["items"].as_array().map(Vec::len), Some(0), "{b}");
    for tenant in ["demo-a ", " demo-a", "demo a"] {
        let (s, b) = t.get("/admin/tenant", Some(&t.admin(tenant))).await;
        assert_eq!(
            (s, b["code"].as_str()),
            (401, Some("unauthorized")),
            "{tenant:?}: {b}"
        );
        assert_eq!(b["detail"], "the token's `tenant` claim is malformed");
    }
}
