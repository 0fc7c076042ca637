//! Every field a write changes on the incident is in that write's history entry, from and to;
//! and nothing is recorded as changed that did not change. Checked for every write route by
//! comparing what a regulator reads before and after the write with the entry it appended.

use std::collections::BTreeMap;

use actix_web::http::Method;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{profiles, users};
use serde_json::{Value, json};

use crate::client::W;
use crate::support::{Reply, keys, set};

/// Where each field of the incident detail is recorded in a history entry's `changes`.
const RECORDED_AS: &[(&str, &str)] = &[
    ("state", "state"),
    ("call_received_at", "call_received_at"),
    ("basic_data.caller_name", "caller_name"),
    ("basic_data.caller_phone", "caller_phone"),
    ("basic_data.address", "address"),
    ("basic_data.city", "city"),
    ("basic_data.complaint", "complaint"),
    ("basic_data.related_incident_id", "related_incident_id"),
    ("basic_data.location", "location"),
    ("occurrence.type", "occurrence.type"),
    ("occurrence.priority", "occurrence.priority"),
    ("occurrence.notes", "occurrence.notes"),
    ("patient.name", "patient.name"),
    ("patient.age", "patient.age"),
    ("patient.sex", "patient.sex"),
    ("patient.destination", "patient.destination"),
    ("regulation.regulator", "regulator"),
    ("regulation.regulated_at", "regulated_at"),
    ("regulation.assigned_to", "assigned_to"),
    ("conclusion.text", "conclusion"),
    ("conclusion.closed_at", "closed_at"),
];

/// What every write moves and no form shows: the entry itself carries them.
const BOOKKEEPING: &[&str] = &["version", "updated_at"];
/// Set once, by the creation: the entry is the incident's first.
const IDENTITY: &[&str] = &["id", "number", "created_at", "created_by"];

/// The detail's fields by path (`patient.destination`); objects below a form are one field.
fn fields(detail: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for (k, v) in detail.as_object().unwrap() {
        match v {
            Value::Object(form) if k != "created_by" => {
                for (f, fv) in form {
                    out.insert(format!("{k}.{f}"), fv.clone());
                }
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// A detail value as the history records it: references as `{id, name}`, people as
/// `{id, descriptive_name}`.
fn as_recorded(path: &str, v: &Value) -> Value {
    match path {
        "patient.destination" if !v.is_null() => json!({"id": v["id"], "name": v["name"]}),
        _ => v.clone(),
    }
}

/// What a regulator reads of the incident: the detail, its decisions and its units.
async fn read(w: &W, id: i64) -> Value {
    let r = w
        .api
        .get("regulador", &format!("/incident/{id}/occurrence-view"))
        .await;
    r.ok().clone()
}

async fn entries(w: &W, id: i64) -> Vec<Value> {
    let d = w
        .api
        .get("tarm", &format!("/incident/{id}?include_history=true"))
        .await;
    d.ok()["history"].as_array().unwrap().clone()
}

/// `before` and `after` the write against the one entry the write appended.
fn compare(what: &str, before: Option<&Value>, after: &Value, entry: &Value) {
    let changes = entry["changes"].as_object().unwrap();
    let recorded_as: BTreeMap<&str, &str> = RECORDED_AS.iter().copied().collect();
    let (old, new) = (
        before.map(|b| fields(&b["incident"])),
        fields(&after["incident"]),
    );
    let mut changed = Vec::new();
    for (path, to) in &new {
        let from = old.as_ref().map(|o| &o[path]);
        if from == Some(to) || BOOKKEEPING.contains(&path.as_str()) {
            continue;
        }
        if from.is_none() && (IDENTITY.contains(&path.as_str()) || to.is_null()) {
            continue;
        }
        let key = recorded_as
            .get(path.as_str())
            .unwrap_or_else(|| panic!("{what}: the detail's `{path}` is not known to this test"));
        let entry_change = changes
            .get(*key)
            .unwrap_or_else(|| panic!("{what}: `{path}` changed but `{key}` is not in {entry}"));
        assert_eq!(
            entry_change["to"],
            as_recorded(path, to),
            "{what}: `{key}` to"
        );
        let from = from.map_or(Value::Null, |f| as_recorded(path, f));
        assert_eq!(entry_change["from"], from, "{what}: `{key}` from");
        changed.push(*key);
    }
    for key in changes.keys() {
        if recorded_as.values().any(|k| k == key) {
            assert!(
                changed.contains(&key.as_str()),
                "{what}: `{key}` is recorded but did not change: {entry}"
            );
        }
    }
    assert_eq!(entry["version"], after["incident"]["version"], "{what}");
    // Records beside the incident: a new or moved unit is the one the entry names.
    let units = |v: Option<&Value>| -> BTreeMap<i64, Value> {
        v.map(|v| v["dispatches"].as_array().unwrap().clone())
            .unwrap_or_default()
            .into_iter()
            .map(|d| (d["id"].as_i64().unwrap(), d["status"].clone()))
            .collect()
    };
    let (units_before, units_after) = (units(before), units(Some(after)));
    for (id, status) in &units_after {
        if units_before.get(id) == Some(status) {
            continue;
        }
        let d = &changes["dispatch"];
        assert_eq!(d["id"], *id, "{what}: {entry}");
        let recorded = d["status"].get("to").unwrap_or(&d["status"]);
        assert_eq!(recorded, status, "{what}: {entry}");
    }
    let decisions =
        |v: Option<&Value>| v.map_or(0, |v| v["technical_decisions"].as_array().unwrap().len());
    if decisions(Some(after)) != decisions(before) {
        let decision = after["technical_decisions"]
            .as_array()
            .unwrap()
            .last()
            .unwrap();
        assert_eq!(changes["action"], decision["action"], "{what}");
        assert_eq!(changes["notes"], decision["notes"], "{what}");
        assert_eq!(changes["vehicle_type"], decision["vehicle_type"], "{what}");
    }
}

/// Runs `write` on the incident and checks its entry; returns the write's reply.
async fn checked(w: &W, id: i64, what: &str, write: impl AsyncFnOnce() -> Reply) -> Reply {
    let before = read(w, id).await;
    let count = entries(w, id).await.len();
    let reply = write().await;
    assert!(
        reply.status.is_success(),
        "{what}: {} {}",
        reply.status,
        reply.body
    );
    let after = read(w, id).await;
    let all = entries(w, id).await;
    assert_eq!(all.len(), count + 1, "{what}: one entry per write");
    compare(what, Some(&before), &after, all.last().unwrap());
    reply
}

/// The id of the USA vehicle type.
async fn usa(w: &W) -> Value {
    let types = w.api.get("frota", "/mobile-unit-type?active=true").await;
    types.array().iter().find(|t| t["name"] == "USA").unwrap()["id"].clone()
}

/// A new incident (as `tarm`) with the Basic data form and `forms` besides; its id.
async fn create_with_forms(w: &W, forms: Value) -> i64 {
    let mut body = json!({"caller_name": "Maria Souza", "caller_phone": "(12) 99100-4321",
                          "address": "Rua das Flores, 10", "complaint": "dor no peito"});
    for (k, v) in forms.as_object().unwrap() {
        body[k] = v.clone();
    }
    let r = w.post("/incident", "tarm", None, body).await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    r.body["id"].as_i64().unwrap()
}

fn version(r: &Reply) -> i32 {
    r.body["version"].as_i64().unwrap() as i32
}

#[actix_web::test]
async fn every_write_records_every_field_it_changes() {
    let w = W::new().await;
    let other_regulator: i64 = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.eq("ativo"))
        .filter(users::login.ne("regulador"))
        .select(users::id)
        .first(&mut w.api.conn().await)
        .await
        .unwrap();
    let destinations = w.api.get("tarm", "/health-unit").await;
    let destination = destinations.array()[0]["id"].clone();
    let employee = w.api.get("frota", "/employee/search").await;
    let employee = employee.array()[0]["id"].clone();
    let usa = usa(&w).await;

    // Creation: every field given is recorded from null.
    let id = create_with_forms(
        &w,
        json!({"city": "Taubaté", "occurrence": {"priority": "high"},
               "patient": {"name": "José", "destination_id": destination}}),
    )
    .await;
    compare(
        "create",
        None,
        &read(&w, id).await,
        &entries(&w, id).await[0],
    );
    let uri = |a: &str| format!("/incident/{id}/{a}");
    let patch = async |login: &str, v: i32, body: Value| {
        w.call(
            Method::PATCH,
            &format!("/incident/{id}"),
            login,
            Some(v),
            Some(body),
        )
        .await
    };

    let r = checked(&w, id, "patch", async || {
        patch(
            "tarm",
            1,
            json!({"caller_phone": "+55 12 99100-4321", "city": "São José dos Campos",
                   "occurrence": {"notes": "consciente"},
                   "patient": {"age": 67, "sex": "M", "destination_id": null}}),
        )
        .await
    })
    .await;
    let r = checked(&w, id, "submit", async || {
        w.post(&uri("submit"), "tarm", Some(version(&r)), json!({}))
            .await
    })
    .await;
    // docs/dispatch-routes.md, "Positions and a recommendation".
    let r = checked(&w, id, "location", async || {
        w.call(
            Method::PUT,
            &uri("location"),
            "tarm",
            Some(version(&r)),
            Some(json!({"location": {"lat": -23.1794, "lon": -45.8869}})),
        )
        .await
    })
    .await;
    let r = checked(&w, id, "send-to", async || {
        w.post(
            &uri("send-to"),
            "regulador",
            Some(version(&r)),
            json!({"regulator_id": other_regulator}),
        )
        .await
    })
    .await;
    // The decision replaces the regulator the send-to chose.
    let action = w.action(true).await;
    let r = checked(&w, id, "technical-decision", async || {
        w.post(
            &uri("technical-decision"),
            "regulador",
            Some(version(&r)),
            json!({"action_id": action, "notes": "USA", "vehicle_type_id": usa}),
        )
        .await
    })
    .await;
    let unit = w
        .api
        .get(
            "frota",
            &format!("/mobile-unit/options?available=true&vehicle_type_id={usa}"),
        )
        .await;
    let unit = unit.array()[0]["id"].clone();
    let r = checked(&w, id, "dispatch", async || {
        w.post(
            &uri("dispatch"),
            "frota",
            Some(version(&r)),
            json!({"mobile_unit_id": unit}),
        )
        .await
    })
    .await;
    let dispatch = r.body["id"].as_i64().unwrap();
    let status = format!("/dispatch/{dispatch}/status");
    let r = checked(&w, id, "dispatch status", async || {
        w.post(&status, "frota", None, json!({"status": "en_route"}))
            .await
    })
    .await;
    let ic = w.api.get("frota", "/intercurrence").await;
    let ic = ic.array()[0]["id"].clone();
    let r = checked(&w, id, "intercurrence", async || {
        w.post(
            &uri("intercurrence"),
            "frota",
            Some(version(&r)),
            json!({"intercurrence_id": ic, "notes": "trânsito"}),
        )
        .await
    })
    .await;
    let r = checked(&w, id, "transfer", async || {
        w.post(
            &uri("transfer"),
            "frota",
            Some(version(&r)),
            json!({"assigned_to_id": employee}),
        )
        .await
    })
    .await;
    let r = checked(&w, id, "patch by the regulator", async || {
        patch(
            "regulador",
            version(&r),
            json!({"occurrence": {"priority": "critical"},
                   "patient": {"destination_id": destination, "name": null}}),
        )
        .await
    })
    .await;
    let v = version(&r);
    let r = checked(&w, id, "release", async || {
        w.post(&status, "frota", None, json!({"status": "released"}))
            .await
    })
    .await;
    assert_eq!(version(&r), v + 1);
    checked(&w, id, "close", async || {
        w.post(
            &uri("close"),
            "regulador",
            Some(v + 1),
            json!({"conclusion": "Paciente removido."}),
        )
        .await
    })
    .await;

    // The state-only writes.
    let (id, v) = w.create().await;
    checked(&w, id, "cancel", async || {
        w.post(
            &format!("/incident/{id}/cancel"),
            "tarm",
            Some(v),
            json!({"reason": "desistência"}),
        )
        .await
    })
    .await;
    let (id, v) = w.create().await;
    checked(&w, id, "prank-call", async || {
        w.post(
            &format!("/incident/{id}/prank-call"),
            "tarm",
            Some(v),
            json!({}),
        )
        .await
    })
    .await;
}

#[actix_web::test]
async fn a_decision_that_replaces_the_regulator_of_a_send_to_records_it() {
    let w = W::new().await;
    let (id, v) = w.incident_in("awaiting_regulation").await;
    let (other, other_name): (i64, String) = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.eq("ativo"))
        .filter(users::login.ne("regulador"))
        .select((users::id, users::descriptive_name))
        .first(&mut w.api.conn().await)
        .await
        .unwrap();
    let r = w
        .post(
            &format!("/incident/{id}/send-to"),
            "regulador",
            Some(v),
            json!({"regulator_id": other}),
        )
        .await;
    let v = version(&r);
    let r = w
        .post(
            &format!("/incident/{id}/technical-decision"),
            "regulador",
            Some(v),
            json!({"action_id": w.action(true).await}),
        )
        .await;
    r.ok();
    let me = w.api.get("regulador", "/shared/default-values").await;
    let me = me.ok()["user"].clone();
    let detail = w.api.get("tarm", &format!("/incident/{id}")).await;
    assert_eq!(detail.ok()["regulation"]["regulator"], me);
    let last = entries(&w, id).await.pop().unwrap();
    assert_eq!(last["action"], "technical_decision");
    assert_eq!(
        last["changes"]["regulator"],
        json!({"from": {"id": other, "descriptive_name": other_name}, "to": me})
    );
}

/// The keys a history entry's `changes` may hold for each action, and those it must hold.
/// `FORM` stands for the form fields (by their history names) a creation or PATCH gave.
fn action_keys(action: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match action {
        "created" => (
            &["state", "call_received_at", FORM],
            &["state", "call_received_at"],
        ),
        "updated" => (&[FORM], &[]),
        "submitted" => (&["state"], &["state"]),
        "located" => (&["location"], &["location"]),
        "sent_to" => (&["regulator"], &["regulator"]),
        "technical_decision" => (
            &[
                "state",
                "regulated_at",
                "regulator",
                "action",
                "notes",
                "vehicle_type",
            ],
            &["state", "regulated_at", "action", "notes", "vehicle_type"],
        ),
        "dispatched" => (&["state", "dispatch"], &["dispatch"]),
        "dispatch_status" => (&["dispatch"], &["dispatch"]),
        "intercurrence" => (&["intercurrence", "notes"], &["intercurrence", "notes"]),
        "transferred" => (&["assigned_to"], &["assigned_to"]),
        "closed" => (
            &["state", "conclusion", "closed_at"],
            &["state", "conclusion", "closed_at"],
        ),
        "cancelled" => (&["state", "reason"], &["state"]),
        "prank_call" => (
            &["state", "prank_call_phone"],
            &["state", "prank_call_phone"],
        ),
        other => panic!("an action this test does not know: {other}"),
    }
}

const FORM: &str = "<form field>";

/// The form fields as a history entry names them: the write's names.
const FORM_FIELDS: &[&str] = &[
    "caller_name",
    "caller_phone",
    "address",
    "city",
    "complaint",
    "related_incident_id",
    "occurrence.type",
    "occurrence.priority",
    "occurrence.notes",
    "patient.name",
    "patient.age",
    "patient.sex",
    "patient.destination",
];

/// A catalogue reference: `{id, name}` or null.
fn reference(what: &str, v: &Value) {
    if !v.is_null() {
        assert_eq!(keys(v), set(&["id", "name"]), "{what}: {v}");
        assert!(v["id"].is_i64() && v["name"].is_string(), "{what}: {v}");
    }
}

/// A person: `{id, descriptive_name}` or null.
fn person(what: &str, v: &Value) {
    if !v.is_null() {
        assert_eq!(keys(v), set(&["id", "descriptive_name"]), "{what}: {v}");
    }
}

/// A unit as a dispatch record names it: `{id, name, vehicle_type {id, name}}`.
fn unit(what: &str, v: &Value) {
    assert_eq!(keys(v), set(&["id", "name", "vehicle_type"]), "{what}: {v}");
    reference(what, &v["vehicle_type"]);
}

/// One entry against its action's shape.
fn shaped(entry: &Value) {
    assert_eq!(
        keys(entry),
        set(&["version", "at", "action", "user", "changes"]),
        "{entry}"
    );
    person("user", &entry["user"]);
    let action = entry["action"].as_str().unwrap();
    let (may, must) = action_keys(action);
    let changes = entry["changes"].as_object().unwrap();
    for key in changes.keys() {
        let allowed = may.contains(&key.as_str())
            || (may.contains(&FORM) && FORM_FIELDS.contains(&key.as_str()));
        assert!(allowed, "{action}: `{key}` is not of its shape: {entry}");
    }
    for key in must {
        assert!(changes.contains_key(*key), "{action}: no `{key}`: {entry}");
    }
    assert!(!changes.is_empty(), "{action}: records nothing: {entry}");
    let c = &entry["changes"];
    let both = |f: &dyn Fn(&str, &Value), key: &str| {
        if let Some(v) = changes.get(key) {
            f(key, &v["from"]);
            f(key, &v["to"]);
        }
    };
    both(&reference, "patient.destination");
    both(&person, "regulator");
    both(&person, "assigned_to");
    match action {
        "technical_decision" => {
            reference("action", &c["action"]);
            reference("vehicle_type", &c["vehicle_type"]);
        }
        "intercurrence" => reference("intercurrence", &c["intercurrence"]),
        "dispatched" => {
            let d = &c["dispatch"];
            assert_eq!(
                keys(d),
                set(&[
                    "id",
                    "mobile_unit",
                    "requested_vehicle_type",
                    "status",
                    "destination",
                    "override_reason"
                ]),
                "{entry}"
            );
            unit("dispatch.mobile_unit", &d["mobile_unit"]);
            reference("requested_vehicle_type", &d["requested_vehicle_type"]);
            reference("dispatch.destination", &d["destination"]);
        }
        "dispatch_status" => {
            let d = &c["dispatch"];
            assert_eq!(keys(d), set(&["id", "mobile_unit", "status"]), "{entry}");
            unit("dispatch.mobile_unit", &d["mobile_unit"]);
            assert_eq!(keys(&d["status"]), set(&["from", "to"]), "{entry}");
        }
        _ => {}
    }
    // No bare id of a catalogue: a reference is `{id, name}` (an incident is no catalogue).
    for key in changes.keys() {
        assert!(
            !key.ends_with("_id") || key == "related_incident_id",
            "{action}: `{key}` is a bare id: {entry}"
        );
    }
}

/// A whole attendance on the service's own clock, and two calls that end early: every entry
/// of every incident is read back and held to its action's shape, and a unit's every step
/// time is its entry's `at`, to the microsecond.
#[actix_web::test]
async fn every_entry_of_a_shift_has_its_actions_shape() {
    let w = W::new().await;
    let hospitals = w.api.get("tarm", "/health-unit?q=hospital").await;
    let (h1, h2) = (hospitals.array()[0].clone(), hospitals.array()[1].clone());
    let usa = usa(&w).await;
    let id = create_with_forms(
        &w,
        json!({"occurrence": {"type": "Clínico", "priority": "high"},
               "patient": {"name": "José", "age": 60, "destination_id": h1["id"]}}),
    )
    .await;
    let uri = |a: &str| format!("/incident/{id}/{a}");
    let v = |r: &Reply| version(r);
    let r = w
        .call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "tarm",
            Some(1),
            Some(json!({"patient": {"sex": "M", "destination_id": h2["id"]},
                        "occurrence": {"notes": "consciente"}})),
        )
        .await;
    let r = w.post(&uri("submit"), "tarm", Some(v(&r)), json!({})).await;
    let r = w
        .call(
            Method::PUT,
            &uri("location"),
            "tarm",
            Some(v(&r)),
            Some(json!({"location": {"lat": -23.1794, "lon": -45.8869}})),
        )
        .await;
    let action = w.action(true).await;
    let r = w
        .post(
            &uri("technical-decision"),
            "regulador",
            Some(v(&r)),
            json!({"action_id": action, "vehicle_type_id": usa, "notes": "USA"}),
        )
        .await;
    let units = w
        .api
        .get(
            "frota",
            &format!("/mobile-unit/options?available=true&vehicle_type_id={usa}"),
        )
        .await;
    let r = w
        .post(
            &uri("dispatch"),
            "frota",
            Some(v(&r)),
            json!({"mobile_unit_id": units.array()[0]["id"]}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let dispatch = r.body["id"].as_i64().unwrap();
    let other = w.free_units().await;
    let other = other
        .iter()
        .find(|u| units.array().iter().all(|o| o["id"] != **u))
        .copied();
    let mut r = r;
    if let Some(other) = other {
        r = w
            .post(
                &uri("dispatch"),
                "frota",
                Some(v(&r)),
                json!({"mobile_unit_id": other, "destination_id": h1["id"],
                       "override_reason": "a mais próxima"}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    }
    let ic = w.api.get("frota", "/intercurrence").await;
    let r = w
        .post(
            &uri("intercurrence"),
            "frota",
            Some(v(&r)),
            json!({"intercurrence_id": ic.array()[0]["id"], "notes": "trânsito"}),
        )
        .await;
    let employee = w.api.get("frota", "/employee/search").await;
    let r = w
        .post(
            &uri("transfer"),
            "frota",
            Some(v(&r)),
            json!({"assigned_to_id": employee.array()[0]["id"]}),
        )
        .await;
    r.ok();
    let steps = [
        "en_route",
        "on_scene",
        "transporting",
        "at_destination",
        "handed_over",
        "released",
    ];
    for step in steps {
        let s = w
            .post(
                &format!("/dispatch/{dispatch}/status"),
                "frota",
                None,
                json!({"status": step}),
            )
            .await;
        assert_eq!(s.ok()["status"], step);
    }
    let detail = w.api.get("tarm", &format!("/incident/{id}")).await;
    let mut v = detail.ok()["version"].as_i64().unwrap() as i32;
    let dispatches = w
        .api
        .get("frota", &format!("/dispatch/incident/{id}"))
        .await;
    for d in dispatches.array() {
        if d["id"] != dispatch && d["status"] != "released" {
            let s = w
                .post(
                    &format!("/dispatch/{}/status", d["id"]),
                    "frota",
                    None,
                    json!({"status": "released"}),
                )
                .await;
            v = s.ok()["version"].as_i64().unwrap() as i32;
        }
    }
    w.post(
        &uri("close"),
        "regulador",
        Some(v),
        json!({"conclusion": "Paciente entregue."}),
    )
    .await
    .ok();
    // Two calls that end early.
    let mut incidents = vec![id];
    for (route, body) in [
        ("cancel", json!({"reason": "desistência"})),
        ("prank-call", json!({})),
    ] {
        let (other, first) = w.create().await;
        let uri = format!("/incident/{other}/{route}");
        w.post(&uri, "tarm", Some(first), body).await.ok();
        incidents.push(other);
    }

    let mut seen = std::collections::BTreeSet::new();
    for incident in incidents {
        for entry in entries(&w, incident).await {
            shaped(&entry);
            seen.insert(entry["action"].as_str().unwrap().to_owned());
        }
    }
    let every: Vec<&str> = vec![
        "cancelled",
        "closed",
        "created",
        "dispatch_status",
        "dispatched",
        "intercurrence",
        "located",
        "prank_call",
        "submitted",
        "technical_decision",
        "transferred",
        "updated",
    ];
    assert_eq!(seen.iter().map(String::as_str).collect::<Vec<_>>(), every);

    // One instant per step: the dispatch's `<step>_at` is its entry's `at`.
    let all = entries(&w, id).await;
    let times = w
        .api
        .get("frota", &format!("/dispatch/incident/{id}"))
        .await;
    let times = &times.array().iter().find(|d| d["id"] == dispatch).unwrap()["times"];
    let at = |t: &Value| chrono::DateTime::parse_from_rfc3339(t.as_str().unwrap()).unwrap();
    let assigned = all
        .iter()
        .find(|e| e["action"] == "dispatched" && e["changes"]["dispatch"]["id"] == dispatch)
        .unwrap();
    assert_eq!(
        at(&times["assigned_at"]),
        at(&assigned["at"]),
        "assigned_at"
    );
    for step in steps {
        let entry = all
            .iter()
            .find(|e| {
                e["action"] == "dispatch_status"
                    && e["changes"]["dispatch"]["id"] == dispatch
                    && e["changes"]["dispatch"]["status"]["to"] == step
            })
            .unwrap_or_else(|| panic!("no entry for {step}"));
        assert_eq!(
            at(&times[format!("{step}_at")]),
            at(&entry["at"]),
            "{step}_at"
        );
    }
}

/// A decision or an intercurrence without notes (absent, or blank) has none: `null` in the
/// read and in the history entry, never `""`.
#[actix_web::test]
async fn a_decision_or_intercurrence_without_notes_records_null() {
    let w = W::new().await;
    let (id, v) = w.incident_in("awaiting_regulation").await;
    let action = w.action(true).await;
    let r = w
        .post(
            &format!("/incident/{id}/technical-decision"),
            "regulador",
            Some(v),
            json!({"action_id": action, "notes": "  "}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    let v = r.body["version"].as_i64().unwrap() as i32;
    let read = w
        .api
        .get("regulador", &format!("/technical-decision/incident/{id}"))
        .await;
    assert_eq!(read.array()[0]["notes"], Value::Null, "{}", read.body);
    let entry = crate::pickers::last_entry(&w, id).await;
    assert_eq!(entry["changes"].get("notes"), Some(&Value::Null), "{entry}");

    let ic = w.api.get("frota", "/intercurrence").await.array()[0]["id"].clone();
    let r = w
        .post(
            &format!("/incident/{id}/intercurrence"),
            "frota",
            Some(v),
            json!({"intercurrence_id": ic}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    let view = w
        .api
        .get("regulador", &format!("/incident/{id}/occurrence-view"))
        .await;
    assert_eq!(view.ok()["intercurrences"][0]["notes"], Value::Null);
    let entry = crate::pickers::last_entry(&w, id).await;
    assert_eq!(entry["changes"].get("notes"), Some(&Value::Null), "{entry}");
}
