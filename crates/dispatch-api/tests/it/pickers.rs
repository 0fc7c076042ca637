//! The id a picker answers is the id its write takes: "Transfer to" writes the `id` of
//! `/employee/search`, "Send to" the `id` of `/user/search`, and every read afterwards names
//! the person chosen.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{employees, profiles, users};
use serde_json::{Value, json};

use crate::client::W;

/// The newest history entry of an incident.
pub async fn last_entry(w: &W, id: i64) -> Value {
    let d = w
        .api
        .get("tarm", &format!("/incident/{id}?include_history=true"))
        .await;
    d.ok()["history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

/// The option of `items` named `name` (a search may find namesakes; the picker shows names).
fn chosen<'a>(items: &'a [Value], name: &str) -> &'a Value {
    items
        .iter()
        .find(|o| o["descriptive_name"] == name)
        .unwrap_or_else(|| panic!("{name} is not among {items:?}"))
}

#[actix_web::test]
async fn transfer_to_lands_on_the_person_chosen_in_the_employee_picker() {
    let w = W::new().await;
    let (id, v) = w.incident_in("regulated").await;
    // A person whose employee record's key is not their user id: reading the picker's id as
    // the employees table's key handed the incident to somebody else.
    let (user_id, employee_id, name): (i64, i64, String) = employees::table
        .inner_join(users::table)
        .filter(employees::active)
        .filter(users::status.eq("ativo"))
        .filter(employees::id.ne(users::id))
        .order_by(users::id.desc())
        .select((users::id, employees::id, users::descriptive_name))
        .first(&mut w.api.conn().await)
        .await
        .unwrap();
    let found = w
        .api
        .get("frota", &format!("/employee/search?query={name}"))
        .await;
    let option = chosen(found.array(), &name);
    assert_eq!(option["id"], user_id, "the picker answers the user id");

    // The old body field is refused, named, and changes nothing.
    let uri = format!("/incident/{id}/transfer");
    let r = w
        .post(&uri, "frota", Some(v), json!({"employee_id": employee_id}))
        .await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("employee_id")
    );
    let r = w.post(&uri, "frota", Some(v), json!({})).await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("assigned_to_id")
    );
    // An id that names no active employee is 422 naming `assigned_to_id`.
    let r = w
        .post(
            &uri,
            "frota",
            Some(v),
            json!({"assigned_to_id": 999_999_999}),
        )
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("assigned_to_id")
    );
    // Nor to the caller: nobody transfers an incident to themself.
    let me = w.api.id("frota");
    let r = w
        .post(&uri, "frota", Some(v), json!({"assigned_to_id": me}))
        .await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("assigned_to_id")
    );
    assert_eq!(
        r.body["errors"][0]["message"],
        format!("user {me} is you: an incident is transferred to someone else")
    );
    assert_eq!(w.version(id).await, v);

    let r = w
        .post(
            &uri,
            "frota",
            Some(v),
            json!({"assigned_to_id": option["id"]}),
        )
        .await;
    assert_eq!(r.ok()["version"], v + 1);
    let person = json!({"id": user_id, "descriptive_name": name});
    let detail = w.api.get("frota", &format!("/incident/{id}")).await;
    assert_eq!(detail.ok()["regulation"]["assigned_to"], person);
    let view = w
        .api
        .get("regulador", &format!("/incident/{id}/occurrence-view"))
        .await;
    assert_eq!(view.ok()["incident"]["regulation"]["assigned_to"], person);
    let entry = last_entry(&w, id).await;
    assert_eq!(entry["action"], "transferred");
    assert_eq!(entry["version"], v + 1);
    assert_eq!(
        entry["changes"],
        json!({"assigned_to": {"from": null, "to": person}})
    );
}

#[actix_web::test]
async fn send_to_lands_on_the_regulator_chosen_in_the_user_picker() {
    let w = W::new().await;
    let (id, v) = w.incident_in("awaiting_regulation").await;
    let (user_id, name): (i64, String) = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.eq("ativo"))
        .filter(users::login.ne("regulador"))
        .order_by(users::id.desc())
        .select((users::id, users::descriptive_name))
        .first(&mut w.api.conn().await)
        .await
        .unwrap();
    let found = w
        .api
        .get("regulador", &format!("/user/search?q={name}"))
        .await;
    let option = chosen(found.array(), &name);
    assert_eq!(option["id"], user_id);

    let r = w
        .post(
            &format!("/incident/{id}/send-to"),
            "regulador",
            Some(v),
            json!({"regulator_id": option["id"]}),
        )
        .await;
    assert_eq!(r.ok()["version"], v + 1);
    let person = json!({"id": user_id, "descriptive_name": name});
    let reg = w
        .api
        .get("regulador", &format!("/incident/{id}/regulation"))
        .await;
    assert_eq!(reg.ok()["incident"]["regulation"]["regulator"], person);
    let entry = last_entry(&w, id).await;
    assert_eq!(entry["action"], "sent_to");
    assert_eq!(
        entry["changes"],
        json!({"regulator": {"from": null, "to": person}})
    );
}

/// The pickers never offer the caller (nobody sends or transfers an incident to themself): a
/// regulator searching their own name in "Send to" and an employee in "Transfer to" do not
/// find themselves, while a colleague finds them; each "Transfer to" row names the person's
/// team and professional type as their employee record does.
#[actix_web::test]
async fn the_pickers_never_offer_the_caller() {
    let w = W::new().await;
    let api = &w.api;
    let as_user = async |id: i64, uri: &str| {
        let r = api.get_as_user(id, uri).await;
        r.array()
            .iter()
            .map(|o| o["id"].as_i64().unwrap())
            .collect::<Vec<i64>>()
    };
    let me = api.id("regulador");
    let (name, colleague): (String, i64) = {
        let mut conn = api.conn().await;
        let name = users::table
            .find(me)
            .select(users::descriptive_name)
            .first(&mut conn)
            .await
            .unwrap();
        let colleague = users::table
            .inner_join(profiles::table)
            .filter(profiles::title.eq("MEDICO_REGULADOR"))
            .filter(users::status.eq("ativo"))
            .filter(users::id.ne(me))
            .select(users::id)
            .first(&mut conn)
            .await
            .unwrap();
        (name, colleague)
    };
    let uri = format!("/user/search?q={name}");
    assert!(!as_user(me, &uri).await.contains(&me));
    assert!(as_user(colleague, &uri).await.contains(&me));
    // Without a term: the whole list, the caller left out.
    let everyone = as_user(colleague, "/user/search").await;
    assert!(everyone.contains(&me));
    assert!(!as_user(me, "/user/search").await.contains(&me));

    // "Transfer to": the first employee by name, as the fleet operator sees them.
    let options = api.get("frota", "/employee/search").await;
    let first = options.array()[0].clone();
    let person = first["id"].as_i64().unwrap();
    assert_ne!(person, api.id("frota"));
    let record = api
        .get("frota", &format!("/employee/user_id/{person}"))
        .await;
    assert_eq!(
        first,
        json!({"id": person, "descriptive_name": record.ok()["descriptive_name"],
               "team": record.ok()["team"],
               "professional_type": record.ok()["professional_type"]})
    );
    let theirs = as_user(person, "/employee/search").await;
    assert!(!theirs.contains(&person));
    let next = options.array()[1]["id"].as_i64().unwrap();
    assert_eq!(theirs[0], next, "the list starts with the next person");
    let by_name = format!(
        "/employee/search?query={}",
        first["descriptive_name"].as_str().unwrap()
    );
    assert!(!as_user(person, &by_name).await.contains(&person));
    assert!(
        api.get("frota", &by_name)
            .await
            .array()
            .iter()
            .any(|o| o["id"] == person)
    );
}

/// A person is found by any of their names, in any order, accents optional, as a hospital
/// is (docs/dispatch-routes.md, "Search"): "andre teixeira" finds "André Damasceno Teixeira",
/// and a name that holds only some of the words is not found.
#[actix_web::test]
async fn a_person_is_found_by_words_in_any_order() {
    let w = W::new().await;
    let profile: i32 = profiles::table
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .select(profiles::id)
        .first(&mut w.api.conn().await)
        .await
        .unwrap();
    for (login, name) in [
        ("zelia.quintanilha", "Zélia Damasceno Quintanilha"),
        ("zelia.souza", "Zélia Souza Lima"),
    ] {
        diesel::insert_into(users::table)
            .values((
                users::login.eq(login),
                users::descriptive_name.eq(name),
                users::profile_id.eq(profile),
            ))
            .execute(&mut w.api.conn().await)
            .await
            .unwrap();
    }
    for q in [
        "zelia quintanilha",
        "quintanilha zelia",
        "ZÉLIA  damasceno",
        "quint dama",
    ] {
        let found = w
            .api
            .get(
                "regulador",
                &format!("/user/search?q={}", q.replace(' ', "+")),
            )
            .await;
        let names: Vec<&str> = found
            .array()
            .iter()
            .filter_map(|o| o["descriptive_name"].as_str())
            .collect();
        assert_eq!(names, ["Zélia Damasceno Quintanilha"], "{q}");
    }
    // The names that start with the whole term come first: both hold "zelia" and "s",
    // only one starts with "zelia s".
    let found = w.api.get("regulador", "/user/search?q=zelia+s").await;
    let names: Vec<&str> = found
        .array()
        .iter()
        .filter_map(|o| o["descriptive_name"].as_str())
        .collect();
    assert_eq!(names[..].first(), Some(&"Zélia Souza Lima"), "{names:?}");
    assert!(names.contains(&"Zélia Damasceno Quintanilha"), "{names:?}");
    // The demo's own regulator of the report: found by two of the three names.
    let found = w
        .api
        .get("regulador", "/user/search?q=andre+teixeira")
        .await;
    assert!(
        found
            .array()
            .iter()
            .any(|o| o["descriptive_name"] == "André Damasceno Teixeira"),
        "{}",
        found.body
    );
}
