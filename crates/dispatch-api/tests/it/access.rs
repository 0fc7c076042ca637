//! Who may call what: 401 without a valid token or for an inactive user, 403 for a profile a
//! screen route does not serve.

use std::time::Duration;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::schema::dispatch::users;
use dispatch_api::user_cache;
use serde_json::json;

use crate::support::{Api, Reply};

/// The profile title of a demo login.
fn title(login: &str) -> &'static str {
    match login {
        "admin" => "ADMIN",
        "tarm" => "TARM",
        "regulador" => "MEDICO_REGULADOR",
        "frota" => "OPERADOR_FROTA",
        other => panic!("no demo login {other}"),
    }
}

/// One concrete URI per route (incident 1 exists at every scale).
pub const ROUTES: &[&str] = &[
    "/user",
    "/user/1",
    "/user/search?q=a",
    "/employee/user_id/2",
    "/employee/search?query=a",
    "/shared/default-values",
    "/shared/possible-values",
    "/incident/mask?q=a",
    "/incident/1?include_history=true",
    "/incident/prank-calls/12991004321",
    "/incident/1/unit-selection",
    "/incident/1/fleet-summary",
    "/incident/1/fleet-occurrence",
    "/incident/1/regulation",
    "/incident/1/occurrence-view",
    "/incident/1/timeline",
    "/response-targets",
    "/reports/response-times?group_by=priority",
    "/health-unit/offload",
    "/mobile-unit?active_only=true",
    "/mobile-unit/options?available=true&vehicle_type_id=1",
    "/mobile-unit/board",
    "/mobile-unit/incident/1",
    "/mobile-unit-type?active=true",
    "/dispatch/incident/1",
    "/dispatch/bff/dispatch-data/1",
    "/technical-decision/incident/1",
    "/technical-decision-action",
    "/intercurrence",
    "/health-unit?q=sao",
    "/professional-type?active_only=true",
    "/unallocated?page=1&page_size=20&include_self=false",
    // docs/dispatch-access-log.md.
    "/incident/1/access-log",
    "/user/1/access-log",
    // docs/dispatch-routes.md, "Positions and a recommendation", "Managing the fleet and the team".
    "/incident/1/unit-recommendation",
    "/mobile-unit/1/history",
];

/// Every GET route of the OpenAPI document (the operational ones aside), its path
/// parameters filled in: a route added to the document is checked here without an edit.
pub fn documented_routes() -> Vec<String> {
    let doc = serde_json::to_value(dispatch_api::openapi::document()).unwrap();
    doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(path, item)| {
            item.get("get").is_some()
                && !["/healthz", "/readyz", "/metrics"].contains(&path.as_str())
        })
        .map(|(path, _)| {
            path.replace("{id}", "1")
                .replace("{phone_number}", "12991004321")
        })
        .collect()
}

#[actix_web::test]
async fn every_route_is_401_without_a_token_or_for_an_inactive_user() {
    let api = Api::new().await;
    let inactive = api.token("inativo");
    let routes = documented_routes();
    assert!(routes.len() >= ROUTES.len(), "{routes:?}");
    for uri in &routes {
        api.get_as(None, uri).await.problem(401, "unauthorized");
        api.get_with_token(Some(&inactive), uri)
            .await
            .problem(401, "unauthorized");
        api.get_with_token(Some("not-a-jwt"), uri)
            .await
            .problem(401, "unauthorized");
    }
}

#[actix_web::test]
async fn screen_routes_serve_the_profiles_of_the_contract_only() {
    let api = Api::new().await;
    // (route, profiles allowed) from docs/dispatch-routes.md, "Routes".
    let table: &[(&str, &[&str])] = &[
        ("/incident/1/unit-selection", &["frota", "regulador"]),
        ("/incident/1/fleet-summary", &["frota"]),
        ("/incident/1/fleet-occurrence", &["frota"]),
        ("/incident/1/regulation", &["regulador"]),
        ("/incident/1/occurrence-view", &["regulador", "tarm"]),
        // docs/dispatch-routes.md, "Response times".
        ("/incident/1/timeline", &["admin", "regulador", "frota"]),
        (
            "/reports/response-times?group_by=priority",
            &["admin", "regulador"],
        ),
        // docs/dispatch-access-log.md.
        ("/incident/1/access-log", &["admin"]),
        ("/user/1/access-log", &["admin"]),
        // docs/dispatch-routes.md, "Positions and a recommendation".
        ("/incident/1/unit-recommendation", &["frota", "regulador"]),
        ("/mobile-unit/1/history", &["frota", "admin"]),
    ];
    for (uri, allowed) in table {
        for login in ["admin", "tarm", "regulador", "frota"] {
            let reply = api.get(login, uri).await;
            if allowed.contains(&login) {
                reply.ok();
            } else {
                reply.problem(403, "forbidden");
                let detail = reply.body["detail"].as_str().unwrap();
                for may in *allowed {
                    assert!(detail.contains(title(may)), "{uri} {login}: {detail}");
                }
            }
        }
    }
    // The "any" routes of the table and the current routes serve every active profile.
    for uri in ROUTES
        .iter()
        .filter(|u| !table.iter().any(|(t, _)| t == *u))
    {
        for login in ["admin", "tarm", "regulador", "frota"] {
            api.get(login, uri).await.ok();
        }
    }
}

#[actix_web::test]
async fn a_refused_profile_is_told_which_profiles_may_use_the_route() {
    let api = Api::new().await;
    let reply = api.get("tarm", "/incident/1/unit-selection").await;
    reply.problem(403, "forbidden");
    assert_eq!(
        reply.body,
        json!({
            "type": "urn:problem-type:forbidden",
            "title": "Forbidden",
            "status": 403,
            "detail": "the TARM profile may not use this route \
                       (used by OPERADOR_FROTA, MEDICO_REGULADOR)",
            "code": "forbidden",
        })
    );
    let reply = api.get("admin", "/incident/1/regulation").await;
    reply.problem(403, "forbidden");
    assert_eq!(
        reply.body["detail"],
        "the ADMIN profile may not use this route (used by MEDICO_REGULADOR)"
    );
    // A write says it the same way.
    let reply = Reply::of(
        api.request(reqwest::Method::POST, "/incident")
            .bearer_auth(api.token("frota"))
            .json(&json!({}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    reply.problem(403, "forbidden");
    assert_eq!(
        reply.body["detail"],
        "the OPERADOR_FROTA profile may not use this route (used by TARM)"
    );
}

#[actix_web::test]
async fn a_cached_user_deactivated_is_refused_at_once() {
    let api = Api::new().await;
    let cache = api.user_cache();
    actix_web::rt::spawn(user_cache::listen(api.db.url().to_owned(), cache.clone()));
    for _ in 0..100 {
        if cache.is_live() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(cache.is_live(), "the listener connects");
    let id = api.id("tarm");
    // One token throughout: its second request is answered from memory alone (the token
    // accepted before, the user cached), and so is the check after the deactivation.
    let token = api.token("tarm");
    for _ in 0..2 {
        api.get_with_token(Some(&token), "/shared/default-values")
            .await
            .ok();
    }
    assert!(cache.get(id).is_some(), "the caller is cached");
    diesel::update(users::table.find(id))
        .set(users::status.eq("inativo"))
        .execute(&mut api.conn().await)
        .await
        .unwrap();
    for _ in 0..100 {
        if cache.get(id).is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(cache.get(id).is_none(), "the change evicts the user");
    let refused = api
        .get_with_token(Some(&token), "/shared/default-values")
        .await;
    refused.problem(401, "unauthorized");
    assert_eq!(refused.body["detail"], "this user is not active");
}
