//! RegisterCallback against a local HTTP server (wiremock) playing the insurer.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::settings::FromSource;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::domain::insurer::Insurer;
use proposal_callback::registration::config::{Environment, RegistrationConfig};
use proposal_callback::schema::proposal::tokens;
use proposal_callback::settings::RegistrationSettings;
use serde_json::{Value, json};

use crate::support::mock_insurer::{MockInsurer, closed_port_url};
use crate::support::{TestApp, example, read};

/// base64("porto-client-id:porto-client-secret")
const PORTO_BASIC: &str = "Basic cG9ydG8tY2xpZW50LWlkOnBvcnRvLWNsaWVudC1zZWNyZXQ=";

/// porto's homologation URL is `porto_url`; the callback base is the service's own URL.
fn config(own_base: &str, extra: &[(&str, &str)]) -> RegistrationConfig {
    let mut vars: HashMap<String, String> = [
        ("CALLBACK_BASE_URL", own_base),
        ("INSURER_PORTO_CLIENT_ID", "porto-client-id"),
        ("INSURER_PORTO_CLIENT_SECRET", "porto-client-secret"),
        ("REGISTRATION_CONNECT_TIMEOUT", "500ms"),
        ("REGISTRATION_TIMEOUT", "500ms"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    for (k, v) in extra {
        vars.insert((*k).to_owned(), (*v).to_owned());
    }
    RegistrationSettings::from_source(&vars)
        .unwrap()
        .config()
        .unwrap()
}

async fn start(porto_url: &str) -> TestApp {
    let porto_url = porto_url.to_owned();
    TestApp::start_with(move |own| config(own, &[("INSURER_PORTO_HOMOLOGATION_URL", &porto_url)]))
        .await
}

impl TestApp {
    async fn register(&self, tenant: &str, id: i64) -> (u16, Value) {
        self.post(
            &format!("/admin/integrations/{id}/register-callback"),
            Some(&self.admin(tenant)),
            "application/json",
            vec![],
        )
        .await
    }

    /// The status `/callback/auth` answers to this Basic token.
    async fn auth_status(&self, token: &str) -> u16 {
        self.client
            .post(format!("{}/callback/auth", self.base))
            .header("Authorization", format!("Basic {token}"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    async fn integration(&self, tenant: &str, id: i64) -> Value {
        let (s, list) = self
            .get("/admin/integrations", Some(&self.admin(tenant)))
            .await;
        assert_eq!(s, 200, "{list}");
        list.as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .cloned()
            .unwrap()
    }

    /// `(live, pending)` tokens of the integration.
    async fn token_counts(&self, integration: i64) -> (usize, usize) {
        type Stamp = Option<chrono::DateTime<chrono::Utc>>;
        let rows: Vec<(Stamp, Stamp)> = tokens::table
            .filter(tokens::integration_id.eq(integration))
            .select((tokens::revoked_at, tokens::activated_at))
            .load(&mut self.conn().await)
            .await
            .unwrap();
        let live = rows
            .iter()
            .filter(|(r, a)| r.is_none() && a.is_some())
            .count();
        let pending = rows
            .iter()
            .filter(|(r, a)| r.is_none() && a.is_none())
            .count();
        (live, pending)
    }
}

fn token_api(received: &crate::support::mock_insurer::Received) -> String {
    received.json()["tokenApi"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn the_insurer_receives_the_specs_request_and_its_token_works() {
    let insurer = MockInsurer::start().await;
    let t = start(&insurer.base).await;
    let id = t.integration_id("demo-a", "porto");
    let seed_token = t.basic_token("demo-a", "porto");
    let before = t.integration("demo-a", id).await;
    assert_eq!(before["is_callback_active"], false);
    assert_eq!(before["callback_registered_at"], Value::Null);

    let (s, body) = t.register("demo-a", id).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["id"], id);
    assert_eq!(body["insurer"], "porto");
    assert_eq!(body["environment"], "homologation");
    assert_eq!(body["is_callback_active"], true);
    assert!(body["callback_registered_at"].is_string(), "{body}");
    assert_eq!(body["paused_at"], Value::Null);
    let last = &body["last_registration"];
    assert_eq!(
        (&last["outcome"], &last["insurer_status"], &last["detail"]),
        (&json!("registered"), &json!(200), &Value::Null),
        "{body}"
    );
    assert_eq!(last["requested_by"], "ops", "the admin token's sub: {body}");
    assert!(
        last["started_at"].as_str() <= last["finished_at"].as_str(),
        "{body}"
    );
    // Never called back: no last callback, not silent.
    for field in [
        "last_callback_at",
        "silent_since",
        "silence_threshold_seconds",
    ] {
        assert_eq!(body[field], Value::Null, "{field}: {body}");
    }
    assert_eq!(body.as_object().unwrap().len(), 10, "{body}");
    assert_eq!(before["last_registration"], Value::Null);

    let received = insurer.received();
    assert_eq!(received.len(), 1);
    let r = &received[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/envio/v1/inclusaoCadastro");
    assert_eq!(r.headers["authorization"], PORTO_BASIC);
    assert_eq!(r.headers["content-type"], "application/json");
    assert!(r.headers["user-agent"].starts_with("proposal-callback/"));
    let token = token_api(r);
    assert_eq!(token.len(), 64);
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(
        r.json(),
        json!({
            "nomeParceiro": "demo-a/porto",
            "clientId": "porto-client-id",
            "apiCallback": {
                "urlAutenticacao": format!("{}/callback/auth", t.base),
                "metodoAutenticacao": "POST",
                "tipoAutenticacao": "Basic",
                "urlCallback": format!("{}/callback/demo-a/porto", t.base),
                "metodoCallback": "POST",
                "tipoAutenticacaoCallback": "Bearer",
            },
            "tokenApi": token,
        })
    );
    // The secret travels in the Authorization header only.
    assert!(!String::from_utf8_lossy(&r.body).contains("porto-client-secret"));

    // Only the token's SHA-256 is stored, as a live registerCallback token.
    let hashes: Vec<(String, Vec<u8>)> = tokens::table
        .filter(tokens::integration_id.eq(id))
        .filter(tokens::revoked_at.is_null())
        .select((tokens::token_type, tokens::token_hash))
        .load(&mut t.conn().await)
        .await
        .unwrap();
    assert_eq!(
        hashes,
        vec![(
            "registerCallback".to_owned(),
            proposal_callback::domain::basic_token::token_hash(&token).to_vec()
        )]
    );

    // The insurer's token works; the one it replaced does not.
    assert_eq!(t.auth_status(&token).await, 200);
    assert_eq!(t.auth_status(&seed_token).await, 401);

    // The list shows the new state; nothing else changed.
    let (s, list) = t.get("/admin/integrations", Some(&t.admin("demo-a"))).await;
    assert_eq!(s, 200);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 3);
    for i in list {
        assert_eq!(i["is_callback_active"], i["id"] == id, "{i}");
        assert_eq!(i["environment"], "homologation");
    }
    // The other insurers' seed tokens are untouched.
    assert_eq!(t.auth_status(&t.basic_token("demo-a", "tokio")).await, 200);

    let (_, metrics) = t.get("/metrics", None).await;
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.lines().any(
            |l| l.starts_with("proposal_callback_callback_registrations_total{")
                && l.contains(r#"insurer="porto""#)
                && l.contains(r#"environment="homologation""#)
                && l.contains(r#"result="registered""#)
        ),
        "{metrics}"
    );
}

/// A registration whose pending token a later one declared stale (its process looked dead)
/// does not activate it, even on the insurer's 200.
#[actix_web::test]
async fn a_superseded_pending_token_is_never_activated() {
    use proposal_callback::store::integrations as i;
    let t = TestApp::start().await;
    let id = t.integration_id("demo-a", "porto");
    let mut conn = t.conn().await;
    let old = i::insert_pending_token(&mut conn, id, &[1u8; 32], chrono::Utc::now())
        .await
        .unwrap();
    let future = chrono::Utc::now() + chrono::Duration::hours(1);
    assert_eq!(
        i::claim_pending_slot(&mut conn, id, future).await.unwrap(),
        i::PendingSlot::Free
    );
    let new = i::insert_pending_token(&mut conn, id, &[2u8; 32], chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(
        i::claim_pending_slot(
            &mut conn,
            id,
            chrono::Utc::now() - chrono::Duration::hours(1)
        )
        .await
        .unwrap(),
        i::PendingSlot::Busy
    );
    assert!(!i::activate(&mut conn, id, old).await.unwrap());
    assert_eq!(t.token_counts(id).await, (1, 1));
    assert_eq!(
        t.integration("demo-a", id).await["is_callback_active"],
        false
    );
    assert!(i::activate(&mut conn, id, new).await.unwrap());
    assert_eq!(t.token_counts(id).await, (1, 0));
    assert_eq!(t.auth_status(&t.basic_token("demo-a", "porto")).await, 401);
}

#[actix_web::test]
async fn a_refusal_changes_nothing_and_its_token_never_works() {
    let insurer = MockInsurer::start().await;
    let t = start(&insurer.base).await;
    let id = t.integration_id("demo-a", "porto");
    let seed_token = t.basic_token("demo-a", "porto");
    for (status, text) in [
        (500, "HTTP 500 Internal Server Error"),
        (401, "HTTP 401 Unauthorized"),
        (201, "HTTP 201 Created"),
        (302, "HTTP 302 Found"),
    ] {
        insurer.answer_with(status);
        let (s, body) = t.register("demo-a", id).await;
        assert_eq!(s, 502, "{status}: {body}");
        assert_eq!(body["code"], "insurer_rejected", "{status}");
        assert_eq!(body["status"], 502);
        let detail = body["detail"].as_str().unwrap();
        assert!(detail.contains(text), "{detail}");
        assert!(!detail.contains("porto-client"), "{detail}");
        let sent = insurer.received().pop().unwrap();
        assert_eq!(t.auth_status(&token_api(&sent)).await, 401, "{status}");
        let after = t.integration("demo-a", id).await;
        assert_eq!(after["is_callback_active"], false);
        // The last attempt is shown with the insurer's status and what the admin was told.
        let last = &after["last_registration"];
        assert_eq!(
            (&last["outcome"], &last["insurer_status"], &last["detail"]),
            (&json!("insurer_rejected"), &json!(status), &json!(detail)),
            "{after}"
        );
        assert_eq!(t.token_counts(id).await, (1, 0), "{status}");
    }
    assert_eq!(insurer.received().len(), 4, "an answer is never retried");
    // The previous token still works.
    assert_eq!(t.auth_status(&seed_token).await, 200);
}

#[actix_web::test]
async fn a_timeout_is_not_retried_and_changes_nothing() {
    let insurer = MockInsurer::start().await;
    insurer.delay(Duration::from_secs(3));
    let t = start(&insurer.base).await;
    let id = t.integration_id("demo-a", "porto");
    let started = Instant::now();
    let (s, body) = t.register("demo-a", id).await;
    let took = started.elapsed();
    assert_eq!(
        (s, body["code"].as_str()),
        (502, Some("insurer_timeout")),
        "{body}"
    );
    assert!(body["detail"].as_str().unwrap().contains("500ms"), "{body}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    let received = insurer.received();
    assert_eq!(
        received.len(),
        1,
        "a timeout after sending is never retried"
    );
    assert_eq!(t.auth_status(&token_api(&received[0])).await, 401);
    assert_eq!(
        t.integration("demo-a", id).await["is_callback_active"],
        false
    );
    assert_eq!(t.token_counts(id).await, (1, 0));
    assert_eq!(t.auth_status(&t.basic_token("demo-a", "porto")).await, 200);
}

#[actix_web::test]
async fn a_closed_port_is_502_unreachable() {
    let t = start(&closed_port_url()).await;
    let id = t.integration_id("demo-a", "porto");
    let (s, body) = t.register("demo-a", id).await;
    assert_eq!(
        (s, body["code"].as_str()),
        (502, Some("insurer_unreachable")),
        "{body}"
    );
    let last = &t.integration("demo-a", id).await["last_registration"];
    assert_eq!(
        (&last["outcome"], &last["insurer_status"]),
        (&json!("insurer_unreachable"), &Value::Null),
        "no answer, no status: {last}"
    );
    assert!(
        body["detail"].as_str().unwrap().contains("2 attempts"),
        "{body}"
    );
    assert_eq!(
        t.integration("demo-a", id).await["is_callback_active"],
        false
    );
    assert_eq!(t.token_counts(id).await, (1, 0));
    assert_eq!(t.auth_status(&t.basic_token("demo-a", "porto")).await, 200);
}

#[actix_web::test]
async fn an_unconfigured_insurer_or_environment_is_502_not_configured() {
    let insurer = MockInsurer::start().await;
    let t = start(&insurer.base).await;
    // tokio: neither URL nor credentials.
    let tokio = t.integration_id("demo-a", "tokio");
    let (s, body) = t.register("demo-a", tokio).await;
    assert_eq!(
        (s, body["code"].as_str()),
        (502, Some("not_configured")),
        "{body}"
    );
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("INSURER_TOKIO_HOMOLOGATION_URL"),
        "{body}"
    );
    assert_eq!(t.token_counts(tokio).await, (1, 0), "no token was made");
    let last = &t.integration("demo-a", tokio).await["last_registration"];
    assert_eq!(
        (&last["outcome"], &last["insurer_status"]),
        (&json!("not_configured"), &Value::Null),
        "the attempt is recorded: {last}"
    );
    assert!(
        last["detail"]
            .as_str()
            .unwrap()
            .contains("INSURER_TOKIO_HOMOLOGATION_URL"),
        "{last}"
    );
    // porto in production: credentials, but no production URL.
    let prod = proposal_callback::store::integrations::ensure(
        &mut *t.conn().await,
        "demo-a",
        Insurer::Porto,
        Environment::Production,
    )
    .await
    .unwrap();
    let (s, body) = t.register("demo-a", prod.id).await;
    assert_eq!(
        (s, body["code"].as_str()),
        (502, Some("not_configured")),
        "{body}"
    );
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("INSURER_PORTO_PRODUCTION_URL"),
        "{body}"
    );
    assert_eq!(t.token_counts(prod.id).await, (0, 0));
    assert!(insurer.received().is_empty());
}

#[actix_web::test]
async fn the_integrations_environment_picks_the_insurers_url() {
    let homologation = MockInsurer::start().await;
    let production = MockInsurer::start().await;
    let (h, p) = (
        homologation.base.clone(),
        format!("{}/api/", production.base),
    );
    let t = TestApp::start_with(move |own| {
        config(
            own,
            &[
                ("INSURER_PORTO_HOMOLOGATION_URL", &h),
                ("INSURER_PORTO_PRODUCTION_URL", &p),
            ],
        )
    })
    .await;
    let prod = proposal_callback::store::integrations::ensure(
        &mut *t.conn().await,
        "demo-a",
        Insurer::Porto,
        Environment::Production,
    )
    .await
    .unwrap();
    let (s, body) = t.register("demo-a", prod.id).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["environment"], "production");
    assert!(homologation.received().is_empty());
    let received = production.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].path, "/api/envio/v1/inclusaoCadastro");
    // Both integrations of demo-a/porto are listed, only production active.
    let homologation_id = t.integration_id("demo-a", "porto");
    assert_eq!(
        t.integration("demo-a", homologation_id).await["is_callback_active"],
        false
    );
    assert_eq!(
        t.integration("demo-a", prod.id).await["is_callback_active"],
        true
    );
}

#[actix_web::test]
async fn only_the_integrations_own_admin_may_register_it() {
    let insurer = MockInsurer::start().await;
    let t = start(&insurer.base).await;
    let id = t.integration_id("demo-a", "porto");
    let path = format!("/admin/integrations/{id}/register-callback");

    let (s, body) = t.register("demo-b", id).await;
    assert_eq!(
        (s, body["code"].as_str()),
        (403, Some("forbidden")),
        "{body}"
    );
    let (s, body) = t.register("demo-a", 987_654).await;
    assert_eq!(
        (s, body["code"].as_str()),
        (404, Some("not_found")),
        "{body}"
    );
    let (s, _) = t.post(&path, None, "application/json", vec![]).await;
    assert_eq!(s, 401);
    let callback_token = t.bearer("demo-a", "porto");
    let (s, _) = t
        .post(&path, Some(&callback_token), "application/json", vec![])
        .await;
    assert_eq!(s, 401);
    let (s, body) = t
        .post(
            "/admin/integrations/abc/register-callback",
            Some(&t.admin("demo-a")),
            "application/json",
            vec![],
        )
        .await;
    assert_eq!((s, body["code"].as_str()), (400, Some("invalid_parameter")));
    assert!(insurer.received().is_empty());
    assert_eq!(
        t.integration("demo-a", id).await["is_callback_active"],
        false
    );

    // Each admin lists their own tenant's integrations only.
    let (s, _) = t.get("/admin/integrations", None).await;
    assert_eq!(s, 401);
    let (s, list) = t.get("/admin/integrations", Some(&t.admin("demo-b"))).await;
    assert_eq!(s, 200);
    let ids: Vec<i64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    let mut expected: Vec<i64> = ["porto", "tokio", "too"]
        .iter()
        .map(|i| t.integration_id("demo-b", i))
        .collect();
    expected.sort();
    assert_eq!(ids, expected);
    let (_, none) = t.get("/admin/integrations", Some(&t.admin("demo-c"))).await;
    assert_eq!(none, json!([]));
}

#[actix_web::test]
async fn re_registering_replaces_the_token_only_when_the_insurer_accepts() {
    let insurer = MockInsurer::start().await;
    let t = start(&insurer.base).await;
    let id = t.integration_id("demo-a", "porto");

    assert_eq!(t.register("demo-a", id).await.0, 200);
    let first = token_api(&insurer.received()[0]);
    assert_eq!(t.register("demo-a", id).await.0, 200);
    let second = token_api(&insurer.received()[1]);
    assert_ne!(first, second);
    assert_eq!(t.auth_status(&first).await, 401, "replaced by the second");
    assert_eq!(t.auth_status(&second).await, 200);

    // A failed re-registration leaves the registration in place: token and flag.
    for status in [500, 0] {
        let (s, body) = if status == 0 {
            insurer.delay(Duration::from_secs(3));
            t.register("demo-a", id).await
        } else {
            insurer.answer_with(status);
            t.register("demo-a", id).await
        };
        assert_eq!(s, 502, "{body}");
        let failed = token_api(insurer.received().last().unwrap());
        assert_eq!(t.auth_status(&failed).await, 401);
        assert_eq!(
            t.auth_status(&second).await,
            200,
            "the previous token still works"
        );
        assert_eq!(
            t.integration("demo-a", id).await["is_callback_active"],
            true
        );
        assert_eq!(t.token_counts(id).await, (1, 0));
    }

    // And a later success replaces it again.
    insurer.answer_with(200);
    insurer.delay(Duration::ZERO);
    assert_eq!(t.register("demo-a", id).await.0, 200);
    let last = token_api(insurer.received().last().unwrap());
    assert_eq!(t.auth_status(&second).await, 401);
    assert_eq!(t.auth_status(&last).await, 200);
}

#[actix_web::test]
async fn registrations_of_one_integration_take_turns() {
    let insurer = MockInsurer::start().await;
    insurer.delay(Duration::from_millis(400));
    let porto_url = insurer.base.clone();
    let t = TestApp::start_with(move |own| {
        config(
            own,
            &[
                ("INSURER_PORTO_HOMOLOGATION_URL", &porto_url),
                ("REGISTRATION_TIMEOUT", "5s"),
            ],
        )
    })
    .await;
    let id = t.integration_id("demo-a", "porto");
    let path = format!("/admin/integrations/{id}/register-callback");
    let admin = t.admin("demo-a");
    let send = || {
        t.client
            .post(format!("{}{path}", t.base))
            .bearer_auth(&admin)
            .send()
    };
    let (a, b) = futures_util::future::join(send(), send()).await;
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut statuses = [a.status().as_u16(), b.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [200, 409]);
    let busy = if a.status() == 409 { a } else { b };
    assert!(busy.headers().contains_key("retry-after"));
    let (_, body) = read(busy).await;
    assert_eq!(body["code"], "registration_in_progress");
    assert_eq!(insurer.received().len(), 1);
    assert_eq!(t.token_counts(id).await, (1, 0));

    // A pending token left by a crashed process blocks only until its lease has passed.
    diesel::insert_into(tokens::table)
        .values((
            tokens::integration_id.eq(id),
            tokens::token_type.eq("registerCallback"),
            tokens::token_hash.eq(vec![7u8; 32]),
            tokens::created_at.eq(chrono::Utc::now() - chrono::Duration::hours(1)),
        ))
        .execute(&mut t.conn().await)
        .await
        .unwrap();
    assert_eq!(t.token_counts(id).await, (1, 1));
    insurer.delay(Duration::ZERO);
    let (s, body) = t.register("demo-a", id).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(t.token_counts(id).await, (1, 0));
}

#[actix_web::test]
async fn an_admin_who_hangs_up_does_not_cancel_the_registration() {
    let insurer = MockInsurer::start().await;
    insurer.delay(Duration::from_millis(300));
    let t = start(&insurer.base).await;
    let id = t.integration_id("demo-a", "porto");
    let impatient = t
        .client
        .post(format!(
            "{}/admin/integrations/{id}/register-callback",
            t.base
        ))
        .bearer_auth(t.admin("demo-a"))
        .timeout(Duration::from_millis(50))
        .send()
        .await;
    assert!(impatient.unwrap_err().is_timeout());
    // The insurer's 200 arrives after the admin left, and is recorded all the same. (actix's
    // HTTP/1 dispatcher happens not to cancel a handler on a disconnect today; the handler
    // runs the registration on its own task so that this holds whatever the server does.)
    let deadline = Instant::now() + Duration::from_secs(5);
    while t.integration("demo-a", id).await["is_callback_active"] != true {
        assert!(Instant::now() < deadline, "never activated");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let token = token_api(&insurer.received()[0]);
    assert_eq!(t.auth_status(&token).await, 200);
    assert_eq!(t.token_counts(id).await, (1, 0));
}

/// Register, then the insurer authenticates with `tokenApi` at the URL it was given, gets a
/// JWT, posts a callback to its callback URL, and the proposal changes.
#[actix_web::test]
async fn end_to_end_register_then_the_insurer_calls_back() {
    let insurer = MockInsurer::start().await;
    let t = start(&insurer.base).await;
    let id = t.integration_id("demo-a", "porto");
    let (s, body) = t.register("demo-a", id).await;
    assert_eq!(s, 200, "{body}");

    // From here on, only what the insurer received.
    let registration = insurer.received()[0].json();
    let api = &registration["apiCallback"];
    let res = t
        .client
        .post(api["urlAutenticacao"].as_str().unwrap())
        .header(
            "Authorization",
            format!("Basic {}", registration["tokenApi"].as_str().unwrap()),
        )
        .send()
        .await
        .unwrap();
    let (s, auth) = read(res).await;
    assert_eq!(s, 200, "{auth}");
    let jwt = auth["access_token"].as_str().unwrap();
    let res = t
        .client
        .post(api["urlCallback"].as_str().unwrap())
        .bearer_auth(jwt)
        .header("content-type", "application/json")
        .body(example("porto", "approved"))
        .send()
        .await
        .unwrap();
    let (s, result) = read(res).await;
    assert_eq!(
        (s, result),
        (
            200,
            json!({"result": "processed", "proposal_id": "POR-2026-000123", "status": "approved"})
        )
    );
    let p = t.proposal("demo-a", "POR-2026-000123").await;
    assert_eq!(p.status, "approved");
    assert!(!p.in_queue);
    assert_eq!(p.history, vec!["under_analysis->approved".to_owned()]);
    assert_eq!(p.emails.len(), 1);
}

/// The binary reads the registration's configuration from its environment (a secret from a
/// mounted file, a `_FILE` whose file is missing only warns), and logs no secret.
#[actix_web::test]
async fn serve_reads_the_insurers_configuration_from_the_environment() {
    use std::process::{Command, Stdio};
    let insurer = MockInsurer::start().await;
    let t = TestApp::start().await;
    let dir = std::env::temp_dir().join(format!("pcb-serve-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret_file = dir.join("porto-secret-file");
    std::fs::write(&secret_file, "porto-client-secret\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let binary = env!("CARGO_BIN_EXE_proposal-callback");
    let mut child = Command::new(binary)
        .arg("serve")
        .env("DATABASE_URL", t.db.url())
        .env("JWT_SECRET", crate::support::SECRET)
        .env("BIND", format!("127.0.0.1:{port}"))
        .env("RUST_LOG", "info")
        .env("LOG_FORMAT", "json")
        .env("CALLBACK_BASE_URL", "https://callbacks.example.com/")
        .env("INSURER_PORTO_HOMOLOGATION_URL", &insurer.base)
        .env("INSURER_PORTO_CLIENT_ID", "porto-client-id")
        .env("INSURER_PORTO_CLIENT_SECRET_FILE", &secret_file)
        .env("INSURER_TOKIO_CLIENT_ID", "tokio-client-id")
        .env("INSURER_TOKIO_CLIENT_SECRET_FILE", dir.join("not-mounted"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = t.client.get(format!("{base}/readyz")).send().await;
        if matches!(&ready, Ok(r) if r.status() == 200) {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve did not become ready: {:?}", child.wait_with_output());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let id = t.integration_id("demo-a", "porto");
    let res = t
        .client
        .post(format!("{base}/admin/integrations/{id}/register-callback"))
        .bearer_auth(t.admin("demo-a"))
        .send()
        .await
        .unwrap();
    let (s, body) = read(res).await;
    let tokio_id = t.integration_id("demo-a", "tokio");
    let res = t
        .client
        .post(format!(
            "{base}/admin/integrations/{tokio_id}/register-callback"
        ))
        .bearer_auth(t.admin("demo-a"))
        .send()
        .await
        .unwrap();
    let (tokio_status, tokio_body) = read(res).await;
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let logs = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(s, 200, "{body}\n{logs}");
    assert_eq!(
        (tokio_status, tokio_body["code"].as_str()),
        (502, Some("not_configured"))
    );
    let received = insurer.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].headers["authorization"], PORTO_BASIC);
    assert_eq!(
        received[0].json()["apiCallback"]["urlCallback"],
        "https://callbacks.example.com/callback/demo-a/porto"
    );
    assert!(
        logs.contains("INSURER_TOKIO_CLIENT_SECRET_FILE"),
        "a warning names the missing file's variable:\n{logs}"
    );
    assert!(logs.contains("callback registration"), "{logs}");
    for secret in ["porto-client-secret", &token_api(&received[0])] {
        assert!(!logs.contains(secret), "{secret} in the logs:\n{logs}");
    }
}

/// `serve` reaches its database before it reads its own configuration (the service skeleton
/// checks `DATABASE_URL` first), so the database here is a real one; the address it would
/// listen on is taken, so a configuration wrongly accepted ends in an error too, never a hang.
#[actix_web::test]
async fn serve_refuses_a_bad_callback_base_url_naming_it() {
    let t = TestApp::start().await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .arg("serve")
        .env("JWT_SECRET", crate::support::SECRET)
        .env("DATABASE_URL", t.db.url())
        .env("BIND", taken.local_addr().unwrap().to_string())
        .env("CALLBACK_BASE_URL", "callbacks.example.com")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CALLBACK_BASE_URL"), "{err}");
}
