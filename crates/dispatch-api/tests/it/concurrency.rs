//! Optimistic concurrency (If-Match, 412, 428) and the races the database decides.

use actix_web::http::Method;
use serde_json::json;

use crate::client::W;

#[actix_web::test]
async fn writes_need_the_current_version_and_return_the_next() {
    let w = W::new().await;
    let (id, v) = w.create().await;
    let uri = format!("/incident/{id}");
    let body = json!({"patient": {"name": "João"}});
    let r = w
        .call(Method::PATCH, &uri, "tarm", None, Some(body.clone()))
        .await;
    r.problem(428, "precondition_required");
    let r = w
        .call_with(
            Method::PATCH,
            &uri,
            "tarm",
            None,
            Some(body.clone()),
            &[("If-Match", "3")],
        )
        .await;
    assert_eq!(
        r.problem(400, "invalid_parameter").as_deref(),
        Some("If-Match")
    );
    let r = w
        .call(Method::PATCH, &uri, "tarm", Some(v + 5), Some(body.clone()))
        .await;
    r.problem(412, "version_conflict");
    assert_eq!(w.version(id).await, v, "a stale write changes nothing");
    let r = w
        .call(Method::PATCH, &uri, "tarm", Some(v), Some(body.clone()))
        .await;
    assert_eq!(r.ok()["version"], v + 1);
    assert_eq!(r.header("etag"), Some(format!("\"{}\"", v + 1).as_str()));
    // The same If-Match again is now stale: the second editor is told, not overwritten.
    let r = w
        .call(
            Method::PATCH,
            &uri,
            "regulador",
            Some(v),
            Some(json!({"patient": {"age": 40}})),
        )
        .await;
    r.problem(412, "version_conflict");
    let g = w.api.get("tarm", &uri).await;
    assert_eq!(g.header("etag"), Some(format!("\"{}\"", v + 1).as_str()));
    assert_eq!(g.ok()["patient"]["name"], "João");
    assert!(g.ok()["patient"]["age"].is_null());
    // Every POST action needs it too.
    for a in ["submit", "cancel", "prank-call"] {
        let r = w
            .post(&format!("/incident/{id}/{a}"), "tarm", None, json!({}))
            .await;
        r.problem(428, "precondition_required");
    }
}

#[actix_web::test]
async fn two_editors_with_the_same_version_at_once_one_wins() {
    let w = W::new().await;
    let (id, v) = w.create().await;
    let uri = format!("/incident/{id}");
    let (a, b) = tokio::join!(
        w.call(
            Method::PATCH,
            &uri,
            "tarm",
            Some(v),
            Some(json!({"patient": {"name": "A"}}))
        ),
        w.call(
            Method::PATCH,
            &uri,
            "regulador",
            Some(v),
            Some(json!({"patient": {"name": "B"}}))
        ),
    );
    let mut codes = [a.status.as_u16(), b.status.as_u16()];
    codes.sort();
    assert_eq!(codes, [200, 412], "{} / {}", a.body, b.body);
    assert_eq!(w.version(id).await, v + 1);
}

#[actix_web::test]
async fn two_fleet_operators_dispatching_one_unit_at_once_exactly_one_wins() {
    let w = W::new().await;
    let (a, va) = w.incident_in("regulated").await;
    let (b, vb) = w.incident_in("regulated").await;
    let unit = w.free_units().await[0];
    let body = json!({"mobile_unit_id": unit});
    let (ua, ub) = (
        format!("/incident/{a}/dispatch"),
        format!("/incident/{b}/dispatch"),
    );
    let (ra, rb) = tokio::join!(
        w.post(&ua, "frota", Some(va), body.clone()),
        w.post(&ub, "frota", Some(vb), body.clone()),
    );
    let (won, lost) = if ra.status.as_u16() == 201 {
        (ra, rb)
    } else {
        (rb, ra)
    };
    assert_eq!(won.status.as_u16(), 201, "{}", won.body);
    assert_eq!(won.body["status"], "assigned");
    assert_eq!(
        lost.problem(409, "unit_busy").as_deref(),
        Some("mobile_unit_id")
    );
    // The loser's incident is untouched.
    let states = [w.state(a).await, w.state(b).await];
    assert_eq!(states.iter().filter(|s| *s == "dispatched").count(), 1);
    assert_eq!(states.iter().filter(|s| *s == "regulated").count(), 1);

    // Dispatched again later, the busy unit's refusal says which incident holds it.
    let holder = if w.state(a).await == "dispatched" {
        a
    } else {
        b
    };
    let number = w
        .api
        .get("frota", &format!("/incident/{holder}"))
        .await
        .ok()["number"]
        .as_str()
        .unwrap()
        .to_owned();
    let (c, vc) = w.incident_in("regulated").await;
    let r = w
        .post(&format!("/incident/{c}/dispatch"), "frota", Some(vc), body)
        .await;
    assert_eq!(
        r.problem(409, "unit_busy").as_deref(),
        Some("mobile_unit_id")
    );
    assert_eq!(
        r.body["errors"][0]["message"],
        format!("is on incident {number} (id {holder}), whose dispatch is not released")
    );
    assert_eq!(w.state(c).await, "regulated");
}
