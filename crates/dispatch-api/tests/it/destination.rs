//! The patient's destination: chosen from `/health-unit`, written by `PATCH`, shown by every
//! screen that shows the patient, and followed by the incident's dispatches.

use actix_web::http::Method;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::health_units;
use serde_json::{Value, json};

use crate::client::W;
use crate::pickers::last_entry;

/// `PATCH /incident/{id}` as the regulator, at version `v`.
pub async fn patch(w: &W, id: i64, v: i32, body: Value) -> crate::support::Reply {
    w.call(
        Method::PATCH,
        &format!("/incident/{id}"),
        "regulador",
        Some(v),
        Some(body),
    )
    .await
}

/// The patient as each screen that shows it answers.
async fn patients(w: &W, id: i64) -> [Value; 4] {
    let get = async |login: &str, uri: String| w.api.get(login, &uri).await.ok().clone();
    [
        get("tarm", format!("/incident/{id}")).await["patient"].clone(),
        get("regulador", format!("/incident/{id}/occurrence-view")).await["incident"]["patient"]
            .clone(),
        get("frota", format!("/incident/{id}/unit-selection")).await["patient"].clone(),
        get("frota", format!("/incident/{id}/fleet-occurrence")).await["patient"].clone(),
    ]
}

async fn destinations(w: &W, id: i64) -> Vec<Value> {
    let units = w
        .api
        .get("frota", &format!("/dispatch/incident/{id}"))
        .await;
    units
        .array()
        .iter()
        .map(|d| d["destination"].clone())
        .collect()
}

#[actix_web::test]
async fn the_destination_chosen_in_the_health_unit_picker_is_saved_and_shown() {
    let w = W::new().await;
    let (id, v) = w.incident_in("regulated").await;
    let picked = w.api.get("regulador", "/health-unit").await;
    let (first, second, third) = (
        picked.array()[0].clone(),
        picked.array()[1].clone(),
        picked.array()[2].clone(),
    );
    for p in patients(&w, id).await {
        assert_eq!(p["destination"], Value::Null, "no destination yet: {p}");
    }

    let r = patch(
        &w,
        id,
        v,
        json!({"patient": {"destination_id": first["id"]}}),
    )
    .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    for p in patients(&w, id).await {
        assert_eq!(p["destination"], first, "{p}");
    }
    let entry = last_entry(&w, id).await;
    assert_eq!(entry["action"], "updated");
    assert_eq!(
        entry["changes"],
        json!({"patient.destination": {"from": null,
                                       "to": {"id": first["id"], "name": first["name"]}}})
    );

    // A dispatch goes where the patient goes, unless it is given its own destination.
    let units = w.free_units().await;
    let uri = format!("/incident/{id}/dispatch");
    let r = w
        .post(&uri, "frota", Some(v), json!({"mobile_unit_id": units[0]}))
        .await;
    let v = r.body["version"].as_i64().unwrap() as i32;
    // `destination` means one thing in the history as in the reads: where the unit takes the
    // patient, its own else the patient's.
    let entry = last_entry(&w, id).await;
    assert_eq!(
        entry["changes"]["dispatch"]["destination"],
        json!({"id": first["id"], "name": first["name"]})
    );
    let r = w
        .post(
            &uri,
            "frota",
            Some(v),
            json!({"mobile_unit_id": units[1], "destination_id": second["id"]}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let v = r.body["version"].as_i64().unwrap() as i32;
    let entry = last_entry(&w, id).await;
    assert_eq!(
        entry["changes"]["dispatch"]["destination"],
        json!({"id": second["id"], "name": second["name"]})
    );
    assert_eq!(destinations(&w, id).await, [first.clone(), second.clone()]);
    let r = patch(
        &w,
        id,
        v,
        json!({"patient": {"destination_id": third["id"]}}),
    )
    .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    assert_eq!(destinations(&w, id).await, [third.clone(), second.clone()]);

    // Inactive or unknown: 422 naming the field, nothing written.
    let inactive: i64 = health_units::table
        .filter(health_units::active.eq(false))
        .select(health_units::id)
        .first(&mut w.api.conn().await)
        .await
        .unwrap();
    for bad in [inactive, 999_999_999] {
        let r = patch(&w, id, v, json!({"patient": {"destination_id": bad}})).await;
        assert_eq!(
            r.problem(422, "invalid_reference").as_deref(),
            Some("patient.destination_id"),
            "{bad}"
        );
        let r = w
            .post(
                &uri,
                "frota",
                Some(v),
                json!({"mobile_unit_id": units[2], "destination_id": bad}),
            )
            .await;
        assert_eq!(
            r.problem(422, "invalid_reference").as_deref(),
            Some("destination_id"),
            "{bad}"
        );
    }
    assert_eq!(w.version(id).await, v);

    // `null` clears it; the dispatch without a destination of its own follows.
    let r = patch(&w, id, v, json!({"patient": {"destination_id": null}})).await;
    r.ok();
    for p in patients(&w, id).await {
        assert_eq!(p["destination"], Value::Null, "{p}");
    }
    assert_eq!(destinations(&w, id).await, [Value::Null, second]);
    let entry = last_entry(&w, id).await;
    assert_eq!(
        entry["changes"],
        json!({"patient.destination": {"from": {"id": third["id"], "name": third["name"]},
                                       "to": null}})
    );
}
