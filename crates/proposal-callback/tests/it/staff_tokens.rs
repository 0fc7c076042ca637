//! A tenant's staff on the admin routes with their identity provider's tokens (RS256/ES256,
//! keys served as a JWKS by a local HTTP server), beside this service's own admin tokens.

use common::auth::idp::{IdpConfig, IdpVerifier};
use common::auth::now_secs;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use proposal_callback::auth::admin::StaffClaims;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::TestApp;

const ISSUER: &str = "https://idp.imobiliaria.test/realms/staff";
const AUDIENCE: &str = "proposal-console";
/// The staff tokens' longest lifetime (proposal-callback's default for JWT_MAX_LIFETIME).
const DAY: std::time::Duration = proposal_callback::auth::jwt::DEFAULT_MAX_LIFETIME;

struct Key {
    kid: &'static str,
    alg: Algorithm,
    encoding: EncodingKey,
}

impl Key {
    fn rsa(kid: &'static str) -> Self {
        use rsa::pkcs1::EncodeRsaPrivateKey;
        let private = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap();
        let der = private.to_pkcs1_der().unwrap();
        Self {
            kid,
            alg: Algorithm::RS256,
            encoding: EncodingKey::from_rsa_der(der.as_bytes()),
        }
    }

    fn ec(kid: &'static str) -> Self {
        use p256::pkcs8::EncodePrivateKey;
        let private = p256::SecretKey::random(&mut rsa::rand_core::OsRng);
        let der = private.to_pkcs8_der().unwrap();
        Self {
            kid,
            alg: Algorithm::ES256,
            encoding: EncodingKey::from_ec_der(der.as_bytes()),
        }
    }

    fn jwk(&self) -> Jwk {
        let mut jwk = Jwk::from_encoding_key(&self.encoding, self.alg).unwrap();
        jwk.common.key_id = Some(self.kid.to_owned());
        jwk
    }

    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.to_owned());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// A staff member of `tenant` with `roles`, as the provider says it.
fn staff(tenant: &str, roles: Value) -> Value {
    let now = now_secs();
    json!({
        "iss": ISSUER,
        "aud": [AUDIENCE, "account"],
        "sub": "8d3c2b1a-0000-4000-8000-000000000001",
        "preferred_username": "maria.souza",
        "tenant": tenant,
        "roles": roles,
        "iat": now,
        "exp": now + 300,
    })
}

async fn provider(keys: &[&Key]) -> MockServer {
    let server = MockServer::start().await;
    let set = JwkSet {
        keys: keys.iter().map(|k| k.jwk()).collect(),
    };
    Mock::given(method("GET"))
        .and(path("/certs"))
        .respond_with(ResponseTemplate::new(200).set_body_json(set))
        .mount(&server)
        .await;
    server
}

fn ids(list: &Value) -> Vec<i64> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect()
}

#[actix_web::test]
async fn the_staffs_provider_tokens_open_their_tenants_admin_routes() {
    let (rsa_key, ec_key, stranger) = (Key::rsa("k-rsa"), Key::ec("k-ec"), Key::rsa("k-rsa"));
    let idp = provider(&[&rsa_key, &ec_key]).await;
    let config = IdpConfig::new(&format!("{}/certs", idp.uri()), ISSUER, AUDIENCE, DAY).unwrap();
    let verifier = IdpVerifier::new(config).unwrap();
    let t = TestApp::start_with_state(|s| s.with_admin_idp(verifier, StaffClaims::default())).await;
    let tenant_ids = |tenant: &str| -> Vec<i64> {
        t.seed
            .integrations
            .iter()
            .filter(|i| i.tenant == tenant)
            .map(|i| i.id)
            .collect()
    };

    // RS256 for demo-a, ES256 for demo-b: each sees its own tenant's integrations.
    let a = rsa_key.sign(&staff("demo-a", json!(["viewer", "admin"])));
    let (s, list) = t.get("/admin/integrations", Some(&a)).await;
    assert_eq!(s, 200, "{list}");
    assert_eq!(ids(&list), tenant_ids("demo-a"));
    let b = ec_key.sign(&staff("demo-b", json!(["admin"])));
    let (s, list) = t.get("/admin/integrations", Some(&b)).await;
    assert_eq!((s, ids(&list)), (200, tenant_ids("demo-b")));
    let (s, story) = t.get("/admin/proposals/99121", Some(&a)).await;
    assert_eq!((s, story["status"].as_str()), (200, Some("under_analysis")));
    let (s, b_story) = t.get("/admin/proposals/99121", Some(&b)).await;
    assert_eq!(
        (s, b_story["code"].as_str()),
        (404, Some("proposal_not_found"))
    );
    // This service's own admin tokens still work beside them.
    let (s, list) = t.get("/admin/integrations", Some(&t.admin("demo-a"))).await;
    assert_eq!((s, ids(&list)), (200, tenant_ids("demo-a")));

    // Staff without the admin role, or without a tenant: 403.
    let viewer = rsa_key.sign(&staff("demo-a", json!(["viewer"])));
    let (s, body) = t.get("/admin/integrations", Some(&viewer)).await;
    assert_eq!(
        (s, body["code"].as_str()),
        (403, Some("forbidden")),
        "{body}"
    );
    let mut no_tenant = staff("demo-a", json!(["admin"]));
    no_tenant.as_object_mut().unwrap().remove("tenant");
    let (s, body) = t
        .get("/admin/integrations", Some(&rsa_key.sign(&no_tenant)))
        .await;
    assert_eq!(
        (s, body["code"].as_str()),
        (403, Some("forbidden")),
        "{body}"
    );

    // Another issuer, another audience, a key the provider never published, expired: 401
    // naming the rule.
    let mut other_issuer = staff("demo-a", json!(["admin"]));
    other_issuer["iss"] = json!("https://evil.test/");
    let mut other_audience = staff("demo-a", json!(["admin"]));
    other_audience["aud"] = json!("dispatch-api");
    let mut expired = staff("demo-a", json!(["admin"]));
    expired["exp"] = json!(now_secs() - 60);
    for (token, detail) in [
        (
            rsa_key.sign(&other_issuer),
            "the token was not issued by the configured identity provider",
        ),
        (
            rsa_key.sign(&other_audience),
            "the token is meant for another audience than `proposal-console`",
        ),
        (
            stranger.sign(&staff("demo-a", json!(["admin"]))),
            "the token is not valid",
        ),
        (rsa_key.sign(&expired), "the token has expired"),
    ] {
        let (s, body) = t.get("/admin/integrations", Some(&token)).await;
        assert_eq!(
            (s, body["code"].as_str(), body["detail"].as_str()),
            (401, Some("unauthorized"), Some(detail))
        );
    }
}

#[actix_web::test]
async fn without_a_provider_its_tokens_are_refused() {
    let t = TestApp::start().await;
    let key = Key::rsa("k-rsa");
    let (s, body) = t
        .get(
            "/admin/integrations",
            Some(&key.sign(&staff("demo-a", json!(["admin"])))),
        )
        .await;
    assert_eq!(
        (s, body["detail"].as_str()),
        (
            401,
            Some("tokens signed with RS256 are not accepted: no identity provider is configured")
        )
    );
}

#[actix_web::test]
async fn a_staff_token_whose_tenant_or_user_holds_a_control_character_is_401() {
    let key = Key::rsa("k-rsa");
    let idp = provider(&[&key]).await;
    let config = IdpConfig::new(&format!("{}/certs", idp.uri()), ISSUER, AUDIENCE, DAY).unwrap();
    let verifier = IdpVerifier::new(config).unwrap();
    let t = TestApp::start_with_state(|s| s.with_admin_idp(verifier, StaffClaims::default())).await;
    for (claim, value) in [
        ("tenant", "demo-a\u{0}"),
        ("tenant", "demo-a\nforged"),
        ("preferred_username", "maria.souza\u{0}"),
        ("preferred_username", "maria.souza\nlevel=ERROR forged"),
        ("sub", "8d3c2b1a\u{0}"),
    ] {
        let mut claims = staff("demo-a", json!(["admin"]));
        claims[claim] = json!(value);
        let (s, body) = t
            .get(
                "/admin/receipts?proposal_id=99121",
                Some(&key.sign(&claims)),
            )
            .await;
        assert_eq!(
            (s, body["code"].as_str(), body["detail"].as_str()),
            (
                401,
                Some("unauthorized"),
                Some(format!("the token's `{claim}` claim is malformed").as_str())
            ),
            "{claim} {value:?}: {body}"
        );
    }
    // A tenant that is not a dsTenantId but holds no control character stays a 403.
    let (s, body) = t
        .get(
            "/admin/integrations",
            Some(&key.sign(&staff("demo a", json!(["admin"])))),
        )
        .await;
    assert_eq!(
        (s, body["code"].as_str()),
        (403, Some("forbidden")),
        "{body}"
    );
}

#[actix_web::test]
async fn a_staff_token_with_a_list_of_issuers_is_401() {
    let key = Key::rsa("k-rsa");
    let idp = provider(&[&key]).await;
    let config = IdpConfig::new(&format!("{}/certs", idp.uri()), ISSUER, AUDIENCE, DAY).unwrap();
    let verifier = IdpVerifier::new(config).unwrap();
    let t = TestApp::start_with_state(|s| s.with_admin_idp(verifier, StaffClaims::default())).await;
    let mut claims = staff("demo-a", json!(["admin"]));
    claims["iss"] = json!([ISSUER, "https://evil.test/"]);
    let (s, body) = t.get("/admin/integrations", Some(&key.sign(&claims))).await;
    assert_eq!(
        (s, body["code"].as_str(), body["detail"].as_str()),
        (
            401,
            Some("unauthorized"),
            Some("the token's `iss` claim is malformed")
        ),
        "{body}"
    );
    let (s, _) = t
        .get(
            "/admin/integrations",
            Some(&key.sign(&staff("demo-a", json!(["admin"])))),
        )
        .await;
    assert_eq!(s, 200);
}
