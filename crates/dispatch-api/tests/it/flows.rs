//! Each write: who may call it, its body, its effect and its history.

use actix_web::http::Method;
use serde_json::{Value, json};

use crate::client::W;

#[actix_web::test]
async fn create_answers_201_with_location_etag_and_history() {
    let w = W::new().await;
    let r = w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": "Ana", "caller_phone": "12 3456-7890", "address": "Av. Brasil 1",
                   "complaint": "queda", "city": "Taubaté",
                   "occurrence": {"priority": "high"}}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let id = r.body["id"].as_i64().unwrap();
    assert_eq!(
        r.body,
        json!({"id": id, "version": 1, "state": "registering"})
    );
    assert_eq!(
        r.header("location"),
        Some(format!("/incident/{id}").as_str())
    );
    assert_eq!(r.header("etag"), Some("\"1\""));
    let d = w
        .api
        .get("tarm", &format!("/incident/{id}?include_history=true"))
        .await;
    let d = d.ok();
    assert_eq!(d["basic_data"]["city"], "Taubaté");
    assert_eq!(d["occurrence"]["priority"], "high");
    let h = &d["history"][0];
    assert_eq!(h["action"], "created");
    assert_eq!(h["version"], 1);
    assert_eq!(h["user"]["id"], w.api.id("tarm"));
    assert_eq!(
        h["changes"]["state"],
        json!({"from": null, "to": "registering"})
    );
    assert_eq!(
        h["changes"]["caller_name"],
        json!({"from": null, "to": "Ana"})
    );
    assert_eq!(
        h["changes"]["occurrence.priority"],
        json!({"from": null, "to": "high"})
    );
}

/// The occurrence type is one of the catalogue's active types (`GET /shared/default-values`
/// lists them): another is 400 naming the field and the allowed values, on create and on
/// PATCH, and nothing is written; a type stored before it was retired is not judged again
/// while another field changes (docs/dispatch-routes.md, "Occurrence types").
#[actix_web::test]
async fn the_occurrence_type_is_one_of_the_catalogues() {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use dispatch_api::schema::dispatch::occurrence_types;

    let w = W::new().await;
    let allowed = json!([
        "Clínico",
        "Obstétrico",
        "Pediátrico",
        "Psiquiátrico",
        "Trauma"
    ]);
    let listed = w.api.get("tarm", "/shared/default-values").await;
    let names: Vec<Value> = listed.ok()["occurrence_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t.as_object().unwrap().len(), 2, "{{id, name}}: {t}");
            t["name"].clone()
        })
        .collect();
    assert_eq!(json!(names), allowed);
    let before = w.incidents().await;
    let call = |kind: &str| {
        json!({"caller_name": "Ana", "caller_phone": "12 3456-7890", "address": "Av. Brasil 1",
               "complaint": "queda", "occurrence": {"type": kind}})
    };
    for unknown in ["Queimadura", "trauma", "Trauma "] {
        let r = w.post("/incident", "tarm", None, call(unknown)).await;
        assert_eq!(
            r.problem(400, "invalid_payload").as_deref(),
            Some("occurrence.type"),
            "{unknown:?}"
        );
        assert_eq!(r.body["allowed_values"], allowed);
        assert_eq!(
            r.body["errors"][0]["message"],
            "must be one of: Clínico, Obstétrico, Pediátrico, Psiquiátrico, Trauma"
        );
    }
    assert_eq!(w.incidents().await, before, "nothing created");
    let r = w.post("/incident", "tarm", None, call("Trauma")).await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let id = r.body["id"].as_i64().unwrap();
    let read =
        async || w.api.get("tarm", &format!("/incident/{id}")).await.ok()["occurrence"].clone();
    assert_eq!(read().await["type"], "Trauma");

    // The centre retires "Trauma": no longer offered, no longer accepted as a new value, yet
    // the incident that has it takes other changes.
    diesel::update(occurrence_types::table.filter(occurrence_types::name.eq("Trauma")))
        .set(occurrence_types::active.eq(false))
        .execute(&mut w.api.conn().await)
        .await
        .unwrap();
    let state = w.api.state();
    state.catalog.refresh(&state.pool).await.unwrap();
    let listed = w.api.get("tarm", "/shared/default-values").await;
    assert!(
        listed.ok()["occurrence_types"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["name"] != "Trauma")
    );
    let patch = async |v: i32, body: Value| {
        w.call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "tarm",
            Some(v),
            Some(body),
        )
        .await
    };
    let r = patch(
        1,
        json!({"occurrence": {"priority": "high", "type": "Trauma"}}),
    )
    .await;
    assert_eq!(r.ok()["version"], 2);
    assert_eq!(read().await["priority"], "high");
    let (other, _) = w.incident_in("registering").await;
    let r = w
        .call(
            Method::PATCH,
            &format!("/incident/{other}"),
            "tarm",
            Some(1),
            Some(json!({"occurrence": {"type": "Trauma"}})),
        )
        .await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("occurrence.type")
    );
    assert_eq!(
        r.body["allowed_values"],
        json!(["Clínico", "Obstétrico", "Pediátrico", "Psiquiátrico"])
    );
    assert_eq!(w.version(other).await, 1);
    // Another type, then none: both fine.
    let r = patch(2, json!({"occurrence": {"type": "Clínico"}})).await;
    assert_eq!(r.ok()["version"], 3);
    let r = patch(3, json!({"occurrence": {"type": null}})).await;
    assert_eq!(r.ok()["version"], 4);
    assert_eq!(read().await["type"], Value::Null);
}

#[actix_web::test]
async fn bodies_are_validated_with_the_field_named() {
    let w = W::new().await;
    let base = json!({"caller_name": "Ana", "caller_phone": "12 3456-7890",
                      "address": "Av. Brasil 1", "complaint": "queda"});
    let with = |k: &str, v: Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    let cases = [
        (with("caller_name", json!("  ")), "caller_name"),
        (with("caller_phone", json!("abc")), "caller_phone"),
        (with("complaint", json!("x".repeat(4001))), "complaint"),
        (
            with("occurrence", json!({"priority": "urgent"})),
            "occurrence.priority",
        ),
        (with("patient", json!({"age": 200})), "patient.age"),
        (with("surprise", json!(1)), ""),
        (with("caller_name", json!(5)), "caller_name"),
        // PostgreSQL's text cannot hold a NUL: refused here, not a 500 from the database.
        (with("caller_name", json!("Ana\u{0}")), "caller_name"),
        (with("complaint", json!("queda\u{7}")), "complaint"),
    ];
    for (body, field) in cases {
        let r = w.post("/incident", "tarm", None, body).await;
        assert_eq!(r.status.as_u16(), 400, "{field}: {}", r.body);
        assert_eq!(r.body["code"], "invalid_payload");
        assert!(r.body.to_string().contains(field), "{field}: {}", r.body);
    }
    // Line breaks and tabs are free text.
    let multiline = with("complaint", json!("queda na escada\n\tbateu a cabeça"));
    let r = w.post("/incident", "tarm", None, multiline).await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let mut missing = base.clone();
    missing.as_object_mut().unwrap().remove("address");
    let r = w.post("/incident", "tarm", None, missing).await;
    r.problem(400, "invalid_payload");
    assert!(r.body["detail"].as_str().unwrap().contains("address"));
    let (id, v) = w.create().await;
    let r = w
        .call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "tarm",
            Some(v),
            Some(json!({})),
        )
        .await;
    r.problem(400, "invalid_payload");
    let r = w
        .call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "tarm",
            Some(v),
            Some(json!({"related_incident_id": 999999999})),
        )
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("related_incident_id")
    );
}

const PHONE: &str = "must be a phone number: 8 to 15 digits, optionally with + - ( ) . or spaces";

/// `errors` as `(field, message)` pairs, in order.
fn errors(body: &Value) -> Vec<(&str, &str)> {
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors: {body}"))
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect()
}

#[actix_web::test]
async fn every_bad_or_missing_field_of_a_body_is_named_at_once() {
    let w = W::new().await;
    // A field missing (serde stopped here) and one that breaks a rule (judged after it).
    let r = w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": "Ana", "caller_phone": "12 9812", "address": "Av. Brasil 1"}),
        )
        .await;
    r.problem(400, "invalid_payload");
    assert_eq!(
        r.body,
        json!({
            "type": "urn:problem-type:invalid_payload",
            "title": "Bad Request",
            "status": 400,
            "detail": format!("body fields `caller_phone`: {PHONE}; `complaint`: is required"),
            "code": "invalid_payload",
            "errors": [
                {"field": "caller_phone", "message": PHONE},
                {"field": "complaint", "message": "is required"},
            ],
        })
    );
    // Every kind of fault at once, in the form's order, unknown fields last.
    let r = w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": 5, "caller_phone": "12 9812",
                   "occurrence": {"priority": "urgent"},
                   "patient": {"age": "40", "sex": "F"}, "related_incident_id": 1.5,
                   "surprise": true}),
        )
        .await;
    r.problem(400, "invalid_payload");
    assert_eq!(
        errors(&r.body),
        [
            ("caller_name", "must be a string, not a number"),
            ("caller_phone", PHONE),
            ("address", "is required"),
            ("complaint", "is required"),
            ("related_incident_id", "must be an integer, not 1.5"),
            (
                "occurrence.priority",
                "must be one of low, medium, high, critical"
            ),
            ("patient.age", "must be an integer, not a string"),
            (
                "surprise",
                "is not a field of this body; its fields are `caller_name`, `caller_phone`, \
                 `address`, `complaint`, `city`, `related_incident_id`, `occurrence`, \
                 `patient`, `call_received_at`, `call_id`"
            ),
        ]
    );

    // The same for a PATCH of the forms, and for the other writes' bodies.
    let (id, v) = w.create().await;
    let r = w
        .call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "tarm",
            Some(v),
            Some(json!({"patient": {"age": "x"}, "occurrence": {"priority": "urgent"}})),
        )
        .await;
    r.problem(400, "invalid_payload");
    assert_eq!(
        errors(&r.body),
        [
            (
                "occurrence.priority",
                "must be one of low, medium, high, critical"
            ),
            ("patient.age", "must be an integer, not a string"),
        ]
    );
    let r = w
        .post(
            &format!("/incident/{id}/cancel"),
            "tarm",
            Some(v),
            json!({"reason": 7, "why": "x"}),
        )
        .await;
    assert_eq!(
        errors(&r.body),
        [
            ("reason", "must be a string, not a number"),
            (
                "why",
                "is not a field of this body; its fields are `reason`"
            ),
        ]
    );
    let r = w
        .post(
            &format!("/incident/{id}/submit"),
            "tarm",
            Some(v),
            json!({"x": 1}),
        )
        .await;
    assert_eq!(
        errors(&r.body),
        [(
            "x",
            "is not a field of this body, which has none (send `{}`)"
        )]
    );
    assert_eq!(w.version(id).await, v, "nothing refused changed anything");
    let (id, v) = w.incident_in("regulated").await;
    let r = w
        .post(
            &format!("/incident/{id}/dispatch"),
            "frota",
            Some(v),
            json!({"mobile_unit_id": "7", "override_reason": " "}),
        )
        .await;
    assert_eq!(
        errors(&r.body),
        [
            ("mobile_unit_id", "must be an integer, not a string"),
            ("override_reason", "must not be empty"),
        ]
    );
    assert_eq!(w.version(id).await, v, "nothing refused changed anything");
    // A body that is not JSON, or not an object, still names no field.
    let r = w
        .post(
            &format!("/incident/{id}/close"),
            "regulador",
            Some(v),
            json!([]),
        )
        .await;
    r.problem(400, "invalid_payload");
    assert!(r.body.get("errors").is_none(), "{}", r.body);
}

#[actix_web::test]
async fn each_write_is_refused_to_the_other_profiles() {
    let w = W::new().await;
    let (id, v) = w.create().await;
    let routes: &[(&str, &[&str])] = &[
        ("/incident", &["tarm"]),
        ("submit", &["tarm"]),
        ("cancel", &["tarm", "regulador"]),
        ("prank-call", &["tarm", "regulador"]),
        ("technical-decision", &["regulador"]),
        ("send-to", &["regulador"]),
        ("dispatch", &["frota"]),
        ("intercurrence", &["frota"]),
        ("transfer", &["frota"]),
        ("close", &["regulador"]),
    ];
    for (route, allowed) in routes {
        let uri = if route.starts_with('/') {
            (*route).to_owned()
        } else {
            format!("/incident/{id}/{route}")
        };
        for login in ["admin", "tarm", "regulador", "frota"] {
            if allowed.contains(&login) {
                continue;
            }
            let r = w.post(&uri, login, Some(v), json!({})).await;
            r.problem(403, "forbidden");
        }
    }
    for login in ["admin", "frota"] {
        let r = w
            .call(
                Method::PATCH,
                &format!("/incident/{id}"),
                login,
                Some(v),
                Some(json!({"city": "x"})),
            )
            .await;
        r.problem(403, "forbidden");
    }
    for login in ["admin", "tarm", "regulador"] {
        let r = w
            .post(
                "/dispatch/1/status",
                login,
                None,
                json!({"status": "en_route"}),
            )
            .await;
        r.problem(403, "forbidden");
    }
    assert_eq!(w.version(id).await, v, "nothing refused changed anything");
}

async fn history(w: &W, id: i64) -> Vec<Value> {
    let d = w
        .api
        .get("tarm", &format!("/incident/{id}?include_history=true"))
        .await;
    d.ok()["history"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn a_whole_attendance_with_its_history() {
    let w = W::new().await;
    let (id, v) = w.create().await;
    let uri = |a: &str| format!("/incident/{id}/{a}");
    // PATCH records only what changed, with before and after.
    let r = w
        .call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "tarm",
            Some(v),
            Some(json!({"patient": {"name": "José", "sex": "M"}, "caller_name": "Maria Souza"})),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    let h = history(&w, id).await;
    let last = h.last().unwrap();
    assert_eq!(last["action"], "updated");
    assert_eq!(last["version"], v);
    assert_eq!(
        last["changes"],
        json!({"patient.name": {"from": null, "to": "José"},
               "patient.sex": {"from": null, "to": "M"}})
    );
    let v = w.step(id, v, "submit").await;
    // A deleted or inactive action is 422 naming action_id.
    let bad = w.action(false).await;
    let r = w
        .post(
            &uri("technical-decision"),
            "regulador",
            Some(v),
            json!({"action_id": bad}),
        )
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("action_id")
    );
    let r = w
        .post(
            &uri("technical-decision"),
            "regulador",
            Some(v),
            json!({"action_id": 999999}),
        )
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("action_id")
    );
    let v = w.step(id, v, "decide").await;
    // Send to another regulator: only an active MEDICO_REGULADOR.
    let r = w
        .post(
            &uri("send-to"),
            "regulador",
            Some(v),
            json!({"regulator_id": w.api.id("frota")}),
        )
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("regulator_id")
    );
    // Nobody sends an incident to themself (docs/dispatch-routes.md, "Pickers").
    let r = w
        .post(
            &uri("send-to"),
            "regulador",
            Some(v),
            json!({"regulator_id": w.api.id("regulador")}),
        )
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("regulator_id")
    );
    assert_eq!(
        r.body["errors"][0]["message"],
        format!(
            "user {} is you: an incident is sent to someone else",
            w.api.id("regulador")
        )
    );
    let other = w.api.other_regulator().await;
    let r = w
        .post(
            &uri("send-to"),
            "regulador",
            Some(v),
            json!({"regulator_id": other}),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    // The incident is the other regulator's now, and nothing was written by the refusal.
    let read = w.api.get("regulador", &format!("/incident/{id}")).await;
    assert_eq!(read.ok()["regulation"]["regulator"]["id"], other);
    assert_eq!(read.ok()["version"], v);
    // An inactive unit is refused with its own code.
    let inactive = w.inactive_unit().await;
    let r = w
        .post(
            &uri("dispatch"),
            "frota",
            Some(v),
            json!({"mobile_unit_id": inactive}),
        )
        .await;
    r.problem(409, "unit_inactive");
    let unit = w.free_units().await[0];
    let r = w
        .post(
            &uri("dispatch"),
            "frota",
            Some(v),
            json!({"mobile_unit_id": unit}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let d = r.body["id"].as_i64().unwrap();
    assert_eq!(
        r.body,
        json!({"id": d, "status": "assigned", "version": v + 1})
    );
    let v = v + 1;
    // Close is refused while the unit is assigned.
    let r = w
        .post(
            &uri("close"),
            "regulador",
            Some(v),
            json!({"conclusion": "ok"}),
        )
        .await;
    r.problem(409, "unit_assigned");
    // The unit's steps: in order, skipping transport is allowed, never backwards.
    let status = |s: &str| json!({"status": s});
    let st = format!("/dispatch/{d}/status");
    let r = w.post(&st, "frota", None, status("on_scene")).await;
    r.problem(409, "invalid_transition");
    let r = w.post(&st, "frota", None, status("parked")).await;
    assert_eq!(r.problem(400, "invalid_payload").as_deref(), Some("status"));
    let r = w.post(&st, "frota", None, status("en_route")).await;
    assert_eq!(r.ok()["version"], v + 1);
    let r = w.post(&st, "frota", None, status("on_scene")).await;
    assert_eq!(r.ok()["status"], "on_scene");
    let r = w.post(&st, "frota", None, status("en_route")).await;
    r.problem(409, "invalid_transition");
    let mut v = v + 2;
    // Intercurrence and transfer while dispatched.
    let r = w
        .post(
            &uri("intercurrence"),
            "frota",
            Some(v),
            json!({"intercurrence_id": 999999}),
        )
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("intercurrence_id")
    );
    let ic = w.api.get("frota", "/intercurrence").await;
    let ic = ic.array()[0]["id"].as_i64().unwrap();
    let r = w
        .post(
            &uri("intercurrence"),
            "frota",
            Some(v),
            json!({"intercurrence_id": ic, "notes": "pneu furado"}),
        )
        .await;
    v = r.ok()["version"].as_i64().unwrap() as i32;
    let emp = w.api.get("frota", "/employee/search").await;
    let emp = emp.array()[0]["id"].as_i64().unwrap();
    let r = w
        .post(
            &uri("transfer"),
            "frota",
            Some(v),
            json!({"assigned_to_id": emp}),
        )
        .await;
    v = r.ok()["version"].as_i64().unwrap() as i32;
    let r = w.post(&st, "frota", None, status("released")).await;
    assert_eq!(r.ok()["version"], v + 1);
    v += 1;
    let r = w.post(&st, "frota", None, status("released")).await;
    r.problem(409, "invalid_transition");
    let r = w
        .post("/dispatch/999999/status", "frota", None, status("released"))
        .await;
    r.problem(404, "not_found");
    let r = w
        .post(
            &uri("close"),
            "regulador",
            Some(v),
            json!({"conclusion": " "}),
        )
        .await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("conclusion")
    );
    let r = w
        .post(
            &uri("close"),
            "regulador",
            Some(v),
            json!({"conclusion": "Paciente removido."}),
        )
        .await;
    assert_eq!(r.ok()["state"], "closed");
    let v = v + 1;
    // The whole history: one row per write, versions 1..=v, in order.
    let h = history(&w, id).await;
    let actions: Vec<&str> = h.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(
        actions,
        [
            "created",
            "updated",
            "submitted",
            "technical_decision",
            "sent_to",
            "dispatched",
            "dispatch_status",
            "dispatch_status",
            "intercurrence",
            "transferred",
            "dispatch_status",
            "closed"
        ]
    );
    let versions: Vec<i64> = h.iter().map(|e| e["version"].as_i64().unwrap()).collect();
    assert_eq!(versions, (1..=i64::from(v)).collect::<Vec<_>>());
    assert_eq!(
        h[2]["changes"]["state"],
        json!({"from": "registering", "to": "awaiting_regulation"})
    );
    assert_eq!(h[3]["user"]["id"], w.api.id("regulador"));
    assert_eq!(
        h[7]["changes"]["dispatch"]["status"],
        json!({"from": "en_route", "to": "on_scene"})
    );
    assert_eq!(h[11]["changes"]["conclusion"]["to"], "Paciente removido.");
    // Step times never go backwards.
    let units = w
        .api
        .get("frota", &format!("/dispatch/incident/{id}"))
        .await;
    let _ = units;
    let d = w
        .api
        .get("regulador", &format!("/incident/{id}/occurrence-view"))
        .await;
    let t = &d.ok()["dispatches"][0]["times"];
    let at = |k: &str| t[k].as_str().map(str::to_owned);
    assert!(at("assigned_at") <= at("en_route_at"));
    assert!(at("en_route_at") <= at("on_scene_at"));
    assert!(at("on_scene_at") <= at("released_at"));
    assert!(t["transporting_at"].is_null());
    assert_eq!(
        d.ok()["incident"]["conclusion"]["text"],
        "Paciente removido."
    );
}

#[actix_web::test]
async fn prank_records_the_phone_and_final_states_take_nothing() {
    let w = W::new().await;
    let (id, v) = w.create().await;
    let r = w
        .post(
            &format!("/incident/{id}/prank-call"),
            "regulador",
            Some(v),
            json!({}),
        )
        .await;
    assert_eq!(r.ok()["state"], "prank");
    let number = w.api.get("tarm", &format!("/incident/{id}")).await.ok()["number"].clone();
    assert!(number.is_string(), "{number}");
    let p = w.api.get("tarm", "/incident/prank-calls/12991004321").await;
    // The call lists the incident with its number as the incident shows it.
    let listed: Vec<_> = p.ok()["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["incident_id"] == id)
        .collect();
    assert_eq!(listed.len(), 1, "{}", p.body);
    assert_eq!(listed[0]["number"], number, "{}", p.body);
    let r = w
        .call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "tarm",
            Some(v + 1),
            Some(json!({"city": "x"})),
        )
        .await;
    r.problem(409, "invalid_transition");
    let r = w
        .post(
            &format!("/incident/{id}/prank-call"),
            "tarm",
            Some(v + 1),
            json!({"x": 1}),
        )
        .await;
    r.problem(400, "invalid_payload");
}

/// A date that does not parse says the form it takes, and a missing one is named as
/// required (docs/dispatch-routes.md, "Query parameters"): in a body, in a query, and in
/// the position a unit's tracker sends.
#[actix_web::test]
async fn a_bad_or_missing_date_says_what_to_send() {
    let w = W::new().await;
    let expect = |r: &crate::support::Reply, field: &str, message: &str| {
        assert_eq!(r.status.as_u16(), 400, "{}", r.body);
        let errors = r.body["errors"].as_array().expect("errors");
        assert!(
            errors
                .iter()
                .any(|e| e["field"] == field && e["message"] == message),
            "{field}: {}",
            r.body
        );
    };
    let hint = common::extract::DATE_TIME_MESSAGE;
    let r = w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": "Maria Souza", "caller_phone": "(12) 99100-4321",
                   "address": "Rua das Flores, 10", "complaint": "dor no peito",
                   "call_received_at": "2026-11-01"}),
        )
        .await;
    expect(&r, "call_received_at", hint);
    let r = w
        .api
        .get("admin", "/reports/response-times?from=2026-11-01")
        .await;
    expect(&r, "from", hint);
    let unit = w.free_units().await[0];
    let r = w
        .post(
            &format!("/mobile-unit/{unit}/position"),
            "frota",
            None,
            json!({"location": {"lat": -23.18, "lon": -45.88}}),
        )
        .await;
    expect(&r, "recorded_at", "is required");
    let r = w
        .post(
            &format!("/mobile-unit/{unit}/position"),
            "frota",
            None,
            json!({"location": {"lat": -23.18, "lon": -45.88}, "recorded_at": "agora"}),
        )
        .await;
    expect(&r, "recorded_at", hint);
    // A latitude off the globe and a time in the future: both named at once.
    let later = w.api.state().clock.now() + chrono::Duration::hours(2);
    let r = w
        .post(
            &format!("/mobile-unit/{unit}/position"),
            "frota",
            None,
            json!({"location": {"lat": 91.0, "lon": -45.88}, "recorded_at": later}),
        )
        .await;
    let named: Vec<&str> = r.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(named, ["location.lat", "recorded_at"], "{}", r.body);
}
