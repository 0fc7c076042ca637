//! Tokens bound to this service (docs/dispatch-routes.md, "Authentication"): a token signed
//! with our secret is still refused when it was meant for another service, has no audience,
//! lives too long or was issued in the future; what the caller sees is a 401 naming the rule.
//! `serve` refuses the secrets published in the repository's examples.

use std::process::Stdio;
use std::time::Duration;

use common::auth::{JwtKeys, now_secs};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite;

use crate::support::{Api, SECRET};

/// Signs `claims` as they are with the servers' secret, as anyone holding it (another
/// service given the same secret, say) could.
fn forge(claims: Value) -> String {
    JwtKeys::lenient(&SecretString::from(SECRET))
        .issue(&claims)
        .unwrap()
}

/// The callback token proposal-callback gives an insurer (crates/proposal-callback/src/auth/
/// jwt.rs): its own audience, the integration id as `sub`, one hour.
fn callback_token(integration_id: i64) -> String {
    let now = now_secs();
    let day = Duration::from_secs(86_400);
    JwtKeys::new(&SecretString::from(SECRET), "proposal-callback", day)
        .issue(&json!({
            "sub": integration_id.to_string(),
            "tenant": "demo-a",
            "insurer": "porto",
            "iat": now,
            "exp": now + 3600,
        }))
        .unwrap()
}

/// The name `/shared/default-values` says the caller has.
async fn who(api: &Api, token: &str) -> crate::support::Reply {
    api.get_with_token(Some(token), "/shared/default-values")
        .await
}

#[actix_web::test]
async fn only_tokens_meant_for_this_service_name_a_caller() {
    let api = Api::new().await;
    let admin = api.id("admin");
    let now = now_secs();

    // The service's own token: the caller reads back its own name.
    let good = who(&api, &api.token("admin")).await;
    assert_eq!(
        good.ok()["user"],
        json!({"id": admin, "descriptive_name": "Ana Administradora"})
    );
    assert_eq!(good.body["profile"], "ADMIN");

    for (what, token, detail) in [
        (
            "an insurer's callback token naming the admin's id",
            callback_token(admin),
            "the token is meant for another audience than `dispatch-api`",
        ),
        (
            "no audience",
            forge(json!({"sub": admin.to_string(), "iat": now, "exp": now + 300})),
            "the token has no `aud` claim",
        ),
        (
            "an expiry in the year 9999",
            forge(
                json!({"sub": admin.to_string(), "aud": "dispatch-api", "iat": now,
                "exp": 253_402_300_799_i64}),
            ),
            "the token lives longer than the 43200 s allowed (`exp` - `iat`)",
        ),
        (
            "issued in an hour",
            forge(
                json!({"sub": admin.to_string(), "aud": "dispatch-api", "iat": now + 3600,
                "exp": now + 7200}),
            ),
            "the token was issued in the future (`iat`)",
        ),
        (
            "no issue time",
            forge(json!({"sub": admin.to_string(), "aud": "dispatch-api", "exp": now + 300})),
            "the token has no `iat` claim",
        ),
    ] {
        let reply = who(&api, &token).await;
        reply.problem(401, "unauthorized");
        assert_eq!(reply.body["detail"], detail, "{what}");
        assert!(reply.body.get("user").is_none(), "{what}: {}", reply.body);
    }

    // The same claims with our audience are fine: only the rule named above was at fault.
    let bound = forge(
        json!({"sub": admin.to_string(), "aud": "dispatch-api", "iat": now,
        "exp": now + 300}),
    );
    assert_eq!(who(&api, &bound).await.ok()["user"]["id"], admin);
    let authenticated = dispatch_api::auth::authenticate_with_expiry(api.state(), &bound)
        .await
        .unwrap();
    assert_eq!(
        (authenticated.user.id, authenticated.expires_at),
        (admin, now + 300)
    );
}

/// A token accepted once is accepted again on its exact bytes (`token_cache::VerifiedTokens`), and only
/// until its `exp`: after that it is verified again like any other, so refused once the clocks'
/// leeway has passed too.
#[actix_web::test]
async fn a_token_accepted_before_still_obeys_its_signature_and_its_expiry() {
    let api = Api::new().await;
    let (admin, tarm) = (api.id("admin"), api.id("tarm"));
    let now = now_secs();
    let claims = |sub: i64| json!({"sub": sub.to_string(), "aud": "dispatch-api", "iat": now, "exp": now + 1});
    let token = forge(claims(admin));
    for _ in 0..2 {
        assert_eq!(who(&api, &token).await.ok()["user"]["id"], admin);
    }

    // Another user's claims under the accepted token's signature.
    let other = forge(claims(tarm));
    let (_, signature) = token.rsplit_once('.').unwrap();
    let (claims_of_other, _) = other.rsplit_once('.').unwrap();
    let tampered = format!("{claims_of_other}.{signature}");
    let reply = who(&api, &tampered).await;
    reply.problem(401, "unauthorized");
    assert_eq!(reply.body["detail"], "the token is not valid");

    while now_secs() <= now + 1 + common::auth::LEEWAY_SECS as i64 {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let reply = who(&api, &token).await;
    reply.problem(401, "unauthorized");
    assert_eq!(reply.body["detail"], "the token has expired");
}

/// The status and problem body of a refused WebSocket handshake.
fn refused(result: Result<impl Sized, tungstenite::Error>) -> (u16, Value) {
    match result {
        Err(tungstenite::Error::Http(res)) => {
            let body = res.body().as_deref().unwrap_or_default();
            (res.status().as_u16(), serde_json::from_slice(body).unwrap())
        }
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(_) => panic!("the socket was opened"),
    }
}

#[actix_web::test]
async fn a_socket_is_refused_a_token_meant_for_another_service() {
    let api = Api::new().await;
    let url = |token: &str| format!("ws://{}/ws?access_token={token}", api.addr);
    let (status, body) =
        refused(tokio_tungstenite::connect_async(url(&callback_token(api.id("regulador")))).await);
    assert_eq!(status, 401);
    assert_eq!(
        body["detail"],
        "the token is meant for another audience than `dispatch-api`"
    );

    // The regulator's own token opens it, and the socket answers.
    let id = crate::browser::an_open_incident(&api).await;
    let answer = crate::support::subscribe_once(url(&api.token("regulador")), id).await;
    assert_eq!(
        (answer["type"].as_str(), answer["incident_id"].as_i64()),
        (Some("subscribed"), Some(id))
    );
}

#[actix_web::test]
async fn the_token_command_refuses_a_lifetime_over_the_maximum() {
    let api = Api::new().await;
    let token = |ttl: &str, max: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_dispatch-api"));
        cmd.args(["token", "--login", "tarm", "--ttl", ttl])
            .env("DATABASE_URL", api.db.url())
            .env("JWT_SECRET", SECRET)
            .env_remove("JWT_MAX_LIFETIME");
        if let Some(max) = max {
            cmd.env("JWT_MAX_LIFETIME", max);
        }
        cmd.output().unwrap()
    };
    let out = token("13h", None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("43200 s"), "{stderr}");
    // With a longer maximum configured, the same lifetime is issued and accepted.
    let out = token("13h", Some("1d"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let claims = crate::support::service_keys()
        .with_max_lifetime(Duration::from_secs(86_400))
        .verify_claims(String::from_utf8(out.stdout).unwrap().trim())
        .unwrap();
    assert_eq!(claims["aud"], "dispatch-api");
    assert_eq!(claims["sub"], api.id("tarm").to_string());
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        13 * 3600
    );
}

/// `serve` with `JWT_SECRET` = `secret` and `args`; its exit status and stderr when it stops
/// by itself, `None` when it is still running (listening) after it answered `/healthz`.
async fn serve(api: &Api, secret: &str, args: &[&str]) -> Option<(bool, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dispatch-api"))
        .arg("serve")
        .args(args)
        .env("DATABASE_URL", api.db.url())
        .env("JWT_SECRET", secret)
        .env("BIND", format!("127.0.0.1:{port}"))
        .env("LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let health = format!("http://127.0.0.1:{port}/healthz");
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            tokio::io::AsyncReadExt::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr)
                .await
                .unwrap();
            return Some((status.success(), stderr));
        }
        if reqwest::get(&health).await.is_ok_and(|r| r.status() == 200) {
            child.kill().await.unwrap();
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn serve_refuses_the_published_placeholder_secrets_unless_dev() {
    let api = Api::new().await;
    for placeholder in [
        "local-dev-only-dispatch-secret-change-me-0123456789",
        "REPLACE_ME-not-a-real-secret-generate-with-openssl-rand-base64-48",
    ] {
        let (ok, stderr) = serve(&api, placeholder, &[])
            .await
            .expect("serve must not start with a placeholder");
        assert!(!ok);
        assert!(
            stderr.contains("JWT_SECRET") && stderr.contains("placeholder"),
            "{stderr}"
        );
        assert!(!stderr.contains(placeholder), "the value is never printed");
    }
    // docker-compose runs `serve --dev` with its placeholder: allowed, and it listens.
    assert_eq!(
        serve(
            &api,
            "local-dev-only-dispatch-secret-change-me-0123456789",
            &["--dev"]
        )
        .await,
        None
    );
    // A generated secret (what `./dev up` makes) starts without --dev.
    assert_eq!(
        serve(&api, "q3JvZx0m5yq9cQ2Yt4mS7nKpV8wZ1bXe4uHj6LdRf0A", &[]).await,
        None
    );
}
