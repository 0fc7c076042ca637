//! `/incident/...` and the per-screen routes.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{dispatches, incident_history, incidents, prank_calls};
use serde_json::Value;

use crate::support::{Api, keys, set};

const DETAIL_KEYS: &[&str] = &[
    "id",
    "number",
    "state",
    "version",
    "call_received_at",
    "created_at",
    "updated_at",
    "created_by",
    "basic_data",
    "occurrence",
    "patient",
    "regulation",
    "conclusion",
];

fn assert_detail_shape(d: &Value) {
    assert_eq!(keys(d), set(DETAIL_KEYS), "{d}");
    assert_eq!(
        keys(&d["basic_data"]),
        set(&[
            "caller_name",
            "caller_phone",
            "address",
            "city",
            "complaint",
            "related_incident_id",
            // docs/dispatch-routes.md, "Positions and a recommendation".
            "location"
        ])
    );
    assert_eq!(keys(&d["occurrence"]), set(&["type", "priority", "notes"]));
    assert_eq!(
        keys(&d["patient"]),
        set(&["name", "age", "sex", "destination"])
    );
    assert_eq!(
        keys(&d["regulation"]),
        set(&["regulator", "regulated_at", "assigned_to"])
    );
    assert_eq!(keys(&d["conclusion"]), set(&["text", "closed_at"]));
    assert_eq!(keys(&d["created_by"]), set(&["id", "descriptive_name"]));
}

fn assert_dispatch_shape(d: &Value) {
    assert_eq!(
        keys(d),
        set(&["id", "status", "mobile_unit", "times", "destination"])
    );
    assert_eq!(
        keys(&d["mobile_unit"]),
        set(&["id", "name", "vehicle_type"])
    );
    assert_eq!(
        keys(&d["times"]),
        set(&[
            "assigned_at",
            "en_route_at",
            "on_scene_at",
            "transporting_at",
            "at_destination_at",
            "handed_over_at",
            "released_at"
        ])
    );
}

/// An incident in `state` (the test scale has every state).
async fn incident_in(api: &Api, state: &str) -> i64 {
    incidents::table
        .filter(incidents::state.eq(state))
        .select(incidents::id)
        .order_by(incidents::id)
        .first(&mut api.conn().await)
        .await
        .unwrap()
}

#[actix_web::test]
async fn the_detail_carries_version_etag_and_history_on_request() {
    let api = Api::new().await;
    let id = incident_in(&api, "closed").await;
    let reply = api.get("tarm", &format!("/incident/{id}")).await;
    let body = reply.ok();
    assert_detail_shape(body);
    assert_eq!(body["state"], "closed");
    let version = body["version"].as_i64().unwrap();
    assert_eq!(
        reply.header("etag"),
        Some(format!("\"{version}\"").as_str())
    );
    assert!(body["conclusion"]["text"].is_string());
    assert!(body["regulation"]["regulator"].is_object());

    let with = api
        .get("regulador", &format!("/incident/{id}?include_history=true"))
        .await;
    let with = with.ok();
    let history = with["history"].as_array().unwrap();
    let rows: i64 = incident_history::table
        .filter(incident_history::incident_id.eq(id))
        .count()
        .get_result(&mut api.conn().await)
        .await
        .unwrap();
    assert_eq!(history.len() as i64, rows);
    assert_eq!(
        history.len() as i64,
        version,
        "one history entry per version"
    );
    for (n, h) in history.iter().enumerate() {
        assert_eq!(
            keys(h),
            set(&["version", "at", "action", "user", "changes"])
        );
        assert_eq!(h["version"], n as i64 + 1);
    }
    assert_eq!(history[0]["action"], "created");
    assert_eq!(history.last().unwrap()["action"], "closed");
    let mut without = with.clone();
    without.as_object_mut().unwrap().remove("history");
    assert_eq!(&without, body);
    let explicit = api
        .get("tarm", &format!("/incident/{id}?include_history=false"))
        .await;
    assert_eq!(explicit.ok(), body);
}

#[actix_web::test]
async fn detail_parameters_and_ids_are_checked() {
    let api = Api::new().await;
    for (uri, field) in [
        ("/incident/1?include_history=yes", "include_history"),
        ("/incident/1?include_history=1", "include_history"),
        ("/incident/1?include_history=TRUE", "include_history"),
        ("/incident/abc", "id"),
        ("/incident/1.5", "id"),
        ("/incident/abc/regulation", "id"),
        ("/mobile-unit/incident/x", "id"),
        ("/technical-decision/incident/x", "id"),
        ("/dispatch/bff/dispatch-data/x", "id"),
    ] {
        let reply = api.get("regulador", uri).await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some(field.into()),
            "{uri}"
        );
    }
    for (login, uri) in [
        ("tarm", "/incident/999999"),
        ("frota", "/incident/999999/unit-selection"),
        ("frota", "/incident/999999/fleet-summary"),
        ("frota", "/incident/999999/fleet-occurrence"),
        ("regulador", "/incident/999999/regulation"),
        ("regulador", "/incident/999999/occurrence-view"),
        ("frota", "/mobile-unit/incident/999999"),
        ("frota", "/dispatch/incident/999999"),
        ("frota", "/dispatch/bff/dispatch-data/999999"),
        ("regulador", "/technical-decision/incident/999999"),
    ] {
        api.get(login, uri).await.problem(404, "not_found");
    }
}

/// The keys of every row of `GET /incident/mask`.
pub const MASK_ROW_KEYS: &[&str] = &[
    "id",
    "number",
    "state",
    "caller_name",
    "patient_name",
    "address",
    "created_at",
    "priority",
    "complaint",
    "waiting_since",
    "requested_vehicle_type",
];

#[actix_web::test]
async fn the_mask_searches_names_phones_and_numbers() {
    let api = Api::new().await;
    let all = api.get("tarm", "/incident/mask").await;
    let all = all.array();
    assert_eq!(all.len(), 20, "at most 20, newest first");
    for i in all {
        assert_eq!(keys(i), set(MASK_ROW_KEYS));
    }
    let created: Vec<&str> = all
        .iter()
        .map(|i| i["created_at"].as_str().unwrap())
        .collect();
    let mut newest_first = created.clone();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(created, newest_first);

    let (id, number, caller, phone): (i64, String, String, String) = incidents::table
        .filter(
            incidents::caller_name
                .like("%ã%")
                .or(incidents::caller_name.like("%é%"))
                .or(incidents::caller_name.like("%ô%")),
        )
        .select((
            incidents::id,
            incidents::number,
            incidents::caller_name,
            incidents::caller_phone,
        ))
        .first(&mut api.conn().await)
        .await
        .unwrap();
    // Words are searched among recent incidents (docs/dispatch-routes.md, "Incident search"):
    // this one is made recent, whatever the day the test runs.
    diesel::update(incidents::table.find(id))
        .set(incidents::created_at.eq(chrono::Utc::now()))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
    let folded = dispatch_api::search::fold(&caller)
        .to_uppercase()
        .replace(' ', "%20");
    let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
    for q in [folded, number.clone(), digits] {
        let found = api
            .get("tarm", &format!("/incident/mask?q={q}&limit=20"))
            .await;
        assert!(
            found.array().iter().any(|i| i["id"] == id),
            "{q} should find {number} ({caller})"
        );
    }
    let one = api.get("tarm", &format!("/incident/mask?q={number}")).await;
    assert_eq!(one.array()[0]["id"], id, "the exact number first");
    assert!(
        api.get("tarm", "/incident/mask?q=zzzzqqq")
            .await
            .array()
            .is_empty()
    );
}

#[actix_web::test]
async fn prank_calls_by_phone_in_any_format() {
    let api = Api::new().await;
    let (phone, count): (String, i64) = prank_calls::table
        .group_by(prank_calls::phone)
        .select((prank_calls::phone, diesel::dsl::count_star()))
        .order_by(diesel::dsl::count_star().desc())
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
    let encoded = phone
        .replace('(', "%28")
        .replace(')', "%29")
        .replace(' ', "%20");
    let a = api
        .get("regulador", &format!("/incident/prank-calls/{encoded}"))
        .await;
    let b = api
        .get("tarm", &format!("/incident/prank-calls/{digits}"))
        .await;
    assert_eq!(a.ok(), b.ok());
    let body = a.ok();
    assert_eq!(keys(body), set(&["phone", "total", "calls"]));
    assert_eq!(body["phone"], digits.as_str());
    assert_eq!(body["total"], count);
    for c in body["calls"].as_array().unwrap() {
        assert_eq!(keys(c), set(&["incident_id", "number", "recorded_at"]));
    }
    let none = api.get("tarm", "/incident/prank-calls/1100000000").await;
    assert_eq!(none.ok()["total"], 0);
    for bad in ["abc", "12", "1234567890123456", "12%3B%20drop"] {
        let reply = api
            .get("tarm", &format!("/incident/prank-calls/{bad}"))
            .await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some("phone_number".into()),
            "{bad}"
        );
    }
}

#[actix_web::test]
async fn regulation_and_occurrence_view_in_one_response() {
    let api = Api::new().await;
    let id = incident_in(&api, "dispatched").await;
    let reg = api
        .get("regulador", &format!("/incident/{id}/regulation"))
        .await;
    let body = reg.ok();
    assert_eq!(
        keys(body),
        set(&["incident", "mobile_units", "prank_calls", "intercurrences"])
    );
    assert_detail_shape(&body["incident"]);
    assert_eq!(
        reg.header("etag"),
        Some(format!("\"{}\"", body["incident"]["version"]).as_str())
    );
    let units = body["mobile_units"].as_array().unwrap();
    assert_eq!(units.len(), 1);
    assert_dispatch_shape(&units[0]);
    assert_ne!(units[0]["status"], "released");
    let detail = api.get("regulador", &format!("/incident/{id}")).await;
    assert_eq!(&body["incident"], detail.ok());
    let phone = body["incident"]["basic_data"]["caller_phone"]
        .as_str()
        .unwrap();
    let pranks = api
        .get(
            "regulador",
            &format!(
                "/incident/prank-calls/{}",
                phone.replace(['(', ')', ' ', '-'], "")
            ),
        )
        .await;
    assert_eq!(&body["prank_calls"], pranks.ok());
    let units_route = api
        .get("frota", &format!("/mobile-unit/incident/{id}"))
        .await;
    assert_eq!(&body["mobile_units"], units_route.ok());
    let dispatch_route = api.get("frota", &format!("/dispatch/incident/{id}")).await;
    assert_eq!(&body["mobile_units"], dispatch_route.ok());

    let view = api
        .get("tarm", &format!("/incident/{id}/occurrence-view"))
        .await;
    let view = view.ok();
    assert_eq!(
        keys(view),
        set(&[
            "incident",
            "technical_decisions",
            "dispatches",
            "intercurrences",
            "response_times"
        ])
    );
    assert_eq!(view["incident"], body["incident"]);
    assert_eq!(view["intercurrences"], body["intercurrences"]);
    assert_eq!(view["dispatches"], body["mobile_units"]);
    let decisions = view["technical_decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1);
    assert_eq!(
        keys(&decisions[0]),
        set(&[
            "id",
            "action",
            "vehicle_type",
            "regulator",
            "notes",
            "decided_at"
        ])
    );
    let td = api
        .get("regulador", &format!("/technical-decision/incident/{id}"))
        .await;
    assert_eq!(&view["technical_decisions"], td.ok());
    // An incident still being registered has no decision and no unit: empty lists, not 404.
    let fresh = incident_in(&api, "registering").await;
    assert!(
        api.get("tarm", &format!("/technical-decision/incident/{fresh}"))
            .await
            .array()
            .is_empty()
    );
    assert!(
        api.get("tarm", &format!("/dispatch/incident/{fresh}"))
            .await
            .array()
            .is_empty()
    );
}

#[actix_web::test]
async fn fleet_screens_in_one_response() {
    let api = Api::new().await;
    let id = incident_in(&api, "dispatched").await;
    let summary = api
        .get("frota", &format!("/incident/{id}/fleet-summary"))
        .await;
    let summary = summary.ok();
    assert_eq!(
        keys(summary),
        set(&[
            "id",
            "number",
            "state",
            "version",
            "created_at",
            "address",
            "city",
            "complaint",
            "priority",
            "requested_vehicle_type"
        ])
    );
    assert_eq!(summary["state"], "dispatched");
    assert!(summary["requested_vehicle_type"].is_object());
    // Every fleet screen sends the incident's version as its ETag (the writes' If-Match).
    let etag = format!("\"{}\"", summary["version"]);
    for (login, uri) in [
        ("frota", format!("/incident/{id}/fleet-summary")),
        ("frota", format!("/incident/{id}/fleet-occurrence")),
        ("regulador", format!("/incident/{id}/unit-selection")),
        ("frota", format!("/dispatch/bff/dispatch-data/{id}")),
    ] {
        let r = api.get(login, &uri).await;
        assert_eq!(r.header("etag"), Some(etag.as_str()), "{uri}");
    }

    let occ = api
        .get("frota", &format!("/incident/{id}/fleet-occurrence"))
        .await;
    let occ = occ.ok();
    assert_eq!(
        keys(occ),
        set(&[
            "incident",
            "caller_name",
            "caller_phone",
            "assigned_to",
            "patient",
            "technical_decision",
            "dispatches",
            "intercurrences",
            "response_times"
        ])
    );
    assert_eq!(&occ["incident"], summary);
    let detail = api.get("frota", &format!("/incident/{id}")).await;
    let detail = detail.ok();
    assert_eq!(occ["caller_name"], detail["basic_data"]["caller_name"]);
    assert_eq!(occ["caller_phone"], detail["basic_data"]["caller_phone"]);
    assert_eq!(occ["assigned_to"], detail["regulation"]["assigned_to"]);
    assert_eq!(
        keys(&occ["patient"]),
        set(&["name", "age", "sex", "destination"])
    );
    assert_eq!(
        occ["technical_decision"]["vehicle_type"],
        summary["requested_vehicle_type"]
    );
    for d in occ["dispatches"].as_array().unwrap() {
        assert_dispatch_shape(d);
    }

    let sel = api
        .get("regulador", &format!("/incident/{id}/unit-selection"))
        .await;
    let sel = sel.ok();
    assert_eq!(
        keys(sel),
        set(&[
            "id",
            "number",
            "state",
            "version",
            "patient",
            "requested_vehicle_type",
            "active_dispatches"
        ])
    );
    assert_eq!(sel["patient"], occ["patient"]);
    assert_eq!(sel["active_dispatches"], occ["dispatches"]);

    let bff = api
        .get("frota", &format!("/dispatch/bff/dispatch-data/{id}"))
        .await;
    let bff = bff.ok();
    assert_eq!(keys(bff), set(&["incident", "dispatches"]));
    assert_eq!(&bff["incident"], summary);
    assert_eq!(bff["dispatches"], occ["dispatches"]);

    // A closed incident keeps its released dispatch, which unit selection no longer lists.
    let closed: i64 = dispatches::table
        .filter(dispatches::status.eq("released"))
        .select(dispatches::incident_id)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let sel = api
        .get("frota", &format!("/incident/{closed}/unit-selection"))
        .await;
    assert!(sel.ok()["active_dispatches"].as_array().unwrap().is_empty());
    let occ = api
        .get("frota", &format!("/incident/{closed}/fleet-occurrence"))
        .await;
    assert_eq!(occ.ok()["dispatches"][0]["status"], "released");
}

/// A number with years of prank calls: `total` counts them all, `calls` lists the 20 newest,
/// on the lookup and on the regulation screen alike.
#[actix_web::test]
async fn a_number_with_many_prank_calls_lists_the_twenty_newest_and_counts_all() {
    let api = Api::new().await;
    let id = incident_in(&api, "dispatched").await;
    let mut conn = api.conn().await;
    let (phone, key): (String, String) = incidents::table
        .find(id)
        .select((incidents::caller_phone, incidents::caller_phone_key))
        .first(&mut conn)
        .await
        .unwrap();
    // 25 prank calls from this number on other incidents, one day apart.
    let others: Vec<(i64, String)> = incidents::table
        .filter(incidents::id.ne(id))
        .filter(diesel::dsl::not(diesel::dsl::exists(
            prank_calls::table.filter(prank_calls::incident_id.eq(incidents::id)),
        )))
        .order_by(incidents::id)
        .select((incidents::id, incidents::number))
        .limit(25)
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(others.len(), 25);
    let recorded_by: i64 = prank_calls::table
        .select(prank_calls::recorded_by)
        .first(&mut conn)
        .await
        .unwrap();
    let rows: Vec<_> = others
        .iter()
        .enumerate()
        .map(|(n, (incident, number))| {
            (
                prank_calls::phone.eq(&phone),
                prank_calls::phone_key.eq(&key),
                prank_calls::incident_id.eq(*incident),
                prank_calls::incident_number.eq(number),
                prank_calls::recorded_by.eq(recorded_by),
                prank_calls::recorded_at
                    .eq(chrono::Utc::now() - chrono::Duration::days(n as i64 + 1)),
            )
        })
        .collect();
    diesel::insert_into(prank_calls::table)
        .values(rows)
        .execute(&mut conn)
        .await
        .unwrap();
    let expected: Vec<(i64, String)> = prank_calls::table
        .inner_join(incidents::table)
        .filter(prank_calls::phone_key.eq(&key))
        .order_by((prank_calls::recorded_at.desc(), prank_calls::id.desc()))
        .select((prank_calls::incident_id, incidents::number))
        .load(&mut conn)
        .await
        .unwrap();
    assert!(expected.len() >= 25);

    let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
    let lookup = api
        .get("regulador", &format!("/incident/prank-calls/{digits}"))
        .await;
    let body = lookup.ok();
    assert_eq!(body["total"], expected.len() as i64);
    let listed: Vec<(i64, String)> = body["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["incident_id"].as_i64().unwrap(),
                c["number"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(listed, expected[..20].to_vec());
    let screen = api
        .get("regulador", &format!("/incident/{id}/regulation"))
        .await;
    assert_eq!(&screen.ok()["prank_calls"], body);
}
