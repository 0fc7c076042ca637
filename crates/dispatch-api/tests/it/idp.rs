//! Staff logged in through the dispatch centre's identity provider (docs/dispatch-routes.md,
//! "Authentication"): RS256 and ES256 tokens verified against the key set a local provider
//! started by the test serves over HTTP, their `preferred_username` mapped to a user's login.

use std::sync::Arc;
use std::time::Duration;

use common::auth::idp::{IdpConfig, IdpVerifier};
use common::auth::now_secs;
use common::test_support::idp::{Provider, ProviderKey};
use dispatch_api::cors::CorsSettings;
use serde_json::{Value, json};

use crate::support::{Api, Reply};

const ISSUER: &str = "https://idp.samu.test/realms/central";

/// What the provider says about `login`, for this service, valid five minutes.
fn claims(login: &str) -> Value {
    let now = now_secs();
    json!({
        "iss": ISSUER,
        "aud": ["dispatch-api", "account"],
        "sub": format!("idp-{login}"),
        "preferred_username": login,
        "iat": now,
        "exp": now + 300,
    })
}

/// Starts the provider on a free port and a dispatch API that trusts it.
async fn api_with_provider(provider: &Arc<Provider>) -> Api {
    let url = provider.start();
    let day = Duration::from_secs(86_400);
    let mut config = IdpConfig::new(&url, ISSUER, "dispatch-api", day).unwrap();
    config.fetch_timeout = Duration::from_secs(5);
    // A rotation reaches us on the very next token (the default spaces fetches by 10 s).
    config.min_refresh_interval = Duration::ZERO;
    Api::with(
        CorsSettings::default(),
        Some(IdpVerifier::new(config).unwrap()),
    )
    .await
}

async fn who(api: &Api, token: &str) -> Reply {
    api.get_with_token(Some(token), "/shared/default-values")
        .await
}

#[actix_web::test]
async fn the_providers_tokens_name_the_user_with_that_login() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let ec = ProviderKey::ec("ec-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa, &ec]);
    let api = api_with_provider(&provider).await;

    let regulator = who(&api, &rsa.sign(&claims("regulador"))).await;
    assert_eq!(
        regulator.ok()["user"],
        json!({"id": api.id("regulador"), "descriptive_name": "Dra. Regina Reguladora"})
    );
    assert_eq!(regulator.body["profile"], "MEDICO_REGULADOR");
    let fleet = who(&api, &ec.sign(&claims("frota"))).await;
    assert_eq!(
        fleet.ok()["user"],
        json!({"id": api.id("frota"), "descriptive_name": "Fábio da Frota"})
    );
    assert_eq!(fleet.body["profile"], "OPERADOR_FROTA");

    // Either kind of token tells when it ends (a socket must not outlive it).
    let token_claims = claims("regulador");
    let authenticated =
        dispatch_api::auth::authenticate_with_expiry(api.state(), &rsa.sign(&token_claims))
            .await
            .unwrap();
    assert_eq!(authenticated.user.id, api.id("regulador"));
    assert_eq!(
        authenticated.expires_at,
        token_claims["exp"].as_i64().unwrap()
    );

    // The service's own tokens keep working beside them.
    let own = who(&api, &api.token("tarm")).await;
    assert_eq!(own.ok()["user"]["id"], api.id("tarm"));

    for (what, token, detail) in [
        (
            "a login nobody has",
            rsa.sign(&claims("nobody.here")),
            "this user does not exist",
        ),
        (
            "a user who is not active",
            ec.sign(&claims("inativo")),
            "this user is not active",
        ),
        (
            "meant for another client of the provider",
            rsa.sign(&with(claims("regulador"), "aud", json!("account"))),
            "the token is meant for another audience than `dispatch-api`",
        ),
        (
            "no user claim",
            rsa.sign(&without(claims("regulador"), "preferred_username")),
            "the token has no `preferred_username` claim",
        ),
        (
            "issued by another provider",
            rsa.sign(&with(
                claims("regulador"),
                "iss",
                json!("https://elsewhere.test"),
            )),
            "the token was not issued by the configured identity provider",
        ),
    ] {
        let reply = who(&api, &token).await;
        reply.problem(401, "unauthorized");
        assert_eq!(reply.body["detail"], detail, "{what}");
    }
}

fn with(mut claims: Value, name: &str, value: Value) -> Value {
    claims[name] = value;
    claims
}

fn without(mut claims: Value, name: &str) -> Value {
    claims.as_object_mut().unwrap().remove(name);
    claims
}

#[actix_web::test]
async fn a_new_key_after_a_rotation_is_fetched() {
    let old = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&old]);
    let api = api_with_provider(&provider).await;
    assert_eq!(
        who(&api, &old.sign(&claims("regulador"))).await.ok()["user"]["id"],
        api.id("regulador")
    );
    let fetched = provider.requests();
    assert_eq!(
        fetched, 1,
        "the keys are fetched once, then served from memory"
    );
    assert_eq!(
        who(&api, &old.sign(&claims("tarm"))).await.ok()["user"]["id"],
        api.id("tarm")
    );
    assert_eq!(provider.requests(), 1);

    // The provider rotates: a new key, the old one withdrawn.
    let new = ProviderKey::ec("ec-2027");
    provider.publish_keys(&[&new]);
    let reply = who(&api, &new.sign(&claims("frota"))).await;
    assert_eq!(reply.ok()["user"]["id"], api.id("frota"));
    assert_eq!(provider.requests(), 2, "the unknown `kid` was fetched");
}

#[actix_web::test]
async fn a_socket_opens_with_the_providers_token() {
    let key = ProviderKey::ec("ec-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&key]);
    let api = api_with_provider(&provider).await;
    let id = crate::browser::an_open_incident(&api).await;
    let url = format!(
        "ws://{}/ws?access_token={}",
        api.addr,
        key.sign(&claims("regulador"))
    );
    let answer = crate::support::subscribe_once(url, id).await;
    assert_eq!(
        (answer["type"].as_str(), answer["incident_id"].as_i64()),
        (Some("subscribed"), Some(id))
    );
    // A token of the provider for a login nobody has opens nothing.
    let url = format!(
        "ws://{}/ws?access_token={}",
        api.addr,
        key.sign(&claims("nobody.here"))
    );
    let err = tokio_tungstenite::connect_async(url).await.unwrap_err();
    assert!(err.to_string().contains("401"), "{err}");
}

#[actix_web::test]
async fn a_user_claim_holding_a_control_character_is_401_not_500() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa]);
    let api = api_with_provider(&provider).await;
    for (claim, value) in [
        ("preferred_username", "tarm\u{0}"),
        ("preferred_username", "tarm\nlevel=ERROR forged"),
        ("sub", "idp-tarm\u{0}"),
    ] {
        let reply = who(&api, &rsa.sign(&with(claims("tarm"), claim, json!(value)))).await;
        reply.problem(401, "unauthorized");
        assert_eq!(
            reply.body["detail"],
            format!("the token's `{claim}` claim is malformed"),
            "{value:?}"
        );
        assert_eq!(reply.body["type"], "urn:problem-type:unauthorized");
    }
    // The same login, clean, is the user.
    let reply = who(&api, &rsa.sign(&claims("tarm"))).await;
    assert_eq!(reply.ok()["user"]["id"], api.id("tarm"));
}

#[actix_web::test]
async fn a_token_whose_header_carries_crit_is_401() {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let rsa = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa]);
    let api = api_with_provider(&provider).await;
    let now = now_secs();
    let own_claims = json!({
        "sub": api.id("tarm").to_string(), "aud": "dispatch-api", "iat": now, "exp": now + 300,
    });
    for crit in [json!(["x-must"]), json!(["b64"])] {
        // The identity provider's token.
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("rsa-2026".into());
        header.extras.insert("crit", crit.clone());
        let idp_token = rsa.sign_with(&header, &claims("tarm"));
        // The service's own token, signed with its secret.
        let mut header = Header::new(Algorithm::HS256);
        header.extras.insert("crit", crit.clone());
        let own_token = jsonwebtoken::encode(
            &header,
            &own_claims,
            &EncodingKey::from_secret(crate::support::SECRET.as_bytes()),
        )
        .unwrap();
        for token in [idp_token, own_token] {
            let reply = who(&api, &token).await;
            reply.problem(401, "unauthorized");
            assert_eq!(
                reply.body["detail"],
                "the token's header names critical extensions (`crit`) this service does not understand",
                "{crit}"
            );
        }
    }
    // Without it, both kinds name the user.
    let reply = who(&api, &rsa.sign(&claims("tarm"))).await;
    assert_eq!(reply.ok()["user"]["id"], api.id("tarm"));
    let own = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &own_claims,
        &EncodingKey::from_secret(crate::support::SECRET.as_bytes()),
    )
    .unwrap();
    assert_eq!(who(&api, &own).await.ok()["user"]["id"], api.id("tarm"));
}

#[actix_web::test]
async fn a_providers_token_with_a_list_of_issuers_is_401() {
    let rsa = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa]);
    let api = api_with_provider(&provider).await;
    for iss in [json!([ISSUER]), json!([ISSUER, "https://elsewhere.test"])] {
        let reply = who(&api, &rsa.sign(&with(claims("tarm"), "iss", iss.clone()))).await;
        reply.problem(401, "unauthorized");
        assert_eq!(
            reply.body["detail"], "the token's `iss` claim is malformed",
            "{iss}"
        );
    }
    let reply = who(&api, &rsa.sign(&claims("tarm"))).await;
    assert_eq!(reply.ok()["user"]["id"], api.id("tarm"));
}

/// A provider's token with a fractional `exp` (valid, RFC 7519 NumericDate) is accepted, and a
/// socket opened with it is closed when it expires, like one opened with our own token.
#[actix_web::test]
async fn a_socket_opened_with_a_fractional_exp_closes_at_expiry() {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;

    let rsa = ProviderKey::rsa("rsa-2026");
    let provider = Arc::new(Provider::default());
    provider.publish_keys(&[&rsa]);
    let api = api_with_provider(&provider).await;
    let mut claims = claims("regulador");
    claims["exp"] = json!(now_secs() as f64 + 2.5);
    let token = rsa.sign(&claims);
    let url = format!("ws://{}/ws?access_token={token}", api.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(Some(frame)))) => {
                    return (u16::from(frame.code), frame.reason.to_string());
                }
                Some(Ok(_)) => continue,
                other => panic!("the socket ended without a close frame: {other:?}"),
            }
        }
    })
    .await
    .expect("the socket is closed at its token's expiry");
    assert_eq!(closed, (4401, "token expired".to_owned()));
}
