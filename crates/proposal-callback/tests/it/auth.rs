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
    let options = proposal_callback::seed::SeedOptions {
        rotate_tokens: true,
        ..crate::support::BARE
    };
    let report = proposal_callback::seed::run(&mut conn, &common::Clock::system(), options)
        .await
        .unwrap();
    let new = report
        .integrations
        .iter()
        .find(|i| i.tenant == "demo-b" && i.insurer.as_str() == "too")
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
    let again =
        proposal_callback::seed::run(&mut conn, &common::Clock::system(), crate::support::BARE)
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

/// Brute-force protection behind an ingress (docs/proposal-callback.md, "Authentication").
mod limiter {
    use common::db;
    use diesel::prelude::*;
    use diesel::sql_types::{Integer, Text};
    use diesel_async::RunQueryDsl;
    use proposal_callback::ratelimit::TrustedProxies;
    use proposal_callback::registration::config::RegistrationConfig;
    use proposal_callback::startup;

    use crate::support::{TestApp, keys, read, serve};

    /// Another replica of the service over `t`'s database, reading `X-Forwarded-For` from
    /// `proxies` (the test's own address is 127.0.0.1).
    fn replica(t: &TestApp, proxies: &str) -> (String, actix_web::dev::ServerHandle) {
        let pool = db::pool(t.db.url(), &proposal_callback::SKELETON.pool_settings(4)).unwrap();
        let state = startup::state(pool, keys(), RegistrationConfig::default())
            .unwrap()
            .with_trusted_proxies(TrustedProxies::parse(proxies).unwrap());
        serve(state)
    }

    /// `/callback/auth` on `base` with `token` (Basic) and an `X-Forwarded-For`; status and
    /// `Retry-After`.
    async fn attempt(
        t: &TestApp,
        base: &str,
        token: &str,
        forwarded: Option<&str>,
    ) -> (u16, Option<u32>) {
        let mut req = t
            .client
            .post(format!("{base}/callback/auth"))
            .header("Authorization", format!("Basic {token}"));
        if let Some(f) = forwarded {
            req = req.header("X-Forwarded-For", f);
        }
        let res = req.send().await.unwrap();
        let retry = res
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().parse().unwrap());
        let (status, body) = read(res).await;
        match status {
            200 => assert!(body["access_token"].is_string(), "{body}"),
            401 => assert_eq!(body["code"], "unauthorized", "{body}"),
            429 => assert_eq!(body["code"], "too_many_requests", "{body}"),
            _ => panic!("{status}: {body}"),
        }
        (status, retry)
    }

    #[derive(QueryableByName, Debug, PartialEq)]
    struct Row {
        #[diesel(sql_type = Text)]
        client: String,
        #[diesel(sql_type = Integer)]
        failures: i32,
    }

    /// The failure counts, by client.
    async fn counts(t: &TestApp) -> Vec<(String, i32)> {
        diesel::sql_query("SELECT client, failures FROM proposal.auth_failures ORDER BY client")
            .load::<Row>(&mut t.conn().await)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.client, r.failures))
            .collect()
    }

    const WRONG: &str = "0000000000000000000000000000000000000000000000000000000000000000";

    #[actix_web::test]
    async fn one_forwarded_client_is_blocked_while_another_behind_the_same_proxy_gets_in() {
        let t = TestApp::start().await;
        let (base, _server) = replica(&t, "127.0.0.1/32, 10.0.0.0/8");
        let good = t.basic_token("demo-a", "porto");
        // One client behind the ingress (10.0.0.2), writing a new left-most entry each time:
        // the ingress appends what it saw, and that is what is counted.
        let mut statuses = Vec::new();
        for i in 0..20 {
            let xff = format!("192.0.2.{i}, 198.51.100.7, 10.0.0.2");
            statuses.push(attempt(&t, &base, WRONG, Some(&xff)).await);
        }
        assert!(
            statuses[..10].iter().all(|s| *s == (401, None)),
            "{statuses:?}"
        );
        for (status, retry) in &statuses[10..] {
            assert_eq!(*status, 429, "{statuses:?}");
            assert!(retry.is_some_and(|r| (1..=60).contains(&r)), "{statuses:?}");
        }
        // Its right token is refused too: a hit cannot be told from the 429.
        assert_eq!(
            attempt(&t, &base, &good, Some("198.51.100.7, 10.0.0.2"))
                .await
                .0,
            429
        );
        // Another insurer behind the same ingress gets its token.
        assert_eq!(
            attempt(&t, &base, &good, Some("203.0.113.50, 10.0.0.2"))
                .await
                .0,
            200
        );
        // Counted per forwarded client; refused attempts are not counted again.
        assert_eq!(counts(&t).await, vec![("198.51.100.7".to_owned(), 10)]);
    }

    #[actix_web::test]
    async fn without_trusted_proxies_a_forged_header_changes_nothing() {
        let t = TestApp::start().await;
        for i in 0..10 {
            let xff = format!("198.51.100.{i}");
            assert_eq!(attempt(&t, &t.base, WRONG, Some(&xff)).await.0, 401);
        }
        // A fresh forged address and a right token: still the same peer, still blocked.
        let good = t.basic_token("demo-a", "porto");
        assert_eq!(
            attempt(&t, &t.base, &good, Some("203.0.113.99")).await.0,
            429
        );
        assert_eq!(counts(&t).await, vec![("127.0.0.1".to_owned(), 10)]);
    }

    #[actix_web::test]
    async fn a_success_does_not_wipe_earlier_failures() {
        let t = TestApp::start().await;
        let good = t.basic_token("demo-b", "tokio");
        // Nine wrong then one right, ten times over, unless refused first.
        let mut log = Vec::new();
        'cycles: for _ in 0..10 {
            for n in 0..10 {
                let token = if n == 9 { good.as_str() } else { WRONG };
                let (status, _) = attempt(&t, &t.base, token, None).await;
                log.push(status);
                if status == 429 {
                    break 'cycles;
                }
            }
        }
        let wrong_guesses = log.iter().filter(|s| **s == 401).count();
        // 9 wrong, 1 right, 1 wrong (the 10th failure), then refused.
        assert_eq!(wrong_guesses, 10, "{log:?}");
        assert_eq!(log.len(), 12, "{log:?}");
        assert_eq!(log[9], 200, "{log:?}");
        assert_eq!(counts(&t).await, vec![("127.0.0.1".to_owned(), 10)]);
    }

    #[actix_web::test]
    async fn replicas_share_the_count() {
        let t = TestApp::start().await;
        let (a, _a) = replica(&t, "");
        let (b, _b) = replica(&t, "");
        for base in [&a, &b] {
            for _ in 0..5 {
                assert_eq!(attempt(&t, base, WRONG, None).await.0, 401);
            }
        }
        let good = t.basic_token("demo-a", "too");
        for base in [&a, &b, &t.base] {
            assert_eq!(attempt(&t, base, &good, None).await.0, 429, "{base}");
        }
    }
}
