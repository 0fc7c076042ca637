//! `proposal-callback token --tenant T --admin`: the token an operator uses on the admin
//! routes, issued by the binary itself.

use std::process::{Command, Output};

use proposal_callback::auth::jwt::{ADMIN_AUDIENCE, admin_keys};
use serde_json::{Value, json};

use crate::support::{SECRET, TestApp};

fn token_command(t: &TestApp, args: &[&str], secret: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_proposal-callback"));
    cmd.arg("token")
        .args(args)
        .env("DATABASE_URL", t.db.url())
        .env_remove("JWT_SECRET")
        .env_remove("JWT_SECRET_FILE");
    if let Some(s) = secret {
        cmd.env("JWT_SECRET", s);
    }
    cmd.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[actix_web::test]
async fn the_cli_token_reaches_its_tenants_integrations_and_no_others() {
    let t = TestApp::start().await;
    let out = token_command(
        &t,
        &["--tenant", "demo-b", "--admin", "--ttl", "1h"],
        Some(SECRET),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let token = String::from_utf8(out.stdout).unwrap().trim().to_owned();

    // What the token says: an admin of demo-b, for the admin audience, for one hour.
    let claims: Value = admin_keys(&t.keys).verify(&token).unwrap();
    assert_eq!(claims["aud"], ADMIN_AUDIENCE);
    assert_eq!(claims["role"], "admin");
    assert_eq!(claims["tenant"], "demo-b");
    assert_eq!(claims["sub"], "administrador");
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        3600
    );

    // It opens demo-b's integrations, and only those.
    let (s, body) = t.get("/admin/integrations", Some(&token)).await;
    assert_eq!(s, 200, "{body}");
    let expected: Vec<Value> = t
        .seed
        .integrations
        .iter()
        .filter(|i| i.tenant == "demo-b")
        .map(|i| {
            json!({
                "id": i.id,
                "insurer": i.insurer,
                "environment": "homologation",
                "is_callback_active": false,
                "callback_registered_at": null,
                "paused_at": null,
                "last_registration": null,
                "last_callback_at": null,
                "silent_since": null,
                "silence_threshold_seconds": null,
            })
        })
        .collect();
    assert_eq!(body, Value::Array(expected));
    // Another tenant's receipt is not its business.
    let (s, _) = t.get("/admin/receipts", Some(&token)).await;
    assert_eq!(s, 200);
    let (s, b) = t.get("/admin/proposals/99121", Some(&token)).await;
    assert_eq!((s, b["code"].as_str()), (404, Some("proposal_not_found")));
}

#[actix_web::test]
async fn the_cli_refuses_what_the_service_would_refuse() {
    let t = TestApp::start().await;
    // Longer than the service accepts.
    let out = token_command(
        &t,
        &["--tenant", "demo-a", "--admin", "--ttl", "25h"],
        Some(SECRET),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--ttl must be between 1m and 24h"),
        "{}",
        stderr(&out)
    );
    // A tenant that does not exist.
    let out = token_command(&t, &["--tenant", "demo-z", "--admin"], Some(SECRET));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no tenant \"demo-z\""),
        "{}",
        stderr(&out)
    );
    // No secret and no --dev.
    let out = token_command(&t, &["--tenant", "demo-a", "--admin"], None);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("JWT_SECRET"), "{}", stderr(&out));
    // Only admin tokens: --admin is required.
    let out = token_command(&t, &["--tenant", "demo-a"], Some(SECRET));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--admin"), "{}", stderr(&out));
    // With --dev and no secret: a token of the development key, which `serve --dev` accepts.
    let out = token_command(&t, &["--tenant", "demo-a", "--admin", "--dev"], None);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[actix_web::test]
async fn an_admin_token_whose_tenant_or_sub_holds_a_control_character_is_401() {
    let t = TestApp::start().await;
    let now = common::auth::now_secs();
    let token = |sub: &str, tenant: &str| {
        admin_keys(&t.keys)
            .issue(&json!({"sub": sub, "tenant": tenant, "role": "admin", "iat": now, "exp": now + 300}))
            .unwrap()
    };
    for (sub, tenant, claim) in [
        ("ops", "demo-a\u{0}", "tenant"),
        ("ops", "\u{0}", "tenant"),
        ("ops\u{0}", "demo-a", "sub"),
        ("ops\nlevel=ERROR forged line", "demo-a", "sub"),
        ("ops", "demo-a\r\n", "tenant"),
    ] {
        for path in [
            "/admin/integrations",
            "/admin/receipts",
            "/admin/proposals/99121",
        ] {
            let (s, b) = t.get(path, Some(&token(sub, tenant))).await;
            assert_eq!(
                (s, b["code"].as_str(), b["detail"].as_str()),
                (
                    401,
                    Some("unauthorized"),
                    Some(format!("the token's `{claim}` claim is malformed").as_str())
                ),
                "{path} {sub:?} {tenant:?}: {b}"
            );
        }
        // A write that records who asked (RegisterCallback) is refused the same way.
        let (s, b) = t
            .post(
                &format!(
                    "/admin/integrations/{}/pause",
                    t.integration_id("demo-a", "porto")
                ),
                Some(&token(sub, tenant)),
                "application/json",
                vec![],
            )
            .await;
        assert_eq!((s, b["code"].as_str()), (401, Some("unauthorized")), "{b}");
    }
    let (s, _) = t
        .get("/admin/integrations", Some(&token("ops", "demo-a")))
        .await;
    assert_eq!(s, 200);
}

#[actix_web::test]
async fn an_admin_token_whose_header_carries_crit_is_401() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let t = TestApp::start().await;
    let now = common::auth::now_secs();
    let claims = json!({
        "sub": "ops", "tenant": "demo-a", "role": "admin", "aud": ADMIN_AUDIENCE,
        "iat": now, "exp": now + 300,
    });
    let sign = |header: &Header| {
        jsonwebtoken::encode(
            header,
            &claims,
            &EncodingKey::from_secret(SECRET.as_bytes()),
        )
        .unwrap()
    };
    for crit in [json!(["x-must"]), json!(["b64"])] {
        let mut header = Header::new(Algorithm::HS256);
        header.extras.insert("crit", crit.clone());
        let (s, b) = t.get("/admin/integrations", Some(&sign(&header))).await;
        assert_eq!(
            (s, b["code"].as_str(), b["detail"].as_str()),
            (
                401,
                Some("unauthorized"),
                Some(
                    "the token's header names critical extensions (`crit`) this service does not understand"
                )
            ),
            "{crit}: {b}"
        );
    }
    let (s, _) = t
        .get(
            "/admin/integrations",
            Some(&sign(&Header::new(Algorithm::HS256))),
        )
        .await;
    assert_eq!(s, 200);
}
