//! `Idempotency-Key`: a retry answers the stored response and changes nothing.

use actix_web::http::Method;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::incident_history;
use serde_json::json;

use crate::client::W;
use crate::support::Reply;

#[actix_web::test]
async fn a_retry_with_the_same_key_replays_and_another_body_is_refused() {
    let w = W::new().await;
    let count = async || w.incidents().await;
    let before = count().await;
    let body = json!({"caller_name": "Ana", "caller_phone": "12 3456-7890",
                      "address": "Av. Brasil 1", "complaint": "queda"});
    let key = [("Idempotency-Key", "6f1c2a86-create")];
    let first = w
        .call_with(
            Method::POST,
            "/incident",
            "tarm",
            None,
            Some(body.clone()),
            &key,
        )
        .await;
    assert_eq!(first.status.as_u16(), 201, "{}", first.body);
    let again = w
        .call_with(
            Method::POST,
            "/incident",
            "tarm",
            None,
            Some(body.clone()),
            &key,
        )
        .await;
    assert_eq!(again.status.as_u16(), 201);
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(again.header("etag"), Some("\"1\""));
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(count().await, before + 1, "one incident, not two");
    // The same key for another request.
    let mut other = body.clone();
    other["complaint"] = json!("outra");
    let r = w
        .call_with(Method::POST, "/incident", "tarm", None, Some(other), &key)
        .await;
    r.problem(422, "idempotency_key_reused");
    // A key must be a visible token.
    let bad = [("Idempotency-Key", "")];
    let r = w
        .call_with(
            Method::POST,
            "/incident",
            "tarm",
            None,
            Some(body.clone()),
            &bad,
        )
        .await;
    assert_eq!(
        r.problem(400, "invalid_parameter").as_deref(),
        Some("Idempotency-Key")
    );
    // An action retried after it succeeded: the stored answer, not a 412 nor a second row.
    let id = first.body["id"].as_i64().unwrap();
    let k = [("Idempotency-Key", "submit-1")];
    let uri = format!("/incident/{id}/submit");
    let a = w
        .call_with(Method::POST, &uri, "tarm", Some(1), Some(json!({})), &k)
        .await;
    let b = w
        .call_with(Method::POST, &uri, "tarm", Some(1), Some(json!({})), &k)
        .await;
    assert_eq!(a.ok(), b.ok());
    assert_eq!(b.header("etag"), Some("\"2\""));
    let submitted: i64 = incident_history::table
        .filter(incident_history::incident_id.eq(id))
        .filter(incident_history::action.eq("submitted"))
        .count()
        .get_result(&mut w.api.conn().await)
        .await
        .unwrap();
    assert_eq!(submitted, 1);
    // A refused request stores nothing: after fixing the cause the same key works.
    let k = [("Idempotency-Key", "decide-1")];
    let uri = format!("/incident/{id}/technical-decision");
    let action = w.action(true).await;
    let r = w
        .call_with(
            Method::POST,
            &uri,
            "regulador",
            Some(1),
            Some(json!({"action_id": action})),
            &k,
        )
        .await;
    r.problem(412, "version_conflict");
    let r = w
        .call_with(
            Method::POST,
            &uri,
            "regulador",
            Some(2),
            Some(json!({"action_id": action})),
            &k,
        )
        .await;
    assert_eq!(r.ok()["state"], "regulated");
}

/// The fingerprint is the body's JSON, not its bytes: the same fields in another order and
/// with other spacing are the same request, and the retry replays.
#[actix_web::test]
async fn a_retry_with_the_same_body_in_another_order_replays() {
    let w = W::new().await;
    let send = async |raw: &str| {
        let req = w
            .api
            .request(reqwest::Method::POST, "/incident")
            .bearer_auth(w.api.token("tarm"))
            .header("Idempotency-Key", "same-body-other-order")
            .header("Content-Type", "application/json")
            .body(raw.to_owned());
        Reply::of(req.send().await.unwrap()).await
    };
    let first = send(
        r#"{"caller_name":"Ana","caller_phone":"12 3456-7890","address":"Av. Brasil 1","complaint":"queda"}"#,
    )
    .await;
    assert_eq!(first.status.as_u16(), 201, "{}", first.body);
    let again = send(
        "{ \"complaint\": \"queda\",\n  \"address\": \"Av. Brasil 1\",\n  \
         \"caller_phone\": \"12 3456-7890\", \"caller_name\": \"Ana\" }",
    )
    .await;
    assert_eq!(again.status.as_u16(), 201, "{}", again.body);
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
}
