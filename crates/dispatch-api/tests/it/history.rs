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
use crate::support::Reply;

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
    ("occurrence.type", "occurrence_type"),
    ("occurrence.priority", "priority"),
    ("occurrence.notes", "occurrence_notes"),
    ("patient.name", "patient_name"),
    ("patient.age", "patient_age"),
    ("patient.sex", "patient_sex"),
    ("patient.destination", "destination_health_unit_id"),
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

/// A detail value as the history records it: records by id, people as `{id, descriptive_name}`.
fn as_recorded(path: &str, v: &Value) -> Value {
    match path {
        "patient.destination" => v.get("id").cloned().unwrap_or(Value::Null),
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
        assert_eq!(changes["action"], decision["action"]["name"], "{what}");
        assert_eq!(changes["notes"], decision["notes"], "{what}");
        assert_eq!(
            changes["vehicle_type"], decision["vehicle_type"]["name"],
            "{what}"
        );
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

fn version(r: &Reply) -> i32 {
    let v = r.body.get("incident_version").unwrap_or(&r.body["version"]);
    v.as_i64().unwrap() as i32
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
    let usa = w.api.get("frota", "/mobile-unit-type?active=true").await;
    let usa = usa.array().iter().find(|t| t["name"] == "USA").unwrap()["id"].clone();

    // Creation: every field given is recorded from null.
    let r = w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": "Maria Souza", "caller_phone": "(12) 99100-4321",
                   "address": "Rua das Flores, 10", "complaint": "dor no peito",
                   "city": "Taubaté", "priority": "high", "patient_name": "José",
                   "destination_health_unit_id": destination}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let id = r.body["id"].as_i64().unwrap();
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
                   "occurrence_notes": "consciente", "patient_age": 67, "patient_sex": "M",
                   "destination_health_unit_id": null}),
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
            json!({"user_id": other_regulator}),
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
            json!({"action_id": action, "notes": "USA", "mobile_unit_type_id": usa}),
        )
        .await
    })
    .await;
    let unit = w
        .api
        .get(
            "frota",
            &format!("/mobile-unit/options?available=true&type={usa}"),
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
            json!({"user_id": employee}),
        )
        .await
    })
    .await;
    let r = checked(&w, id, "patch by the regulator", async || {
        patch(
            "regulador",
            version(&r),
            json!({"destination_health_unit_id": destination, "priority": "critical",
                   "patient_name": null}),
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
            json!({"user_id": other}),
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
