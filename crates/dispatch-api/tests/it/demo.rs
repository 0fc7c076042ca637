//! The demo data is anchored at the moment it is seeded (docs/dispatch-routes.md, "Demo
//! data"): it looks like a centre at work on any day, and its history entries are those the
//! API writes, because the seed makes them through the same store functions.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use common::Clock;
use common::test_support::TestDb;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use dispatch_api::schema::dispatch::*;
use dispatch_api::{MIGRATIONS, MIGRATIONS_DIR, SCHEMA, seed};
use serde_json::{Value, json};

use crate::client::W;
use crate::support::Api;

/// What makes a demo look alive at `now`, read from its database.
async fn assert_alive(conn: &mut AsyncPgConnection, now: DateTime<Utc>) {
    // No unit held for half a day by a dispatch nobody released.
    let old_busy: i64 = dispatches::table
        .filter(dispatches::status.ne("released"))
        .filter(dispatches::assigned_at.lt(now - Duration::hours(12)))
        .count()
        .get_result(conn)
        .await
        .unwrap();
    assert_eq!(old_busy, 0, "unreleased dispatches older than 12 hours");
    // Every open incident moved within the last hours, none in the future.
    let open = [
        "registering",
        "awaiting_regulation",
        "regulated",
        "dispatched",
    ];
    let times: Vec<DateTime<Utc>> = incidents::table
        .filter(incidents::state.eq_any(open))
        .select(incidents::updated_at)
        .load(conn)
        .await
        .unwrap();
    assert!(!times.is_empty(), "open incidents");
    for t in &times {
        assert!(
            *t <= now && now - *t < Duration::hours(6),
            "open incident last moved {t}"
        );
    }
    // Every open state holds some incidents, and the week is busy.
    for state in open {
        let n: i64 = incidents::table
            .filter(incidents::state.eq(state))
            .count()
            .get_result(conn)
            .await
            .unwrap();
        assert!(n > 0, "no incident in {state}");
    }
    let week: i64 = incidents::table
        .filter(incidents::created_at.gt(now - Duration::days(7)))
        .count()
        .get_result(conn)
        .await
        .unwrap();
    assert!(week >= 20, "{week} incidents this week");
    // Every active vehicle type keeps a free active unit.
    let busy = dispatches::table
        .filter(dispatches::status.ne("released"))
        .select(dispatches::mobile_unit_id);
    let types: Vec<String> = mobile_unit_types::table
        .filter(mobile_unit_types::active)
        .select(mobile_unit_types::name)
        .load(conn)
        .await
        .unwrap();
    for name in types {
        let free: i64 = mobile_units::table
            .inner_join(mobile_unit_types::table)
            .filter(mobile_unit_types::name.eq(&name))
            .filter(mobile_units::active)
            .filter(mobile_units::id.ne_all(busy))
            .count()
            .get_result(conn)
            .await
            .unwrap();
        assert!(free > 0, "no free {name}");
    }
}

#[actix_web::test]
async fn the_demo_looks_alive_the_moment_it_is_seeded() {
    let api = Api::new().await;
    let now = Utc::now();
    let mut conn = api.conn().await;
    assert_alive(&mut conn, now).await;
    // The default search (open incidents and the last 7 days) fills its page.
    let mask = api.get("regulador", "/incident/mask").await;
    assert_eq!(mask.array().len(), 20, "{}", mask.body);
    // The fleet sees a free unit of every active type.
    let types = api.get("frota", "/mobile-unit-type?active=true").await;
    for t in types.array() {
        let free = api
            .get(
                "frota",
                &format!(
                    "/mobile-unit/options?available=true&vehicle_type_id={}",
                    t["id"]
                ),
            )
            .await;
        assert!(!free.array().is_empty(), "no free {}", t["name"]);
    }
    // The next call taken gets the number after the demo's highest.
    let highest: String = incidents::table
        .select(diesel::dsl::max(incidents::number))
        .first::<Option<String>>(&mut api.conn().await)
        .await
        .unwrap()
        .unwrap();
    let w = W { api };
    let (id, _) = w.create().await;
    let created = w.api.get("tarm", &format!("/incident/{id}")).await;
    let number = created.ok()["number"].as_str().unwrap().to_owned();
    let serial = |n: &str| n.split_once('-').unwrap().1.parse::<u64>().unwrap();
    assert_eq!(
        serial(&number),
        serial(&highest) + 1,
        "{number} after {highest}"
    );
}

/// The demo's transports go where an ambulance takes a patient in the centre's own city:
/// a hospital, an emergency room, a UPA or a maternity ward of São José dos Campos (where
/// its bases are), never a health post nor a hospital of another state; the offload board
/// lists those alone.
#[actix_web::test]
async fn the_demo_transports_to_hospitals_of_the_centres_city() {
    let api = Api::new().await;
    #[derive(QueryableByName, Debug)]
    struct Destination {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        city: String,
    }
    let destinations: Vec<Destination> = diesel::sql_query(
        "SELECT DISTINCT h.name, h.city
           FROM dispatch.dispatches d
           JOIN dispatch.incidents i ON i.id = d.incident_id
           JOIN dispatch.health_units h
             ON h.id = coalesce(d.destination_id, i.destination_health_unit_id)
          ORDER BY h.name",
    )
    .load(&mut api.conn().await)
    .await
    .unwrap();
    assert!(destinations.len() > 1, "{destinations:?}");
    let receiving = [
        "Hospital Municipal ",
        "Pronto-Socorro ",
        "UPA 24h ",
        "Hospital Regional ",
        "Maternidade ",
        "Hospital São Lucas de ",
    ];
    for d in &destinations {
        assert_eq!(d.city, "São José dos Campos", "{d:?}");
        assert!(
            receiving.iter().any(|k| d.name.starts_with(k)),
            "not a hospital: {d:?}"
        );
    }
    let board = api.get("admin", "/health-unit/offload").await;
    for h in board.ok()["hospitals"].as_array().unwrap() {
        assert_eq!(h["health_unit"]["city"], "São José dos Campos", "{h}");
    }
}

#[actix_web::test]
async fn a_demo_seeded_long_ago_is_brought_back_to_life() {
    let db = TestDb::new(SCHEMA, MIGRATIONS, MIGRATIONS_DIR).await;
    let mut conn = db.pool().get().await.unwrap();
    let then = Utc::now() - Duration::days(10);
    let first = seed::run_at(&mut conn, seed::Scale::Test, &Clock::manual(then))
        .await
        .unwrap();
    assert!(first.timeline.stale_since.is_none());
    let open_then: i64 = incidents::table
        .filter(incidents::state.eq_any([
            "registering",
            "awaiting_regulation",
            "regulated",
            "dispatched",
        ]))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    let highest_then: i64 = incidents::table
        .select(diesel::dsl::max(incidents::id))
        .first::<Option<i64>>(&mut conn)
        .await
        .unwrap()
        .unwrap();
    let now = Utc::now();
    let again = seed::run_at(&mut conn, seed::Scale::Test, &Clock::manual(now))
        .await
        .unwrap();
    let t = &again.timeline;
    assert!(
        t.stale_since.is_some_and(|s| s < then + Duration::hours(1)),
        "{t:?}"
    );
    assert_eq!(t.wrapped_up as i64, open_then, "{t:?}");
    assert!(t.incidents_written > 0, "{t:?}");
    assert!(
        t.summary().starts_with("the demo was stale"),
        "{}",
        t.summary()
    );
    assert_alive(&mut conn, now).await;
    // Nothing of the old demo was removed; the old open incidents ended minutes after their
    // last change, not now.
    let old_open_left: i64 = incidents::table
        .filter(incidents::id.le(highest_then))
        .filter(incidents::state.eq_any([
            "registering",
            "awaiting_regulation",
            "regulated",
            "dispatched",
        ]))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(old_open_left, 0);
    let latest_old: DateTime<Utc> = incidents::table
        .filter(incidents::id.le(highest_then))
        .select(diesel::dsl::max(incidents::updated_at))
        .first::<Option<DateTime<Utc>>>(&mut conn)
        .await
        .unwrap()
        .unwrap();
    assert!(latest_old < then + Duration::hours(1), "{latest_old}");
    // A third seed right after finds it alive and writes nothing.
    let third = seed::run_at(
        &mut conn,
        seed::Scale::Test,
        &Clock::manual(now + Duration::minutes(5)),
    )
    .await
    .unwrap();
    assert_eq!(third.timeline.incidents_written, 0);
    assert_eq!(third.inserted["incidents"], 0);
}

/// The shape of a history entry's `changes`: its keys, recursively; any scalar is a value.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(_) => json!("array"),
        _ => json!("value"),
    }
}

/// Per action, the distinct shapes of the entries of the incidents `ids` selects.
async fn shapes(
    conn: &mut AsyncPgConnection,
    ids: impl Fn(i64) -> bool,
) -> BTreeMap<String, BTreeSet<String>> {
    let rows: Vec<(i64, String, Value)> = incident_history::table
        .select((
            incident_history::incident_id,
            incident_history::action,
            incident_history::changes,
        ))
        .load(conn)
        .await
        .unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, action, changes) in rows.into_iter().filter(|r| ids(r.0)) {
        out.entry(action)
            .or_default()
            .insert(shape(&changes).to_string());
    }
    out
}

#[actix_web::test]
async fn seeded_history_entries_have_the_shape_the_api_writes() {
    let w = W::new().await;
    let mut conn = w.api.conn().await;
    let seeded_up_to: i64 = incidents::table
        .select(diesel::dsl::max(incidents::id))
        .first::<Option<i64>>(&mut conn)
        .await
        .unwrap()
        .unwrap();
    let seeded = shapes(&mut conn, |id| id <= seeded_up_to).await;

    // Every write the demo makes, through the API, in each of the variants the demo has.
    let basic = json!({"caller_name": "Maria Souza", "caller_phone": "(12) 99100-4321",
                       "address": "Rua das Flores, 10", "city": "São José dos Campos",
                       "complaint": "dor no peito"});
    let forms = json!({"occurrence": {"type": "Clínico", "priority": "high",
                                      "notes": "Solicitante relata dor."},
                       "patient": {"name": "José", "age": 60, "sex": "M"}});
    let new_incident = async || -> (i64, i32) {
        let r = w.post("/incident", "tarm", None, basic.clone()).await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        let id = r.body["id"].as_i64().unwrap();
        let r = w
            .call(
                actix_web::http::Method::PATCH,
                &format!("/incident/{id}"),
                "tarm",
                Some(1),
                Some(forms.clone()),
            )
            .await;
        r.ok();
        let r = w
            .post(
                &format!("/incident/{id}/submit"),
                "tarm",
                Some(2),
                json!({}),
            )
            .await;
        r.ok();
        (id, 3)
    };
    let other_regulator: i64 = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.eq("ativo"))
        .filter(users::login.ne("regulador"))
        .select(users::id)
        .first(&mut conn)
        .await
        .unwrap();
    let employee: i64 = employees::table
        .inner_join(users::table)
        .filter(employees::active)
        .filter(users::status.eq("ativo"))
        .select(users::id)
        .first(&mut conn)
        .await
        .unwrap();
    let sending: i32 = technical_decision_actions::table
        .filter(technical_decision_actions::name.eq("Envio de USB"))
        .select(technical_decision_actions::id)
        .first(&mut conn)
        .await
        .unwrap();
    let usb: i32 = mobile_unit_types::table
        .filter(mobile_unit_types::name.eq("USB"))
        .select(mobile_unit_types::id)
        .first(&mut conn)
        .await
        .unwrap();
    let free_usb = async || -> i64 {
        let free = w.free_units().await;
        mobile_units::table
            .filter(mobile_units::type_id.eq(usb))
            .filter(mobile_units::id.eq_any(free))
            .select(mobile_units::id)
            .first(&mut w.api.conn().await)
            .await
            .unwrap()
    };
    let hospital: i64 = health_units::table
        .filter(health_units::active)
        .select(health_units::id)
        .first(&mut conn)
        .await
        .unwrap();
    let decide =
        |_: i32| json!({"action_id": sending, "vehicle_type_id": usb, "notes": "Regulado."});
    let step = async |dispatch: i64, status: &str| {
        let r = w
            .post(
                &format!("/dispatch/{dispatch}/status"),
                "frota",
                None,
                json!({"status": status}),
            )
            .await;
        r.ok()["version"].as_i64().unwrap() as i32
    };

    // A: decided by the first regulator, a unit that transports, an intercurrence, a
    // transfer, closed.
    let (a, v) = new_incident().await;
    let r = w
        .post(
            &format!("/incident/{a}/technical-decision"),
            "regulador",
            Some(v),
            decide(v),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    let unit = free_usb().await;
    let r = w
        .post(
            &format!("/incident/{a}/dispatch"),
            "frota",
            Some(v),
            json!({"mobile_unit_id": unit, "destination_id": hospital}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let dispatch = r.body["id"].as_i64().unwrap();
    step(dispatch, "en_route").await;
    let v = step(dispatch, "on_scene").await;
    let intercurrence: i32 = intercurrences::table
        .filter(intercurrences::active)
        .filter(intercurrences::deleted.eq(false))
        .select(intercurrences::id)
        .first(&mut conn)
        .await
        .unwrap();
    let r = w
        .post(
            &format!("/incident/{a}/intercurrence"),
            "frota",
            Some(v),
            json!({"intercurrence_id": intercurrence, "notes": "Registrada."}),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    let r = w
        .post(
            &format!("/incident/{a}/transfer"),
            "frota",
            Some(v),
            json!({"assigned_to_id": employee}),
        )
        .await;
    r.ok();
    step(dispatch, "transporting").await;
    step(dispatch, "at_destination").await;
    let v = step(dispatch, "released").await;
    let r = w
        .post(
            &format!("/incident/{a}/close"),
            "regulador",
            Some(v),
            json!({"conclusion": "Atendido."}),
        )
        .await;
    r.ok();

    // B: sent to another regulator, who decides; a unit that does not transport.
    let (b, v) = new_incident().await;
    let r = w
        .post(
            &format!("/incident/{b}/send-to"),
            "regulador",
            Some(v),
            json!({"regulator_id": other_regulator}),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    let other_token = w
        .api
        .token_of(other_regulator, std::time::Duration::from_secs(300));
    let r = w
        .api
        .request(
            reqwest::Method::POST,
            &format!("/incident/{b}/technical-decision"),
        )
        .bearer_auth(other_token)
        .header("If-Match", format!("\"{v}\""))
        .json(&decide(v))
        .send()
        .await
        .unwrap();
    let r = crate::support::Reply::of(r).await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    let unit = free_usb().await;
    let r = w
        .post(
            &format!("/incident/{b}/dispatch"),
            "frota",
            Some(v),
            json!({"mobile_unit_id": unit}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let dispatch = r.body["id"].as_i64().unwrap();
    step(dispatch, "en_route").await;
    step(dispatch, "on_scene").await;
    step(dispatch, "released").await;

    // C: decided without a unit, closed; D: cancelled while awaiting; E: cancelled once
    // regulated; F: a prank.
    let no_unit: i32 = technical_decision_actions::table
        .filter(technical_decision_actions::name.eq("Orientação médica por telefone"))
        .select(technical_decision_actions::id)
        .first(&mut conn)
        .await
        .unwrap();
    let (c, v) = new_incident().await;
    let r = w
        .post(
            &format!("/incident/{c}/technical-decision"),
            "regulador",
            Some(v),
            json!({"action_id": no_unit, "notes": "Orientado."}),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    w.post(
        &format!("/incident/{c}/close"),
        "regulador",
        Some(v),
        json!({"conclusion": "Orientado."}),
    )
    .await
    .ok();
    let (d, v) = new_incident().await;
    w.post(
        &format!("/incident/{d}/cancel"),
        "tarm",
        Some(v),
        json!({"reason": "Desistiu."}),
    )
    .await
    .ok();
    let (e, v) = new_incident().await;
    let r = w
        .post(
            &format!("/incident/{e}/technical-decision"),
            "regulador",
            Some(v),
            decide(v),
        )
        .await;
    let v = r.ok()["version"].as_i64().unwrap() as i32;
    w.post(
        &format!("/incident/{e}/cancel"),
        "regulador",
        Some(v),
        json!({"reason": "Removido."}),
    )
    .await
    .ok();
    let r = w.post("/incident", "tarm", None, basic.clone()).await;
    let f = r.body["id"].as_i64().unwrap();
    w.post(
        &format!("/incident/{f}/prank-call"),
        "tarm",
        Some(1),
        json!({}),
    )
    .await
    .ok();

    let api_made = shapes(&mut conn, |id| id > seeded_up_to).await;
    // Every action the demo records, the API records in the same shapes, and vice versa.
    assert_eq!(
        seeded.keys().collect::<Vec<_>>(),
        api_made.keys().collect::<Vec<_>>(),
        "the actions of the demo and of the API"
    );
    for (action, shapes) in &seeded {
        assert_eq!(
            shapes, &api_made[action],
            "the shapes of `{action}` entries"
        );
    }
}
