//! Which units are free: `/mobile-unit/options` filters by it and by vehicle type,
//! `/mobile-unit/board` shows each unit's dispatch, and a dispatch of a unit of another type
//! than the decision asks for needs a reason.

use std::collections::{BTreeMap, BTreeSet};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{dispatches, incidents, mobile_unit_types, mobile_units};
use serde_json::{Value, json};

use crate::client::W;
use crate::pickers::last_entry;
use crate::support::{keys, set};

/// Active units as the database has them: id -> (name, base, type id, type name).
async fn fleet(w: &W) -> BTreeMap<i64, (String, String, i32, String)> {
    mobile_units::table
        .inner_join(mobile_unit_types::table)
        .filter(mobile_units::active)
        .select((
            mobile_units::id,
            (
                mobile_units::name,
                mobile_units::base,
                mobile_unit_types::id,
                mobile_unit_types::name,
            ),
        ))
        .load(&mut w.api.conn().await)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

/// Unreleased dispatches as the database has them: unit id -> dispatch as the board shows it.
async fn busy(w: &W) -> BTreeMap<i64, Value> {
    let rows: Vec<(i64, i64, String, i64, String)> = dispatches::table
        .inner_join(incidents::table)
        .filter(dispatches::status.ne("released"))
        .select((
            dispatches::mobile_unit_id,
            dispatches::id,
            dispatches::status,
            incidents::id,
            incidents::number,
        ))
        .load(&mut w.api.conn().await)
        .await
        .unwrap();
    rows.into_iter()
        .map(|(unit, id, status, incident, number)| {
            let d =
                json!({"id": id, "status": status, "incident": {"id": incident, "number": number}});
            (unit, d)
        })
        .collect()
}

fn ids(items: &[Value]) -> BTreeSet<i64> {
    items.iter().map(|u| u["id"].as_i64().unwrap()).collect()
}

/// The options of the "Select a mobile unit" field for `units`, as the route answers them:
/// `{id, name}` by folded name, then id.
fn options_of<'a>(
    units: impl Iterator<Item = (&'a i64, &'a (String, String, i32, String))>,
) -> Value {
    let mut options: Vec<(String, i64, &str)> = units
        .map(|(id, u)| (dispatch_api::search::fold(&u.0), *id, u.0.as_str()))
        .collect();
    options.sort();
    options
        .into_iter()
        .map(|(_, id, name)| json!({"id": id, "name": name}))
        .collect()
}

/// The board and the options agree with the database about every active unit.
async fn check_against_database(w: &W) {
    let (fleet, busy) = (fleet(w).await, busy(w).await);
    // Where the demo parked units at a hospital's door: each at its hospital.
    let at_doors: BTreeMap<i64, (f64, f64)> =
        dispatch_api::seed::units_at_hospital_doors(&mut *w.api.conn().await)
            .await
            .unwrap()
            .into_iter()
            .collect();
    assert!(
        !at_doors.is_empty(),
        "the demo parks units at hospital doors"
    );
    // Every active unit, `{id, name}` as the spec plans the field: whether it is free is a
    // filter, not a field.
    let options = w.api.get("frota", "/mobile-unit/options").await;
    assert_eq!(options.ok(), &options_of(fleet.iter()));
    let free = w
        .api
        .get("frota", "/mobile-unit/options?available=true")
        .await;
    let free_units = fleet.iter().filter(|(id, _)| !busy.contains_key(id));
    assert_eq!(free.ok(), &options_of(free_units));

    let board = w.api.get("frota", "/mobile-unit/board").await;
    assert_eq!(ids(board.array()), fleet.keys().copied().collect());
    for u in board.array() {
        assert_eq!(
            keys(u),
            set(&[
                "id",
                "name",
                "base",
                "vehicle_type",
                "dispatch",
                // docs/dispatch-routes.md, "Positions and a recommendation".
                "position",
                "step_since",
                "seconds_in_step"
            ])
        );
        // No unit has reported but those the demo parked at a hospital's door: each is at
        // its base (the demo's bases are on the map), those at the hospital they wait at.
        let id = u["id"].as_i64().unwrap();
        match at_doors.get(&id) {
            Some((lat, lon)) => {
                assert_eq!(u["position"]["source"], "reported", "{u}");
                assert_eq!(
                    u["position"]["location"],
                    json!({"lat": lat, "lon": lon}),
                    "{u}"
                );
            }
            None => assert_eq!(u["position"]["source"], "base", "{u}"),
        }
        let (name, base, type_id, type_name) = &fleet[&id];
        assert_eq!(
            (&u["name"], &u["base"], &u["vehicle_type"]),
            (
                &json!(name),
                &json!(base),
                &json!({"id": type_id, "name": type_name})
            )
        );
        match busy.get(&id) {
            None => assert_eq!(u["dispatch"], Value::Null, "{u}"),
            Some(d) => {
                let mut shown = u["dispatch"].clone();
                assert!(shown["assigned_at"].is_string(), "{u}");
                shown.as_object_mut().unwrap().remove("assigned_at");
                assert_eq!(&shown, d, "{u}");
            }
        }
    }
}

/// The id of an active vehicle type by name.
async fn type_id(w: &W, name: &str) -> i64 {
    let types = w.api.get("frota", "/mobile-unit-type?active=true").await;
    types
        .array()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no type {name}"))["id"]
        .as_i64()
        .unwrap()
}

#[actix_web::test]
async fn options_and_board_say_which_units_are_free() {
    let w = W::new().await;
    let busy_before = busy(&w).await;
    assert!(!busy_before.is_empty(), "the demo data has busy units");
    check_against_database(&w).await;

    // By vehicle type, alone and with availability.
    let fleet = fleet(&w).await;
    let usa = type_id(&w, "USA").await;
    let of_type: BTreeSet<i64> = fleet
        .iter()
        .filter(|(_, u)| i64::from(u.2) == usa)
        .map(|(id, _)| *id)
        .collect();
    let r = w
        .api
        .get(
            "frota",
            &format!("/mobile-unit/options?vehicle_type_id={usa}"),
        )
        .await;
    assert_eq!(ids(r.array()), of_type);
    let r = w
        .api
        .get(
            "frota",
            &format!("/mobile-unit/options?available=true&vehicle_type_id={usa}"),
        )
        .await;
    let free_of_type: BTreeSet<i64> = of_type
        .iter()
        .filter(|id| !busy_before.contains_key(id))
        .copied()
        .collect();
    assert_eq!(ids(r.array()), free_of_type);
    for (query, name) in [
        ("vehicle_type_id=USA", "vehicle_type_id"),
        ("available=1", "available"),
    ] {
        let r = w
            .api
            .get("frota", &format!("/mobile-unit/options?{query}"))
            .await;
        assert_eq!(
            r.problem(400, "invalid_parameter").as_deref(),
            Some(name),
            "{query}"
        );
    }

    // A unit dispatched is busy on both at once; released, free again.
    let (id, v) = w.incident_in("regulated").await;
    let unit = *free_of_type.iter().next().expect("a free USA");
    let r = w
        .post(
            &format!("/incident/{id}/dispatch"),
            "frota",
            Some(v),
            json!({"mobile_unit_id": unit}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let dispatch = r.body["id"].as_i64().unwrap();
    let free = w
        .api
        .get("frota", "/mobile-unit/options?available=true")
        .await;
    assert!(!ids(free.array()).contains(&unit));
    let board = w.api.get("regulador", "/mobile-unit/board").await;
    let shown = board.array().iter().find(|u| u["id"] == unit).unwrap();
    assert_eq!(shown["dispatch"]["id"], dispatch);
    assert_eq!(shown["dispatch"]["status"], "assigned");
    assert_eq!(shown["dispatch"]["incident"]["id"], id);
    check_against_database(&w).await;
    let r = w
        .post(
            &format!("/dispatch/{dispatch}/status"),
            "frota",
            None,
            json!({"status": "released"}),
        )
        .await;
    r.ok();
    let free = w
        .api
        .get("frota", "/mobile-unit/options?available=true")
        .await;
    assert!(ids(free.array()).contains(&unit));
    check_against_database(&w).await;
}

#[actix_web::test]
async fn a_unit_of_another_type_than_the_decision_asks_for_needs_a_reason() {
    let w = W::new().await;
    let (id, v) = w.incident_in("awaiting_regulation").await;
    let (usa, usb) = (type_id(&w, "USA").await, type_id(&w, "USB").await);
    let action = w.action(true).await;
    let r = w
        .post(
            &format!("/incident/{id}/technical-decision"),
            "regulador",
            Some(v),
            json!({"action_id": action, "vehicle_type_id": usa}),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    let sel = w
        .api
        .get("frota", &format!("/incident/{id}/unit-selection"))
        .await;
    assert_eq!(
        sel.ok()["requested_vehicle_type"],
        json!({"id": usa, "name": "USA"})
    );
    let free_of = async |t: i64| {
        let r = w
            .api
            .get(
                "frota",
                &format!("/mobile-unit/options?available=true&vehicle_type_id={t}"),
            )
            .await;
        r.array()[0].clone()
    };
    let a_usb = free_of(usb).await;
    let uri = format!("/incident/{id}/dispatch");

    let r = w
        .post(
            &uri,
            "frota",
            Some(v),
            json!({"mobile_unit_id": a_usb["id"]}),
        )
        .await;
    assert_eq!(
        r.problem(409, "vehicle_type_mismatch").as_deref(),
        Some("mobile_unit_id")
    );
    assert_eq!(
        r.body["requested_vehicle_type"],
        json!({"id": usa, "name": "USA"})
    );
    assert_eq!(
        r.body["mobile_unit"],
        json!({"id": a_usb["id"], "vehicle_type": {"id": usb, "name": "USB"}})
    );
    let detail = r.body["detail"].as_str().unwrap();
    assert!(detail.contains("USA") && detail.contains("USB"), "{detail}");
    let r = w
        .post(
            &uri,
            "frota",
            Some(v),
            json!({"mobile_unit_id": a_usb["id"], "override_reason": "  "}),
        )
        .await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("override_reason")
    );
    assert_eq!(w.version(id).await, v, "nothing refused changed anything");
    assert_eq!(w.state(id).await, "regulated");

    let reason = "nenhuma USA livre na região; USB mais próxima";
    let r = w
        .post(
            &uri,
            "frota",
            Some(v),
            json!({"mobile_unit_id": a_usb["id"], "override_reason": reason}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let v = r.body["version"].as_i64().unwrap() as i32;
    let entry = last_entry(&w, id).await;
    assert_eq!(entry["action"], "dispatched");
    let recorded = &entry["changes"]["dispatch"];
    assert_eq!(
        recorded["mobile_unit"],
        json!({"id": a_usb["id"], "name": a_usb["name"],
               "vehicle_type": {"id": usb, "name": "USB"}})
    );
    assert_eq!(recorded["override_reason"], reason);
    assert_eq!(
        recorded["requested_vehicle_type"],
        json!({"id": usa, "name": "USA"})
    );

    // A unit of the type asked for needs no reason.
    let a_usa = free_of(usa).await;
    let r = w
        .post(
            &uri,
            "frota",
            Some(v),
            json!({"mobile_unit_id": a_usa["id"]}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let entry = last_entry(&w, id).await;
    assert_eq!(entry["changes"]["dispatch"]["override_reason"], Value::Null);
    let units = w
        .api
        .get("frota", &format!("/dispatch/incident/{id}"))
        .await;
    let names: Vec<&Value> = units
        .array()
        .iter()
        .map(|d| &d["mobile_unit"]["name"])
        .collect();
    assert_eq!(names, [&a_usb["name"], &a_usa["name"]]);
}
