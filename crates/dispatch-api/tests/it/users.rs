//! `/user`, `/user/{id}`, `/user/search`, `/employee/...`, `/shared/...`.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::{employees, profiles, users};
use serde_json::json;

use crate::support::{Api, keys, set};

const USER_KEYS: &[&str] = &[
    "id",
    "descriptive_name",
    "status",
    "profile",
    "professional_type",
    "team",
];

#[actix_web::test]
async fn the_user_list_has_the_login_for_admin_only() {
    let api = Api::new().await;
    let total: i64 = users::table
        .count()
        .get_result(&mut api.conn().await)
        .await
        .unwrap();
    let mut with_name = USER_KEYS.to_vec();
    with_name.push("name");
    for (login, expected) in [("admin", set(&with_name)), ("tarm", set(USER_KEYS))] {
        let reply = api.get(login, "/user").await;
        let list = reply.array();
        assert_eq!(list.len() as i64, total);
        for u in list {
            assert_eq!(keys(u), expected, "{login}: {u}");
            assert_eq!(keys(&u["profile"]), set(&["id", "title", "text"]));
        }
    }
}

#[actix_web::test]
async fn one_user_in_full() {
    let api = Api::new().await;
    let id = api.id("regulador");
    let reply = api.get("admin", &format!("/user/{id}")).await;
    let body = reply.ok();
    assert_eq!(
        body,
        &json!({
            "id": id,
            "descriptive_name": "Dra. Regina Reguladora",
            "status": "ativo",
            "name": "regulador",
            "profile": {"id": body["profile"]["id"], "title": "MEDICO_REGULADOR", "text": "Médico Regulador"},
            "professional_type": {"id": body["professional_type"]["id"], "name": "Médico"},
            "team": {"id": body["team"]["id"], "name": "Equipe Charlie"},
        })
    );
    let mut as_tarm = api.get("tarm", &format!("/user/{id}")).await.ok().clone();
    assert!(as_tarm.get("name").is_none(), "the key is absent, not null");
    as_tarm["name"] = json!("regulador");
    assert_eq!(&as_tarm, body);
}

#[actix_web::test]
async fn bad_and_unknown_user_ids() {
    let api = Api::new().await;
    assert_eq!(
        api.get("tarm", "/user/abc")
            .await
            .problem(400, "invalid_parameter"),
        Some("id".into())
    );
    assert_eq!(
        api.get("tarm", "/user/99999999999999999999")
            .await
            .problem(400, "invalid_parameter"),
        Some("id".into())
    );
    api.get("tarm", "/user/999999")
        .await
        .problem(404, "not_found");
}

#[actix_web::test]
async fn send_to_search_finds_active_regulators_only() {
    let api = Api::new().await;
    let mut conn = api.conn().await;
    let regulators: Vec<(i64, String)> = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.eq("ativo"))
        .select((users::id, users::descriptive_name))
        .load(&mut conn)
        .await
        .unwrap();
    let reply = api.get("tarm", "/user/search?q=REGINA").await;
    assert_eq!(
        reply.ok(),
        &json!([{"id": api.id("regulador"), "descriptive_name": "Dra. Regina Reguladora"}])
    );
    let all = api.get("tarm", "/user/search").await;
    let all = all.array();
    assert_eq!(all.len(), regulators.len().min(20));
    for u in all {
        assert_eq!(keys(u), set(&["id", "descriptive_name"]));
        assert!(regulators.iter().any(|(id, _)| u["id"] == *id), "{u}");
    }
    let names: Vec<String> = all
        .iter()
        .map(|u| dispatch_api::search::fold(u["descriptive_name"].as_str().unwrap()))
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "without q: name order");
    // Accent- and case-insensitive: every regulator is found by its unaccented name.
    for (id, name) in regulators.iter().take(5) {
        let q = dispatch_api::search::fold(name)
            .to_uppercase()
            .replace(' ', "%20");
        let found = api.get("frota", &format!("/user/search?q={q}")).await;
        assert!(found.array().iter().any(|u| u["id"] == *id), "{name}");
    }
    let inactive: Vec<i64> = users::table
        .inner_join(profiles::table)
        .filter(profiles::title.eq("MEDICO_REGULADOR"))
        .filter(users::status.ne("ativo"))
        .select(users::id)
        .load(&mut conn)
        .await
        .unwrap();
    let page2 = api.get("tarm", "/user/search?limit=20&offset=20").await;
    for u in all.iter().chain(page2.array()) {
        assert!(!inactive.iter().any(|id| u["id"] == *id));
    }
}

#[actix_web::test]
async fn search_parameters_are_checked() {
    let api = Api::new().await;
    let long = "a".repeat(101);
    for (uri, field) in [
        ("/user/search?limit=0".to_owned(), "limit"),
        ("/user/search?limit=21".to_owned(), "limit"),
        ("/user/search?limit=x".to_owned(), "limit"),
        ("/user/search?offset=-1".to_owned(), "offset"),
        (format!("/user/search?q={long}"), "q"),
        (format!("/employee/search?query={long}"), "query"),
        (format!("/incident/mask?q={long}"), "q"),
        (format!("/health-unit?q={long}"), "q"),
        ("/health-unit?limit=100".to_owned(), "limit"),
        ("/incident/mask?offset=abc".to_owned(), "offset"),
    ] {
        let reply = api.get("tarm", &uri).await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some(field.into()),
            "{uri}"
        );
    }
    // A parameter the route does not take is refused, naming it; the cache-buster `_` is
    // ignored (docs/dispatch-routes.md, "Query parameters").
    assert_eq!(
        api.get("tarm", "/health-unit?name=x")
            .await
            .problem(400, "invalid_parameter"),
        Some("name".into())
    );
    assert_eq!(
        api.get("tarm", "/health-unit?_=1700000000123").await.ok(),
        api.get("tarm", "/health-unit").await.ok()
    );
    // 100 characters is fine (and finds nothing).
    let ok = api
        .get("tarm", &format!("/health-unit?q={}", "a".repeat(100)))
        .await;
    assert!(ok.array().is_empty());
}

#[actix_web::test]
async fn the_employee_of_a_user_and_the_transfer_to_search() {
    let api = Api::new().await;
    let id = api.id("frota");
    let reply = api.get("tarm", &format!("/employee/user_id/{id}")).await;
    let body = reply.ok();
    assert_eq!(
        keys(body),
        set(&[
            "id",
            "user_id",
            "descriptive_name",
            "registration",
            "phone",
            "active",
            "professional_type",
            "team"
        ])
    );
    assert_eq!(body["user_id"], id);
    assert_eq!(body["descriptive_name"], "Fábio da Frota");
    assert_eq!(body["registration"], "MAT-00004");
    assert_eq!(body["active"], true);
    // The admin has no staff record.
    api.get("tarm", &format!("/employee/user_id/{}", api.id("admin")))
        .await
        .problem(404, "not_found");
    api.get("tarm", "/employee/user_id/x")
        .await
        .problem(400, "invalid_parameter");

    // "Transfer to" offers them to others, with their team and professional type, and
    // never to themself.
    let found = api.get("tarm", "/employee/search?query=fabio%20da").await;
    assert_eq!(
        found.ok(),
        &json!([{"id": id, "descriptive_name": "Fábio da Frota",
                 "team": body["team"], "professional_type": body["professional_type"]}])
    );
    let own = api.get("frota", "/employee/search?query=fabio%20da").await;
    assert_eq!(own.ok(), &json!([]));
    let inactive: Vec<i64> = employees::table
        .filter(employees::active.eq(false))
        .select(employees::user_id)
        .load(&mut api.conn().await)
        .await
        .unwrap();
    assert!(!inactive.is_empty());
    let all = api.get("frota", "/employee/search?limit=20").await;
    assert_eq!(all.array().len(), 20);
    for e in all.array() {
        assert_eq!(
            keys(e),
            set(&["id", "descriptive_name", "team", "professional_type"])
        );
        assert!(!inactive.iter().any(|id| e["id"] == *id));
    }
    // The ex-employee "Ivo Inativo" is no candidate.
    assert!(
        api.get("frota", "/employee/search?query=ivo%20inativo")
            .await
            .array()
            .is_empty()
    );
}

#[actix_web::test]
async fn default_values_come_from_the_token_and_active_lists() {
    let api = Api::new().await;
    let reply = api.get("regulador", "/shared/default-values").await;
    let body = reply.ok();
    assert_eq!(
        keys(body),
        set(&[
            "user",
            "profile",
            "vehicle_types",
            "technical_decision_actions",
            "intercurrences",
            "occurrence_types",
            "professional_types"
        ])
    );
    assert_eq!(
        body["user"],
        json!({"id": api.id("regulador"), "descriptive_name": "Dra. Regina Reguladora"})
    );
    assert_eq!(body["profile"], "MEDICO_REGULADOR");
    let names = |key: &str| -> Vec<String> {
        body[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                assert_eq!(keys(v), set(&["id", "name"]));
                v["name"].as_str().unwrap().to_owned()
            })
            .collect()
    };
    assert_eq!(names("vehicle_types"), ["Motolância", "USA", "USB", "VIR"]);
    assert!(!names("intercurrences").contains(&"Rádio inoperante".to_owned()));
    assert!(!names("intercurrences").contains(&"Falta de combustível".to_owned()));
    assert!(!names("professional_types").contains(&"Telefonista".to_owned()));
    assert_eq!(names("technical_decision_actions").len(), 7);
    assert_eq!(
        names("occurrence_types"),
        [
            "Clínico",
            "Obstétrico",
            "Pediátrico",
            "Psiquiátrico",
            "Trauma"
        ]
    );

    let old = api.get("tarm", "/shared/possible-values").await;
    assert_eq!(old.header("deprecation"), Some("true"));
    assert_eq!(
        old.header("link"),
        Some("</shared/default-values>; rel=\"successor-version\"")
    );
    let old_body = old.ok();
    let mut expected = keys(body);
    expected.insert("employee");
    assert_eq!(keys(old_body), expected, "open_incident is gone");
    assert_eq!(old_body["user"]["id"], api.id("tarm"));
    for e in old_body["employee"].as_array().unwrap() {
        assert_eq!(keys(e), set(&["id", "descriptive_name"]));
    }
}

#[actix_web::test]
async fn sql_searches_put_prefix_matches_first_then_name_order() {
    let api = Api::new().await;
    for uri in ["/employee/search?query=MAR", "/user/search?q=mar"] {
        let reply = api.get("tarm", uri).await;
        let names: Vec<String> = reply
            .array()
            .iter()
            .map(|u| dispatch_api::search::fold(u["descriptive_name"].as_str().unwrap()))
            .collect();
        assert!(names.iter().all(|n| n.contains("mar")), "{uri}: {names:?}");
        let split = names
            .iter()
            .position(|n| !n.starts_with("mar"))
            .unwrap_or(names.len());
        assert!(split > 0, "{uri}: some names start with the term");
        assert!(
            names[split..].iter().all(|n| !n.starts_with("mar")),
            "{uri}: {names:?}"
        );
        for group in [&names[..split], &names[split..]] {
            let mut sorted = group.to_vec();
            sorted.sort();
            assert_eq!(group, &sorted[..], "{uri}");
        }
    }
}
