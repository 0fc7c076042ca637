//! The token rules of `common::auth`, checked on `JwtKeys` and `TokenVerifier`.

use super::*;
use jsonwebtoken::{EncodingKey, Header};
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Claims {
    sub: String,
    exp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    nbf: Option<i64>,
}

/// Keys bound to no service, as a forger holding the secret would sign with.
fn keys(secret: &str) -> JwtKeys {
    JwtKeys::lenient(&SecretString::from(secret.to_owned()))
}

const SECRET: &str = "0123456789abcdef0123456789abcdef";

#[test]
fn round_trip() {
    let k = keys(SECRET);
    let claims = Claims {
        sub: "7".into(),
        exp: now_secs() + 60,
        nbf: None,
    };
    let token = k.issue(&claims).unwrap();
    assert_eq!(k.verify::<Claims>(&token).unwrap(), claims);
}

#[test]
fn rejects_expired_wrong_key_not_yet_valid_and_malformed() {
    let k = keys(SECRET);
    let expired = k
        .issue(&Claims {
            sub: "7".into(),
            exp: now_secs() - 60,
            nbf: None,
        })
        .unwrap();
    assert_eq!(k.verify::<Claims>(&expired), Err(TokenError::Expired));

    let other = keys("another-secret-another-secret-another");
    let foreign = other
        .issue(&Claims {
            sub: "7".into(),
            exp: now_secs() + 60,
            nbf: None,
        })
        .unwrap();
    assert_eq!(k.verify::<Claims>(&foreign), Err(TokenError::Invalid));

    let early = k
        .issue(&Claims {
            sub: "7".into(),
            exp: now_secs() + 600,
            nbf: Some(now_secs() + 300),
        })
        .unwrap();
    assert_eq!(k.verify::<Claims>(&early), Err(TokenError::NotYetValid));

    for junk in ["", "abc", "a.b.c", "ey.ey.ey"] {
        assert_eq!(
            k.verify::<Claims>(junk),
            Err(TokenError::Invalid),
            "{junk:?}"
        );
    }
}

#[test]
fn rejects_alg_none_and_missing_exp() {
    use base64_like::encode;
    let k = keys(SECRET);
    let header = encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = encode(format!(r#"{{"sub":"7","exp":{}}}"#, now_secs() + 60).as_bytes());
    for token in [
        format!("{header}.{payload}."),
        format!("{header}.{payload}"),
    ] {
        assert_eq!(k.verify::<Claims>(&token), Err(TokenError::Invalid));
    }
    #[derive(Serialize)]
    struct NoExp {
        sub: String,
    }
    let token = k.issue(&NoExp { sub: "7".into() }).unwrap();
    assert_eq!(
        k.verify::<Claims>(&token),
        Err(TokenError::MissingClaim("exp".into()))
    );
}

/// Unpadded base64url, enough to forge the `alg: none` token above.
mod base64_like {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    pub fn encode(input: &[u8]) -> String {
        let mut out = String::new();
        for chunk in input.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..=chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }
}

// Tokens bound to their service.

const DISPATCH: &str = "dispatch-api";
const CALLBACK: &str = "proposal-callback";

/// The maximum lifetime these tests give service keys: a day.
const DAY: Duration = Duration::from_secs(86_400);

fn service(aud: &str) -> JwtKeys {
    JwtKeys::new(&SecretString::from(SECRET.to_owned()), aud, DAY)
}

/// Signs anything with the shared secret, as a forger holding it (or another service's
/// lenient keys) would.
fn forge(claims: serde_json::Value) -> String {
    keys(SECRET).issue(&claims).unwrap()
}

fn claims_of(token: &str) -> serde_json::Map<String, serde_json::Value> {
    jsonwebtoken::dangerous::insecure_decode::<serde_json::Map<String, serde_json::Value>>(token)
        .unwrap()
        .claims
}

#[test]
fn a_service_token_carries_its_audience_and_issue_time_and_verifies() {
    let k = service(DISPATCH);
    let now = now_secs();
    let claims = Claims {
        sub: "7".into(),
        exp: now + 300,
        nbf: None,
    };
    let token = k.issue(&claims).unwrap();
    let raw = claims_of(&token);
    assert_eq!(raw["aud"], DISPATCH);
    assert!((now..=now + 2).contains(&raw["iat"].as_i64().unwrap()));
    assert_eq!(k.verify::<Claims>(&token).unwrap(), claims);
    assert_eq!(k.verify_claims(&token).unwrap(), raw);
}

#[test]
fn another_services_token_on_a_shared_secret_is_refused_both_ways() {
    let exp = now_secs() + 300;
    let dispatch = service(DISPATCH);
    let callback = service(CALLBACK);
    // What proposal-callback issues to an insurer, offered to dispatch-api.
    let insurer = callback
        .issue(&serde_json::json!({"sub": "1", "tenant": "demo-a", "insurer": "porto", "exp": exp}))
        .unwrap();
    assert_eq!(
        dispatch.verify::<Claims>(&insurer),
        Err(TokenError::WrongAudience {
            expected: DISPATCH.into()
        })
    );
    let user = dispatch
        .issue(&serde_json::json!({"sub": "1", "exp": exp}))
        .unwrap();
    assert_eq!(
        callback.verify::<serde_json::Value>(&user),
        Err(TokenError::WrongAudience {
            expected: CALLBACK.into()
        })
    );
    // A kind of token of the same service is refused where another kind is expected.
    let admin = callback.with_audience("proposal-callback-admin");
    let admin_token = admin
        .issue(&serde_json::json!({"sub": "ops", "exp": exp}))
        .unwrap();
    assert!(matches!(
        callback.verify::<serde_json::Value>(&admin_token),
        Err(TokenError::WrongAudience { .. })
    ));
    assert!(admin.verify::<serde_json::Value>(&admin_token).is_ok());
    assert!(matches!(
        admin.verify::<serde_json::Value>(&insurer),
        Err(TokenError::WrongAudience { .. })
    ));
    // The lenient keys of before refuse a token that names an audience, so a service
    // not yet moved does not take the other's new tokens either.
    assert!(matches!(
        keys(SECRET).verify::<Claims>(&insurer),
        Err(TokenError::WrongAudience { .. })
    ));
}

#[test]
fn a_token_without_audience_is_refused() {
    let now = now_secs();
    let token = forge(serde_json::json!({"sub": "1", "iat": now, "exp": now + 60}));
    assert_eq!(
        service(DISPATCH).verify::<Claims>(&token),
        Err(TokenError::MissingClaim("aud".into()))
    );
    // Nor does an audience of the wrong type pass.
    let token = forge(serde_json::json!({"sub": "1", "aud": 7, "iat": now, "exp": now + 60}));
    assert_eq!(
        service(DISPATCH).verify::<Claims>(&token),
        Err(TokenError::MissingClaim("aud".into()))
    );
    // A list including the service is this service's token.
    let token = forge(
        serde_json::json!({"sub": "1", "aud": [CALLBACK, DISPATCH], "iat": now, "exp": now + 60}),
    );
    assert!(service(DISPATCH).verify::<Claims>(&token).is_ok());
}

#[test]
fn a_lifetime_over_the_maximum_is_refused() {
    let now = now_secs();
    let k = service(DISPATCH);
    // The year 9999.
    let forever = forge(
        serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now, "exp": 253_402_300_799_i64}),
    );
    assert_eq!(
        k.verify::<Claims>(&forever),
        Err(TokenError::LifetimeTooLong { max_secs: 86_400 })
    );
    let day =
        forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now, "exp": now + 86_400}));
    assert!(
        k.verify::<Claims>(&day).is_ok(),
        "exactly the maximum is fine"
    );
    let hour = k.clone().with_max_lifetime(Duration::from_secs(3600));
    assert_eq!(
        hour.verify::<Claims>(&day),
        Err(TokenError::LifetimeTooLong { max_secs: 3600 })
    );
    // Issuing such a token is refused too: the service never makes one it would refuse.
    let err = hour
        .issue(&serde_json::json!({"sub": "1", "exp": now + 7200}))
        .unwrap_err();
    assert!(err.to_string().contains("3600 s"), "{err}");
    assert!(
        hour.issue(&serde_json::json!({"sub": "1"})).is_err(),
        "no exp"
    );
    assert!(
        hour.issue(&serde_json::json!({"sub": "1", "aud": CALLBACK, "exp": now + 60}))
            .is_err(),
        "another audience"
    );
}

#[test]
fn a_token_without_issue_time_is_refused_when_a_maximum_lifetime_applies() {
    let now = now_secs();
    let token = forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "exp": now + 60}));
    assert_eq!(
        service(DISPATCH).verify::<Claims>(&token),
        Err(TokenError::MissingClaim("iat".into()))
    );
    let token =
        forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": "now", "exp": now + 60}));
    assert_eq!(
        service(DISPATCH).verify::<Claims>(&token),
        Err(TokenError::MalformedClaim("iat".into()))
    );
}

#[test]
fn an_issue_time_in_the_future_is_refused_beyond_the_leeway() {
    let now = now_secs();
    let k = service(DISPATCH);
    let future =
        forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now + 60, "exp": now + 120}));
    assert_eq!(k.verify::<Claims>(&future), Err(TokenError::IssuedInFuture));
    // A clock a little ahead is tolerated (the leeway is 5 s; 2 s keeps the test clear
    // of a second boundary).
    let skewed =
        forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now + 2, "exp": now + 120}));
    assert!(k.verify::<Claims>(&skewed).is_ok());
}

#[test]
fn expiry_and_not_before_still_apply_to_service_tokens() {
    let now = now_secs();
    let k = service(DISPATCH);
    let expired =
        forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now - 120, "exp": now - 60}));
    assert_eq!(k.verify::<Claims>(&expired), Err(TokenError::Expired));
    let early = forge(serde_json::json!(
        {"sub": "1", "aud": DISPATCH, "iat": now, "nbf": now + 300, "exp": now + 600}
    ));
    assert_eq!(k.verify::<Claims>(&early), Err(TokenError::NotYetValid));
    let no_exp = forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now}));
    assert_eq!(
        k.verify::<Claims>(&no_exp),
        Err(TokenError::MissingClaim("exp".into()))
    );
    let other_secret = JwtKeys::new(
        &SecretString::from("another-secret-another-secret-another".to_owned()),
        DISPATCH,
        DAY,
    );
    let foreign = other_secret
        .issue(&serde_json::json!({"sub": "1", "exp": now + 60}))
        .unwrap();
    assert_eq!(k.verify::<Claims>(&foreign), Err(TokenError::Invalid));
}

#[test]
fn refusals_are_401_problems_that_name_the_rule_and_nothing_secret() {
    let now = now_secs();
    let token =
        forge(serde_json::json!({"sub": "1", "aud": CALLBACK, "iat": now, "exp": now + 60}));
    let err = service(DISPATCH).verify::<Claims>(&token).unwrap_err();
    let problem = Problem::from(err);
    assert_eq!(problem.status, 401);
    assert_eq!(problem.code, "unauthorized");
    assert_eq!(
        problem.detail,
        "the token is meant for another audience than `dispatch-api`"
    );
    for (err, detail) in [
        (
            TokenError::LifetimeTooLong { max_secs: 86_400 },
            "the token lives longer than the 86400 s allowed (`exp` - `iat`)",
        ),
        (
            TokenError::IssuedInFuture,
            "the token was issued in the future (`iat`)",
        ),
        (
            TokenError::MissingClaim("aud".into()),
            "the token has no `aud` claim",
        ),
    ] {
        let problem = Problem::from(err);
        assert_eq!((problem.status, problem.detail.as_str()), (401, detail));
        assert!(!problem.detail.contains(SECRET));
    }
    let unavailable = Problem::from(TokenError::ProviderUnavailable);
    assert_eq!(unavailable.status, 503);
    assert_eq!(unavailable.code, "unavailable");
}

#[actix_web::test]
async fn the_verifier_routes_by_algorithm() {
    let now = now_secs();
    let k = service(DISPATCH);
    let verifier = TokenVerifier::new(k.clone());
    let token = k
        .issue(&serde_json::json!({"sub": "7", "exp": now + 60}))
        .unwrap();
    match verifier.verify::<Claims>(&token).await.unwrap() {
        Verified::Local(claims) => assert_eq!(claims.sub, "7"),
        other => panic!("{other:?}"),
    }
    // Without an identity provider, RS256 is refused by name; unknown algorithms too.
    use base64_like::encode;
    let payload = encode(format!(r#"{{"sub":"7","exp":{}}}"#, now + 60).as_bytes());
    for (alg, detail) in [
        (
            "RS256",
            "tokens signed with RS256 are not accepted: no identity provider is configured",
        ),
        ("HS512", "tokens signed with HS512 are not accepted"),
    ] {
        let header = encode(format!(r#"{{"alg":"{alg}","kid":"k"}}"#).as_bytes());
        let err = verifier
            .verify::<Claims>(&format!("{header}.{payload}.c2ln"))
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), detail);
    }
    assert_eq!(
        verifier.verify::<Claims>("junk").await.unwrap_err(),
        TokenError::Invalid
    );
}

#[test]
fn a_token_whose_header_carries_crit_is_refused() {
    let now = now_secs();
    let k = service(DISPATCH);
    let claims = serde_json::json!({"sub": "7", "aud": DISPATCH, "iat": now, "exp": now + 60});
    let secret = EncodingKey::from_secret(SECRET.as_bytes());
    let signed = |header: &Header| jsonwebtoken::encode(header, &claims, &secret).unwrap();
    let mut headers = Vec::new();
    for names in [vec!["x-must"], vec!["b64"], vec!["exp", "x-other"], vec![]] {
        let mut header = Header::new(Algorithm::HS256);
        header.crit = Some(names.into_iter().map(str::to_owned).collect());
        headers.push(header);
    }
    // `null`, which jsonwebtoken reads as no `crit` at all.
    let mut header = Header::new(Algorithm::HS256);
    header.extras.insert("crit", Value::Null);
    headers.push(header);
    for header in &headers {
        let token = signed(header);
        assert_eq!(
            k.verify::<Claims>(&token),
            Err(TokenError::CriticalExtension),
            "{header:?}"
        );
        // The lenient keys too.
        assert_eq!(
            keys(SECRET).verify::<Claims>(&token),
            Err(TokenError::CriticalExtension)
        );
    }
    let problem = Problem::from(TokenError::CriticalExtension);
    assert_eq!(
        (problem.status, &*problem.code, problem.detail.as_str()),
        (
            401,
            "unauthorized",
            "the token's header names critical extensions (`crit`) this service does not understand"
        )
    );
    // The same token without it verifies.
    assert!(
        k.verify::<Claims>(&signed(&Header::new(Algorithm::HS256)))
            .is_ok()
    );
}

#[test]
fn header_text_is_what_header_value_to_str_accepts() {
    for b in 0..=u8::MAX {
        let bytes = [b'a', b, b'\t', b'z'];
        if let Ok(value) = header::HeaderValue::from_bytes(&bytes) {
            assert_eq!(visible_ascii(&bytes), value.to_str().ok(), "byte {b}");
        }
        assert_eq!(
            visible_ascii(&bytes).is_some(),
            matches!(b, 9 | 32..=126),
            "byte {b}"
        );
    }
    let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3In0.c2lnbmF0dXJl".repeat(4);
    assert_eq!(visible_ascii(token.as_bytes()), Some(token.as_str()));
    assert_eq!(visible_ascii(b""), Some(""));
}

#[test]
fn authorization_header_parsing() {
    let req = actix_web::test::TestRequest::default()
        .insert_header(("Authorization", "bearer abc"))
        .to_http_request();
    assert_eq!(authorization(&req, "Bearer"), Some("abc"));
    assert_eq!(authorization(&req, "Basic"), None);
    let req = actix_web::test::TestRequest::default()
        .insert_header(("Authorization", "Bearer "))
        .to_http_request();
    assert_eq!(authorization(&req, "Bearer"), None);
}

#[test]
fn an_id_claim_is_read_only_in_its_canonical_decimal_form() {
    for (raw, id) in [
        ("0", 0),
        ("2", 2),
        ("10", 10),
        ("9223372036854775807", i64::MAX),
    ] {
        assert_eq!(id_claim("sub", raw), Ok(id), "{raw:?}");
    }
    for raw in [
        "",
        "02",
        "00",
        "+2",
        "-2",
        " 2",
        "2 ",
        "\t2",
        "2\n",
        "٢",
        "２",
        "2.0",
        "0x2",
        "1e3",
        "9223372036854775808",
        "-0",
    ] {
        assert_eq!(
            id_claim("sub", raw),
            Err(TokenError::MalformedClaim("sub".into())),
            "{raw:?}"
        );
    }
    assert_eq!(
        Problem::from(id_claim("sub", "02").unwrap_err()).detail,
        "the token's `sub` claim is malformed"
    );
}
