//! Patient data is recorded by construction (docs/dispatch-access-log.md, "What is
//! recorded"): every GET route of the OpenAPI document, called by every profile on a seeded
//! incident, that answers a patient field (`patient_data::PATIENT_FIELDS`) has recorded an
//! access-log entry for that person, each incident it shows and that route; every view with
//! a patient field is answered by a recorded route, and no WebSocket message carries one.

use std::collections::{BTreeSet, HashMap, HashSet};

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::patient_data::{AccessRoute, PATIENT_FIELDS};
use dispatch_api::schema::dispatch::{dispatches, incidents, prank_calls, technical_decisions};
use serde_json::Value;

use crate::support::Api;
use crate::support::access_log_view::patient_access_log;

const PROFILES: [&str; 4] = ["admin", "tarm", "regulador", "frota"];

/// GET routes the walker does not call, and why.
const NOT_WALKED: &[(&str, &str)] = &[
    ("/healthz", "operational: no data"),
    ("/readyz", "operational: no data"),
    ("/metrics", "operational: no data"),
    (
        "/ws",
        "the socket's upgrade: every message type it sends is walked in the document below",
    ),
    (
        "/phone-credentials",
        "a softphone's account, no incident's data; answered only with the telephone \
         configured (telephony.rs)",
    ),
    (
        "/telephony/calls/{call_id}",
        "a call as the switch told it (a number and its times, no incident's data); there is \
         none in the seed (telephony.rs)",
    ),
];

/// Patient field names that, in one place, are not a patient's: (the schema that holds it,
/// where it is at run time: the key of that schema in its parent, or the route, the field,
/// why).
const NOT_A_PATIENTS: &[(&str, &str, &str, &str)] = &[
    (
        "UnitWhereabouts",
        "position",
        "location",
        "a unit's position (its reported one, or its base's)",
    ),
    (
        "EmployeeRecord",
        "/employee/user_id/{id}",
        "phone",
        "an employee's own work phone",
    ),
];

/// The query a route needs to answer (its required parameters), or what makes it show more.
const QUERIES: &[(&str, &str)] = &[
    ("/incident/{id}", "include_history=true"),
    ("/user/search", "q=a"),
    ("/employee/search", "query=a"),
    ("/health-unit", "q=sao"),
    ("/unallocated", "page=1&page_size=20"),
];

fn excused(place: &str, field: &str) -> bool {
    NOT_A_PATIENTS
        .iter()
        .any(|(schema, at, f, _)| *f == field && (*schema == place || *at == place))
}

/// The patient fields in a response body; `parent` is the key the value is under.
fn fields_in(route: &str, v: &Value, parent: &str, found: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if PATIENT_FIELDS.contains(&k.as_str()) && !excused(parent, k) && !excused(route, k)
                {
                    found.insert(k.clone());
                }
                fields_in(route, v, k, found);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| fields_in(route, v, parent, found)),
        _ => {}
    }
}

/// The incidents a body shows: those whose number it carries.
fn incidents_in(v: &Value, numbers: &HashMap<String, i64>, shown: &mut BTreeSet<i64>) {
    match v {
        Value::String(s) => shown.extend(numbers.get(s)),
        Value::Object(m) => m.values().for_each(|v| incidents_in(v, numbers, shown)),
        Value::Array(a) => a.iter().for_each(|v| incidents_in(v, numbers, shown)),
        _ => {}
    }
}

/// The values of a route's path parameters, from the seeded incident.
struct Seeded {
    incident: i64,
    phone: String,
    unit: i64,
    user: i64,
}

impl Seeded {
    /// `path` with its parameters filled, and whether its `{id}` is the incident's.
    fn fill(&self, path: &str) -> (String, bool) {
        let of_incident = path.starts_with("/incident/{id}")
            || path.ends_with("/incident/{id}")
            || path.starts_with("/dispatch/bff/dispatch-data/");
        let id = if of_incident {
            self.incident
        } else if path.starts_with("/user/") || path.starts_with("/employee/") {
            self.user
        } else if path.starts_with("/mobile-unit/") {
            self.unit
        } else {
            assert!(
                !path.contains("{id}"),
                "{path}: which record is its {{id}}? Teach the walker (Seeded::fill)"
            );
            0
        };
        let filled = path
            .replace("{id}", &id.to_string())
            .replace("{phone_number}", &self.phone);
        assert!(
            !filled.contains('{'),
            "{path}: a parameter the walker cannot fill"
        );
        (filled, of_incident)
    }
}

/// The incident with a technical decision and a unit (the most a screen shows), the phone of
/// a prank call, a unit on the incident and a person.
async fn seeded(api: &Api) -> Seeded {
    let mut conn = api.conn().await;
    let incident: i64 = incidents::table
        .filter(diesel::dsl::exists(
            technical_decisions::table.filter(technical_decisions::incident_id.eq(incidents::id)),
        ))
        .filter(diesel::dsl::exists(
            dispatches::table.filter(dispatches::incident_id.eq(incidents::id)),
        ))
        .select(incidents::id)
        .order_by(incidents::id)
        .first(&mut conn)
        .await
        .unwrap();
    let unit: i64 = dispatches::table
        .filter(dispatches::incident_id.eq(incident))
        .select(dispatches::mobile_unit_id)
        .first(&mut conn)
        .await
        .unwrap();
    let phone: String = prank_calls::table
        .select(prank_calls::phone_key)
        .order_by(prank_calls::id)
        .first(&mut conn)
        .await
        .unwrap();
    Seeded {
        incident,
        phone,
        unit,
        user: api.id("tarm"),
    }
}

async fn last_entry(api: &Api) -> i64 {
    patient_access_log::table
        .select(diesel::dsl::max(patient_access_log::batch_id))
        .first::<Option<i64>>(&mut api.conn().await)
        .await
        .unwrap()
        .unwrap_or(0)
}

/// (incident, user, route) of the entries after `after`.
async fn entries_after(api: &Api, after: i64) -> HashSet<(i64, i64, String)> {
    api.state().access_log.flush().await;
    patient_access_log::table
        .filter(patient_access_log::batch_id.gt(after))
        .select((
            patient_access_log::incident_id,
            patient_access_log::user_id,
            patient_access_log::route,
        ))
        .load::<(i64, i64, String)>(&mut api.conn().await)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

#[actix_web::test]
async fn every_get_route_that_answers_patient_data_records_each_incident_it_shows() {
    let api = Api::new().await;
    let seeded = seeded(&api).await;
    let numbers: HashMap<String, i64> = incidents::table
        .select((incidents::number, incidents::id))
        .load::<(String, i64)>(&mut api.conn().await)
        .await
        .unwrap()
        .into_iter()
        .collect();
    let doc = api.get_as(None, "/openapi.json").await.ok().clone();
    let mut failures = Vec::new();
    let mut recorded_routes = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        if item.get("get").is_none() || NOT_WALKED.iter().any(|(p, _)| p == path) {
            continue;
        }
        let route = format!("GET {path}");
        let (mut uri, of_incident) = seeded.fill(path);
        if let Some((_, query)) = QUERIES.iter().find(|(p, _)| p == path) {
            uri = format!("{uri}?{query}");
        }
        let mut answered = false;
        for login in PROFILES {
            let before = last_entry(&api).await;
            let r = api.get(login, &uri).await;
            if !r.status.is_success() {
                continue;
            }
            answered = true;
            let mut found = BTreeSet::new();
            fields_in(path, &r.body, "", &mut found);
            if found.is_empty() {
                continue;
            }
            let mut shown = BTreeSet::new();
            incidents_in(&r.body, &numbers, &mut shown);
            if of_incident {
                shown.insert(seeded.incident);
            }
            if shown.is_empty() {
                failures.push(format!(
                    "{route} as {login}: carries {found:?} of no incident the walker knows"
                ));
            }
            let written = entries_after(&api, before).await;
            let user = api.id(login);
            for incident in shown {
                if !written.contains(&(incident, user, route.clone())) {
                    failures.push(format!(
                        "{route} as {login}: answered {found:?} of incident {incident} and \
                         recorded no access-log entry for that person, incident and route"
                    ));
                }
            }
            recorded_routes.insert(route.clone());
        }
        if !answered {
            failures.push(format!(
                "{route}: no profile was answered 2xx at {uri}; give the walker its query (QUERIES)"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The walk reached the routes that show patient data (a seeding that showed none would
    // prove nothing).
    for route in [
        AccessRoute::Detail,
        AccessRoute::Mask,
        AccessRoute::PrankCalls,
        AccessRoute::UnitRecommendation,
        AccessRoute::DispatchData,
        AccessRoute::TechnicalDecisions,
    ] {
        assert!(
            recorded_routes.contains(route.as_str()),
            "{route} showed no patient field: {recorded_routes:?}"
        );
    }
}

/// The patient fields a schema's values can carry; `at` names the schema being walked.
fn schema_fields(
    schemas: &serde_json::Map<String, Value>,
    s: &Value,
    at: &str,
    seen: &mut HashSet<String>,
    found: &mut BTreeSet<String>,
) {
    if let Some(name) = s["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
        if seen.insert(name.to_owned()) {
            schema_fields(schemas, &schemas[name], name, seen, found);
        }
        return;
    }
    if let Some(props) = s["properties"].as_object() {
        for (k, v) in props {
            if PATIENT_FIELDS.contains(&k.as_str()) && !excused(at, k) {
                found.insert(format!("{at}.{k}"));
            }
            schema_fields(schemas, v, at, seen, found);
        }
    }
    for key in ["items", "additionalProperties"] {
        if s[key].is_object() {
            schema_fields(schemas, &s[key], at, seen, found);
        }
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for v in s[key].as_array().into_iter().flatten() {
            schema_fields(schemas, v, at, seen, found);
        }
    }
}

/// The document's side: every GET route whose answer's schema has a patient field is an
/// `AccessRoute` (so its handler answers through the recording path), every `AccessRoute` is
/// a route of the document, and no WebSocket message type has a patient field.
#[test]
fn every_view_with_a_patient_field_is_a_recorded_route_and_no_socket_message_has_one() {
    let doc = serde_json::to_value(dispatch_api::openapi::document()).unwrap();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let paths = doc["paths"].as_object().unwrap();
    let mut failures = Vec::new();
    for (path, item) in paths {
        let Some(op) = item.get("get") else { continue };
        let schema = &op["responses"]["200"]["content"]["application/json"]["schema"];
        let mut found = BTreeSet::new();
        schema_fields(schemas, schema, path, &mut HashSet::new(), &mut found);
        let route = format!("GET {path}");
        if !found.is_empty() && AccessRoute::parse(&route).is_none() {
            failures.push(format!(
                "{route} answers {found:?} and is no AccessRoute: its reads are not recorded"
            ));
        }
    }
    for route in AccessRoute::ALL {
        let path = route.as_str().strip_prefix("GET ").unwrap();
        assert!(
            paths.get(path).and_then(|p| p.get("get")).is_some(),
            "{route} is no GET route of the document"
        );
    }
    let mut found = BTreeSet::new();
    let socket = serde_json::json!({"$ref": "#/components/schemas/WsServerMessage"});
    schema_fields(schemas, &socket, "", &mut HashSet::new(), &mut found);
    if !found.is_empty() {
        failures.push(format!(
            "WebSocket messages carry {found:?}, and a socket's messages are not recorded"
        ));
    }
    let walked = schemas["WsServerMessage"].to_string();
    for message in [
        "subscribed",
        "incident.updated",
        "queue.changed",
        "queue.resync",
        "offload.alert",
        "offload.cleared",
        "unit.step",
        "error",
    ] {
        assert!(walked.contains(message), "{message} not in WsServerMessage");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
