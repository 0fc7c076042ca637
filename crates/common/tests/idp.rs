//! Tokens of an identity provider, verified against a key set served over real HTTP by a
//! local server the test starts (the provider's part), with keys generated per test run.

use std::sync::Arc;
use std::time::Duration;

use common::Problem;
use common::auth::idp::{FetchError, IdpConfig, IdpVerifier};
use common::auth::{JwtKeys, TokenError, TokenVerifier, Verified, now_secs};
use common::test_support::idp::{Provider, ProviderKey};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use secrecy::SecretString;
use serde_json::{Value, json};

const ISSUER: &str = "https://idp.samu.test/realms/central";
const AUDIENCE: &str = "dispatch-api";

/// What the provider's token says about João, valid for five minutes.
fn claims() -> Value {
    let now = now_secs();
    json!({
        "iss": ISSUER,
        "aud": [AUDIENCE, "account"],
        "sub": "f4c1a0de-3d55-4b8a-9a53-0b7d1c2e9a10",
        "preferred_username": "joao.costa",
        "name": "João Albuquerque Costa",
        "iat": now,
        "exp": now + 300,
    })
}

fn with(mut claims: Value, changes: Value) -> Value {
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            claims.as_object_mut().unwrap().remove(k);
        } else {
            claims[k] = v.clone();
        }
    }
    claims
}

/// The longest lifetime these tests accept: a day.
const DAY: Duration = Duration::from_secs(86_400);

fn config(url: &str) -> IdpConfig {
    let mut config = IdpConfig::new(url, ISSUER, AUDIENCE, DAY).unwrap();
    config.fetch_timeout = Duration::from_secs(2);
    config
}

#[actix_web::test]
async fn rs256_and_es256_tokens_verify_and_name_their_user() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let ec = ProviderKey::ec("ec-2026");
    let provider = Arc::new(Provider::default());
    provider.publish(vec![rsa.jwk.clone(), ec.jwk.clone()]);
    let idp = IdpVerifier::new(config(&provider.start())).unwrap();
    assert_eq!(idp.warm_up().await.unwrap(), 2);

    let rs_token = rsa.sign(&claims());
    let identity = idp.verify_identity(&rs_token).await.unwrap();
    assert_eq!(identity.user, "joao.costa");
    assert_eq!(identity.claims["name"], "João Albuquerque Costa");
    assert_eq!(identity.claims["iss"], ISSUER);

    let es_token = ec.sign(&with(
        claims(),
        json!({"preferred_username": "maria.souza"}),
    ));
    assert_eq!(
        idp.verify_identity(&es_token).await.unwrap().user,
        "maria.souza"
    );

    // Typed claims, for a service that maps another claim.
    #[derive(serde::Deserialize)]
    struct Staff {
        sub: String,
        name: String,
    }
    let staff: Staff = idp.verify(&rs_token).await.unwrap();
    assert_eq!(staff.sub, "f4c1a0de-3d55-4b8a-9a53-0b7d1c2e9a10");
    assert_eq!(staff.name, "João Albuquerque Costa");

    // One verifier for both kinds of token: the service's own HS256 and the provider's.
    let local = JwtKeys::new(
        &SecretString::from("q3JvZx0m5yq9cQ2Yt4mS7nKpV8wZ1bXe4uHj6LdRf0A=".to_owned()),
        AUDIENCE,
        DAY,
    );
    let verifier = TokenVerifier::new(local.clone()).with_idp(idp.clone());
    #[derive(Debug, serde::Deserialize)]
    struct LocalClaims {
        sub: String,
    }
    let own = local
        .issue(&json!({"sub": "218", "exp": now_secs() + 60}))
        .unwrap();
    match verifier.verify::<LocalClaims>(&own).await.unwrap() {
        Verified::Local(c) => assert_eq!(c.sub, "218"),
        other => panic!("{other:?}"),
    }
    match verifier.verify::<LocalClaims>(&es_token).await.unwrap() {
        Verified::Idp(identity) => assert_eq!(identity.user, "maria.souza"),
        other => panic!("{other:?}"),
    }
    // Everything came from the one fetch at start.
    assert_eq!(provider.requests(), 1);
}

#[actix_web::test]
async fn tokens_breaking_a_rule_are_refused_by_name() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let ec = ProviderKey::ec("ec-2026");
    let stranger = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish(vec![
        rsa.jwk.clone(),
        ec.jwk.clone(),
        ec.published_as("ec-as-rsa"),
    ]);
    let idp = IdpVerifier::new(config(&provider.start())).unwrap();
    idp.warm_up().await.unwrap();
    let now = now_secs();

    let cases = [
        (
            "another issuer",
            rsa.sign(&with(
                claims(),
                json!({"iss": "https://evil.test/realms/central"}),
            )),
            TokenError::WrongIssuer,
        ),
        (
            "no issuer",
            rsa.sign(&with(claims(), json!({"iss": null}))),
            TokenError::MissingClaim("iss".into()),
        ),
        (
            "another audience",
            rsa.sign(&with(claims(), json!({"aud": "proposal-callback"}))),
            TokenError::WrongAudience {
                expected: AUDIENCE.into(),
            },
        ),
        (
            "no audience",
            ec.sign(&with(claims(), json!({"aud": null}))),
            TokenError::MissingClaim("aud".into()),
        ),
        (
            "a lifetime of a year",
            rsa.sign(&with(claims(), json!({"exp": now + 365 * 86_400}))),
            TokenError::LifetimeTooLong { max_secs: 86_400 },
        ),
        (
            "no issue time",
            rsa.sign(&with(claims(), json!({"iat": null}))),
            TokenError::MissingClaim("iat".into()),
        ),
        (
            "issued in the future",
            ec.sign(&with(claims(), json!({"iat": now + 120}))),
            TokenError::IssuedInFuture,
        ),
        (
            "expired",
            rsa.sign(&with(claims(), json!({"iat": now - 600, "exp": now - 300}))),
            TokenError::Expired,
        ),
        (
            "not yet valid",
            rsa.sign(&with(claims(), json!({"nbf": now + 120}))),
            TokenError::NotYetValid,
        ),
        (
            "signed by another key under a published kid",
            stranger.sign(&claims()),
            TokenError::Invalid,
        ),
        (
            "RS256 naming an EC key",
            stranger.sign_as("ec-as-rsa", &claims()),
            TokenError::Invalid,
        ),
    ];
    for (what, token, expected) in cases {
        assert_eq!(idp.verify_claims(&token).await, Err(expected), "{what}");
    }

    // No kid, and no user claim.
    let mut header = Header::new(Algorithm::RS256);
    header.kid = None;
    let no_kid = rsa.sign_with(&header, &claims());
    assert_eq!(idp.verify_claims(&no_kid).await, Err(TokenError::NoKeyId));
    let nameless = rsa.sign(&with(claims(), json!({"preferred_username": null})));
    assert_eq!(
        idp.verify_identity(&nameless).await,
        Err(TokenError::MissingClaim("preferred_username".into()))
    );

    // An HS256 token is never checked against the provider's keys.
    let hs = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims(),
        &EncodingKey::from_secret(b"whatever-whatever-whatever-whatever"),
    )
    .unwrap();
    assert!(matches!(
        idp.verify_claims(&hs).await,
        Err(TokenError::UnsupportedAlgorithm { .. })
    ));

    // The client reads which rule failed, as a 401.
    let problem = Problem::from(
        idp.verify_claims(&rsa.sign(&with(claims(), json!({"aud": "proposal-callback"}))))
            .await
            .unwrap_err(),
    );
    assert_eq!(problem.status, 401);
    assert_eq!(
        problem.detail,
        "the token is meant for another audience than `dispatch-api`"
    );
    // The kids above were all known or absent: nothing was fetched again.
    assert_eq!(provider.requests(), 1);
}

#[actix_web::test]
async fn a_rotated_key_is_fetched_once_and_then_verifies() {
    let old = ProviderKey::rsa("rsa-2026-01");
    let new = ProviderKey::ec("ec-2026-07");
    let provider = Arc::new(Provider::default());
    provider.publish(vec![old.jwk.clone()]);
    let mut config = config(&provider.start());
    config.min_refresh_interval = Duration::from_millis(300);
    let idp = IdpVerifier::new(config).unwrap();
    idp.warm_up().await.unwrap();
    assert_eq!(provider.requests(), 1);

    // The provider rotates; our set is older than the refresh interval.
    provider.publish(vec![old.jwk.clone(), new.jwk.clone()]);
    tokio::time::sleep(Duration::from_millis(400)).await;

    // Twenty requests at once carry the new kid: one fetch serves them all.
    let token = new.sign(&claims());
    let results =
        futures_util::future::join_all((0..20).map(|_| idp.verify_identity(&token))).await;
    for result in results {
        assert_eq!(result.unwrap().user, "joao.costa");
    }
    assert_eq!(provider.requests(), 2);
    // And later ones use the cache, old key included.
    for _ in 0..5 {
        idp.verify_identity(&token).await.unwrap();
        idp.verify_identity(&old.sign(&claims())).await.unwrap();
    }
    assert_eq!(provider.requests(), 2);
}

#[actix_web::test]
async fn a_withdrawn_key_stops_being_accepted_once_the_set_is_stale() {
    let old = ProviderKey::rsa("rsa-old");
    let new = ProviderKey::rsa("rsa-new");
    let provider = Arc::new(Provider::default());
    provider.publish(vec![old.jwk.clone()]);
    let mut config = config(&provider.start());
    config.min_refresh_interval = Duration::ZERO;
    config.cache_ttl = Duration::ZERO;
    let idp = IdpVerifier::new(config).unwrap();
    let token = old.sign(&claims());
    idp.verify_claims(&token).await.unwrap();

    provider.publish(vec![new.jwk.clone()]);
    assert_eq!(idp.verify_claims(&token).await, Err(TokenError::UnknownKey));
    idp.verify_claims(&new.sign(&claims())).await.unwrap();
}

#[actix_web::test]
async fn a_flood_of_unknown_kids_fetches_no_more_than_the_rate_limit_allows() {
    let key = ProviderKey::ec("ec-2026");
    let provider = Arc::new(Provider::default());
    provider.publish(vec![key.jwk.clone()]);
    // The default interval (10 s) is far longer than this test.
    let idp = IdpVerifier::new(config(&provider.start())).unwrap();
    assert_eq!(idp.config().min_refresh_interval, Duration::from_secs(10));

    // No warm-up: the first unknown kid of the flood is the cold start's fetch.
    let forged: Vec<String> = (0..300)
        .map(|i| key.sign_as(&format!("random-{i}"), &claims()))
        .collect();
    let results = futures_util::future::join_all(forged.iter().map(|t| idp.verify_claims(t))).await;
    assert!(
        results.iter().all(|r| r == &Err(TokenError::UnknownKey)),
        "{:?}",
        results.iter().find(|r| r != &&Err(TokenError::UnknownKey))
    );
    for token in &forged[..50] {
        assert_eq!(idp.verify_claims(token).await, Err(TokenError::UnknownKey));
    }
    assert_eq!(provider.requests(), 1, "one fetch for 350 unknown kids");
    // The provider's real key works all along, from the cache.
    assert_eq!(
        idp.verify_identity(&key.sign(&claims()))
            .await
            .unwrap()
            .user,
        "joao.costa"
    );
    assert_eq!(provider.requests(), 1);
}

#[actix_web::test]
async fn a_provider_that_is_down_gives_a_clear_error_not_a_hang() {
    let key = ProviderKey::rsa("rsa-2026");
    let token = key.sign(&claims());
    let guard = Duration::from_secs(30);

    // Nobody listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_url = format!("http://{}/certs", closed.local_addr().unwrap());
    drop(closed);
    let idp = IdpVerifier::new(config(&closed_url)).unwrap();
    assert!(matches!(
        idp.warm_up().await,
        Err(FetchError::Request(e)) if e.is_connect()
    ));
    let err = tokio::time::timeout(guard, idp.verify_claims(&token))
        .await
        .expect("no hang")
        .unwrap_err();
    // The warm-up's failure is recent: the token waits for no second attempt.
    assert_eq!(err, TokenError::ProviderUnavailable);
    let problem = Problem::from(err);
    assert_eq!(
        (problem.status, problem.code.as_ref()),
        (503, "unavailable")
    );
    assert_eq!(
        problem.detail,
        "the identity provider's keys cannot be fetched; retry shortly"
    );

    // A provider that accepts the connection and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/certs", silent.local_addr().unwrap());
    actix_web::rt::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let mut hanging = config(&silent_url);
    hanging.fetch_timeout = Duration::from_millis(300);
    let idp = IdpVerifier::new(hanging).unwrap();
    let err = tokio::time::timeout(guard, idp.verify_claims(&token))
        .await
        .expect("the fetch has a timeout")
        .unwrap_err();
    assert_eq!(err, TokenError::ProviderUnavailable);
    assert!(matches!(
        tokio::time::timeout(guard, async {
            // Past the refresh interval, a second attempt times out as well.
            let mut config = idp.config().clone();
            config.min_refresh_interval = Duration::ZERO;
            IdpVerifier::new(config).unwrap().warm_up().await
        })
        .await
        .expect("no hang"),
        Err(FetchError::Request(e)) if e.is_timeout()
    ));

    // A provider answering 500, then coming back.
    let provider = Arc::new(Provider::default());
    provider.publish(vec![key.jwk.clone()]);
    provider.set_failing(true);
    let mut config = config(&provider.start());
    config.min_refresh_interval = Duration::ZERO;
    let idp = IdpVerifier::new(config).unwrap();
    assert!(matches!(
        idp.warm_up().await,
        Err(FetchError::Status(s)) if s.as_u16() == 500
    ));
    assert_eq!(
        idp.verify_claims(&token).await,
        Err(TokenError::ProviderUnavailable)
    );
    provider.set_failing(false);
    idp.verify_claims(&token).await.unwrap();
}

#[actix_web::test]
async fn identity_claims_holding_a_control_character_are_refused_as_malformed() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa]);
    let idp = IdpVerifier::new(config(&provider.start())).unwrap();
    let local = JwtKeys::new(
        &SecretString::from("q3JvZx0m5yq9cQ2Yt4mS7nKpV8wZ1bXe4uHj6LdRf0A=".to_owned()),
        AUDIENCE,
        DAY,
    );
    let verifier = TokenVerifier::new(local.clone()).with_idp(idp.clone());
    for (claim, value) in [
        ("preferred_username", "tarm\u{0}"),
        ("preferred_username", "joao.costa\nlevel=error forged"),
        ("preferred_username", "joao\u{1b}[2J"),
        ("preferred_username", "joao\u{2028}costa"),
        ("sub", "f4c1a0de\u{0}"),
        ("sub", "f4c1a0de\r\nforged"),
    ] {
        let token = rsa.sign(&with(claims(), json!({ claim: value })));
        let expected = TokenError::MalformedClaim(claim.into());
        assert_eq!(
            idp.verify_identity(&token).await,
            Err(expected.clone()),
            "{value:?}"
        );
        assert_eq!(
            verifier.verify::<Value>(&token).await.err(),
            Some(expected),
            "{value:?}"
        );
        let problem = Problem::from(idp.verify_identity(&token).await.unwrap_err());
        assert_eq!(
            (problem.status, problem.detail.as_str()),
            (
                401,
                format!("the token's `{claim}` claim is malformed").as_str()
            )
        );
    }
    // The service's own tokens: `sub` too.
    for sub in ["218\u{0}", "ops\nforged", "ops\u{7f}"] {
        let token = local
            .issue(&json!({"sub": sub, "exp": now_secs() + 60}))
            .unwrap();
        assert_eq!(
            local.verify::<Value>(&token),
            Err(TokenError::MalformedClaim("sub".into())),
            "{sub:?}"
        );
    }
    // Spaces, accents and other scripts are names like any other.
    let token = rsa.sign(&with(
        claims(),
        json!({"preferred_username": "joão costa", "sub": "ação-東京"}),
    ));
    assert_eq!(
        idp.verify_identity(&token).await.unwrap().user,
        "joão costa"
    );
}

#[actix_web::test]
async fn a_providers_token_whose_header_carries_crit_is_refused() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let ec = ProviderKey::ec("ec-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa, &ec]);
    let idp = IdpVerifier::new(config(&provider.start())).unwrap();
    for (key, alg) in [(&rsa, Algorithm::RS256), (&ec, Algorithm::ES256)] {
        for crit in [json!(["x-must"]), json!(["b64"]), json!([]), Value::Null] {
            let mut header = Header::new(alg);
            header.kid = Some(
                if alg == Algorithm::RS256 {
                    "rsa-2026"
                } else {
                    "ec-2026"
                }
                .into(),
            );
            header.extras.insert("crit", crit.clone());
            let token = key.sign_with(&header, &claims());
            assert_eq!(
                idp.verify_identity(&token).await,
                Err(TokenError::CriticalExtension),
                "{alg:?} {crit}"
            );
        }
    }
    // Without it, the same tokens verify.
    assert!(idp.verify_identity(&rsa.sign(&claims())).await.is_ok());
    assert!(idp.verify_identity(&ec.sign(&claims())).await.is_ok());
}

#[actix_web::test]
async fn an_issuer_must_be_one_string_not_a_list_holding_it() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa]);
    let idp = IdpVerifier::new(config(&provider.start())).unwrap();
    for iss in [
        json!([ISSUER]),
        json!([ISSUER, "https://evil.test/realms/central"]),
        json!(["https://evil.test/realms/central", ISSUER]),
    ] {
        let token = rsa.sign(&with(claims(), json!({ "iss": iss })));
        assert_eq!(
            idp.verify_identity(&token).await,
            Err(TokenError::MalformedClaim("iss".into())),
            "{iss}"
        );
        let problem = Problem::from(idp.verify_claims(&token).await.unwrap_err());
        assert_eq!(
            (problem.status, problem.detail.as_str()),
            (401, "the token's `iss` claim is malformed")
        );
    }
    // A list without it is another issuer; a number is no issuer jsonwebtoken can read.
    let token = rsa.sign(&with(
        claims(),
        json!({"iss": ["https://evil.test/realms/central"]}),
    ));
    assert_eq!(
        idp.verify_identity(&token).await,
        Err(TokenError::WrongIssuer)
    );
    let token = rsa.sign(&with(claims(), json!({"iss": 7})));
    assert!(idp.verify_identity(&token).await.is_err());
    // The one string is the provider's.
    assert!(idp.verify_identity(&rsa.sign(&claims())).await.is_ok());
}
