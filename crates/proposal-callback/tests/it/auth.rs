use serde_json::json;

use crate::support::{TestApp, read};

#[actix_web::test]
async fn basic_token_for_a_bearer_bound_to_its_integration() {
    let t = TestApp::start().await;
    let basic = t.basic_token("demo-a", "tokio");
    let res = t
        .client
        .post(format!("{}/callback/auth", t.base))
        .header("Authorization", format!("Basic {basic}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["cache-control"], "no-store");
    let (status, body) = read(res).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body.as_object().unwrap().len(), 3, "{body}");
    let claims: proposal_callback::auth::jwt::CallbackClaims = t
        .keys
        .verify(body["access_token"].as_str().unwrap())
        .unwrap();
    assert_eq!(claims.sub, t.integration_id("demo-a", "tokio").to_string());
    assert_eq!(
        (claims.tenant.as_str(), claims.insurer.as_str()),
        ("demo-a", "tokio")
    );
    assert_eq!(claims.exp - claims.iat, 3600);

    // The token it gave works on its own callback route and nowhere else.
    let jwt = body["access_token"].as_str().unwrap();
    let (s, _) = t
        .post(
            "/callback/demo-a/tokio",
            Some(jwt),
            "application/json",
            crate::support::example("tokio", "approved"),
        )
        .await;
    assert_eq!(s, 200);
    let (s, b) = t
        .post(
            "/callback/demo-a/porto",
            Some(jwt),
            "application/json",
            crate::support::example("porto", "approved"),
        )
        .await;
    assert_eq!((s, b["code"].as_str()), (403, Some("forbidden")));
}

#[actix_web::test]
async fn bad_tokens_are_401_and_repeated_failures_429() {
    let t = TestApp::start().await;
    let auth = |value: Option<String>| {
        let mut req = t.client.post(format!("{}/callback/auth", t.base));
        if let Some(v) = value {
            req = req.header("Authorization", v);
        }
        req
    };
    let (s, body) = read(auth(None).send().await.unwrap()).await;
    assert_eq!(s, 401);
    assert_eq!(
        body,
        json!({"type": "urn:problem-type:unauthorized", "title": "Unauthorized", "status": 401,
               "detail": "the Basic token is not valid", "code": "unauthorized"})
    );
    // A Bearer where a Basic is due, and a token of the right length but wrong.
    let (s, _) = read(
        auth(Some(format!("Bearer {}", t.basic_token("demo-a", "porto"))))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 401);
    for _ in 0..8 {
        let (s, _) = read(
            auth(Some(format!("Basic {}", "0".repeat(64))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(s, 401);
    }
    // The 11th failure within the window is refused before the token is even looked at,
    // including a right token: an attacker cannot tell a hit from the 429.
    let res = auth(Some(format!("Basic {}", "1".repeat(64))))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    let retry: u32 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    let (_, body) = read(res).await;
    assert_eq!(body["code"], "too_many_requests");
    let good = auth(Some(format!("Basic {}", t.basic_token("demo-a", "porto"))))
        .send()
        .await
        .unwrap();
    assert_eq!(good.status(), 429);
}

#[actix_web::test]
async fn a_rotated_token_no_longer_works() {
    let t = TestApp::start().await;
    let old = t.basic_token("demo-b", "too");
    let mut conn = t.conn().await;
    let report = proposal_callback::seed::run(&mut conn, true).await.unwrap();
    let new = report
        .integrations
        .iter()
        .find(|i| i.tenant == "demo-b" && i.insurer == "too")
        .and_then(|i| i.token.clone())
        .unwrap();
    let try_token = |tok: String| {
        t.client
            .post(format!("{}/callback/auth", t.base))
            .header("Authorization", format!("Basic {tok}"))
            .send()
    };
    assert_eq!(try_token(old).await.unwrap().status(), 401);
    assert_eq!(try_token(new).await.unwrap().status(), 200);
}

#[actix_web::test]
async fn seeding_twice_duplicates_nothing_and_prints_no_token_again() {
    let t = TestApp::start().await;
    let mut conn = t.conn().await;
    let again = proposal_callback::seed::run(&mut conn, false)
        .await
        .unwrap();
    assert_eq!(again.integrations.len(), 6);
    assert!(again.integrations.iter().all(|i| i.token.is_none()));
    let first: Vec<i64> = t.seed.integrations.iter().map(|i| i.id).collect();
    let second: Vec<i64> = again.integrations.iter().map(|i| i.id).collect();
    assert_eq!(first, second);
    assert_eq!(again.proposals.len(), 9);
    assert!(
        t.seed
            .integrations
            .iter()
            .all(|i| i.token.as_ref().is_some_and(|t| t.len() == 64))
    );
}
