//! What a browser client relies on (docs/dispatch-routes.md, "Browser clients", "Caching and
//! revalidation", "Query parameters"): CORS for the origins allowed, `ETag`/304 on what it
//! loads at start and on incident reads, and cache-busters that change nothing.

use dispatch_api::cors::CorsSettings;
use serde_json::{Value, json};

use crate::support::{Api, Reply};

/// A new incident, created as the call taker does; its id.
pub async fn an_open_incident(api: &Api) -> i64 {
    let r = Reply::of(
        api.request(reqwest::Method::POST, "/incident")
            .bearer_auth(api.token("tarm"))
            .json(
                &json!({"caller_name": "Maria Souza", "caller_phone": "(12) 99100-4321",
                "address": "Rua das Flores, 10", "complaint": "dor no peito"}),
            )
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    r.body["id"].as_i64().unwrap()
}

const APP: &str = "https://dispatch.samu.example";

async fn browser_api() -> Api {
    let cors = CorsSettings {
        allowed_origins: vec![APP.to_owned(), "http://localhost:5173".to_owned()],
    };
    Api::with(cors, None).await
}

async fn preflight(api: &Api, origin: &str, method: &str, headers: &str) -> Reply {
    Reply::of(
        api.request(reqwest::Method::OPTIONS, "/incident/1")
            .header("Origin", origin)
            .header("Access-Control-Request-Method", method)
            .header("Access-Control-Request-Headers", headers)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// A header's comma-separated items, lower case and sorted.
fn items(reply: &Reply, name: &str) -> Vec<String> {
    let mut v: Vec<String> = reply
        .header(name)
        .unwrap_or_else(|| panic!("no {name}: {:?}", reply.headers))
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .collect();
    v.sort();
    v
}

#[actix_web::test]
async fn a_browser_on_an_allowed_origin_may_write_and_read_the_version() {
    let api = browser_api().await;
    let reply = preflight(
        &api,
        APP,
        "PATCH",
        "authorization,if-match,idempotency-key,content-type",
    )
    .await;
    assert!(reply.status.is_success(), "{}", reply.status);
    assert_eq!(reply.header("access-control-allow-origin"), Some(APP));
    assert_eq!(
        items(&reply, "access-control-allow-methods"),
        ["get", "patch", "post", "put"]
    );
    let allowed = items(&reply, "access-control-allow-headers");
    for header in [
        "authorization",
        "if-match",
        "idempotency-key",
        "content-type",
    ] {
        assert!(
            allowed.contains(&header.to_owned()),
            "{header}: {allowed:?}"
        );
    }

    // The read itself: the answer names the origin and lets the page read ETag and Location.
    let id = an_open_incident(&api).await;
    let read = Reply::of(
        api.request(reqwest::Method::GET, &format!("/incident/{id}"))
            .header("Origin", APP)
            .bearer_auth(api.token("tarm"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(read.ok()["id"], id);
    assert_eq!(read.header("access-control-allow-origin"), Some(APP));
    let exposed = items(&read, "access-control-expose-headers");
    for header in ["etag", "location"] {
        assert!(
            exposed.contains(&header.to_owned()),
            "{header}: {exposed:?}"
        );
    }
    // A refusal carries them too, so the page can read why.
    let refused = Reply::of(
        api.request(reqwest::Method::GET, "/shared/default-values")
            .header("Origin", APP)
            .send()
            .await
            .unwrap(),
    )
    .await;
    refused.problem(401, "unauthorized");
    assert_eq!(refused.header("access-control-allow-origin"), Some(APP));
}

/// A documented path with each of its parameters (`{id}`) filled with the id 1.
fn with_ids(path: &str) -> String {
    path.split('/')
        .map(|seg| if seg.starts_with('{') { "1" } else { seg })
        .collect::<Vec<_>>()
        .join("/")
}

/// Every method of every route the app documents passes a browser's preflight from an
/// allowed origin, on that route's own path: a route added with a method the CORS list
/// forgot (as `PUT /incident/{id}/location` once was) fails here.
#[actix_web::test]
async fn every_documented_route_passes_a_preflight_with_its_method() {
    let api = browser_api().await;
    let doc = api.get_as(None, "/openapi.json").await;
    let paths = doc.ok()["paths"].as_object().expect("paths").clone();
    let mut checked = Vec::new();
    for (path, item) in &paths {
        // Path parameters filled with an id; the preflight does not reach the handler.
        let concrete = with_ids(path);
        for method in ["get", "put", "post", "delete", "patch"] {
            if item.get(method).is_none() {
                continue;
            }
            let upper = method.to_ascii_uppercase();
            let reply = Reply::of(
                api.request(reqwest::Method::OPTIONS, &concrete)
                    .header("Origin", APP)
                    .header("Access-Control-Request-Method", &upper)
                    .header(
                        "Access-Control-Request-Headers",
                        "authorization,content-type",
                    )
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert!(
                reply.status.is_success(),
                "preflight of {upper} {path}: {} {}",
                reply.status,
                reply.body
            );
            assert!(
                items(&reply, "access-control-allow-methods").contains(&method.to_owned()),
                "{upper} {path} is not allowed: {:?}",
                reply.header("access-control-allow-methods")
            );
            checked.push(format!("{upper} {path}"));
        }
    }
    // The walk reached the writes a web client makes, PUT included.
    for route in [
        "PUT /incident/{id}/location",
        "PATCH /incident/{id}",
        "POST /incident",
    ] {
        assert!(
            checked.iter().any(|c| c == route),
            "{route} not walked: {checked:?}"
        );
    }
}

/// Every documented GET route that takes query parameters refuses one it does not take,
/// naming it (docs/dispatch-routes.md, "Query parameters"): the rule is the shared
/// extractor's, and a route that parsed its query another way would fail here.
#[actix_web::test]
async fn every_route_with_query_parameters_refuses_an_unknown_one_naming_it() {
    let api = Api::new().await;
    let doc = api.get_as(None, "/openapi.json").await;
    let paths = doc.ok()["paths"].as_object().expect("paths").clone();
    let mut walked = Vec::new();
    for (path, item) in &paths {
        let Some(get) = item.get("get") else { continue };
        let takes_query = get["parameters"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
        if !takes_query || path == "/ws" {
            continue;
        }
        let concrete = with_ids(path);
        let uri = format!("{concrete}?_=1&zz_typo=1");
        // The first profile the route lets in.
        let mut answered = None;
        for login in ["admin", "tarm", "regulador", "frota"] {
            let reply = api.get_as(Some(login), &uri).await;
            if ![401, 403].contains(&reply.status.as_u16()) {
                answered = Some(reply);
                break;
            }
        }
        let reply = answered.unwrap_or_else(|| panic!("no profile may read {path}"));
        assert_eq!(
            (
                reply.status.as_u16(),
                reply.body["errors"][0]["field"].as_str()
            ),
            (400, Some("zz_typo")),
            "GET {uri}: {}",
            reply.body
        );
        walked.push(path.clone());
    }
    for path in ["/mobile-unit", "/incident/mask", "/incident/{id}"] {
        assert!(
            walked.iter().any(|p| p == path),
            "{path} not walked: {walked:?}"
        );
    }
}

#[actix_web::test]
async fn another_origin_gets_no_cors_headers() {
    let api = browser_api().await;
    let reply = preflight(&api, "https://evil.example", "PATCH", "authorization").await;
    assert_eq!(reply.header("access-control-allow-origin"), None);
    assert_eq!(reply.header("access-control-allow-headers"), None);
    // Its GET is answered (a browser withholds it from the page), without the header.
    let read = Reply::of(
        api.request(reqwest::Method::GET, "/shared/default-values")
            .header("Origin", "https://evil.example")
            .bearer_auth(api.token("tarm"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(read.ok()["profile"], "TARM");
    assert_eq!(read.header("access-control-allow-origin"), None);

    // With no origin configured (the default) nobody gets CORS headers.
    let plain = Api::new().await;
    let reply = preflight(&plain, APP, "GET", "authorization").await;
    assert_eq!(reply.header("access-control-allow-origin"), None);
}

/// GET `uri` as `login` with `If-None-Match: etag` when given.
async fn get_if(api: &Api, login: &str, uri: &str, etag: Option<&str>) -> Reply {
    let mut req = api
        .request(reqwest::Method::GET, uri)
        .bearer_auth(api.token(login));
    if let Some(etag) = etag {
        req = req.header("If-None-Match", etag);
    }
    Reply::of(req.send().await.unwrap()).await
}

#[actix_web::test]
async fn the_lists_loaded_at_start_are_kept_for_the_session_and_revalidated() {
    let api = Api::new().await;
    for uri in [
        "/shared/default-values",
        "/shared/possible-values",
        "/mobile-unit-type?active=true",
        "/technical-decision-action",
        "/intercurrence",
        "/professional-type?active_only=true",
    ] {
        let first = get_if(&api, "regulador", uri, None).await;
        let body = first.ok().clone();
        let etag = first.header("etag").expect("an ETag").to_owned();
        assert_eq!(
            first.header("cache-control"),
            Some("private, max-age=43200"),
            "{uri}"
        );
        assert_eq!(first.header("vary"), Some("Authorization"), "{uri}");

        let again = get_if(&api, "regulador", uri, Some(&etag)).await;
        assert_eq!(again.status.as_u16(), 304, "{uri}");
        assert_eq!(again.body, Value::Null, "{uri}: no body");
        assert_eq!(again.header("etag"), Some(etag.as_str()), "{uri}");

        // Another tag, or none: the whole list again, the same.
        let other = get_if(&api, "regulador", uri, Some("\"stale\"")).await;
        assert_eq!(other.ok(), &body, "{uri}");
    }
    // The default values name their caller: another caller's copy is not current for us.
    let mine = get_if(&api, "regulador", "/shared/default-values", None).await;
    let etag = mine.header("etag").unwrap().to_owned();
    let theirs = get_if(&api, "frota", "/shared/default-values", Some(&etag)).await;
    assert_eq!(theirs.ok()["user"]["id"], api.id("frota"));
}

#[actix_web::test]
async fn an_incident_is_not_modified_until_it_is_written() {
    let api = Api::new().await;
    let id = an_open_incident(&api).await;
    let uri = format!("/incident/{id}");
    let first = get_if(&api, "tarm", &uri, None).await;
    assert_eq!(first.ok()["version"], 1);
    assert_eq!(first.header("etag"), Some("\"1\""));

    let again = get_if(&api, "tarm", &uri, Some("\"1\"")).await;
    assert_eq!(again.status.as_u16(), 304);
    assert_eq!(again.body, Value::Null);
    assert_eq!(again.header("etag"), Some("\"1\""));

    // The regulator names the patient: version 2.
    let written = Reply::of(
        api.request(reqwest::Method::PATCH, &uri)
            .bearer_auth(api.token("regulador"))
            .header("If-Match", "\"1\"")
            .json(&json!({"patient": {"name": "Rita de Cássia"}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(written.ok()["version"], 2);

    // The copy of version 1 is stale: the new incident, whole.
    let after = get_if(&api, "tarm", &uri, Some("\"1\"")).await;
    assert_eq!(after.header("etag"), Some("\"2\""));
    let body = after.ok();
    assert_eq!(body["version"], 2);
    assert_eq!(body["patient"]["name"], "Rita de Cássia");
    assert_eq!(body, get_if(&api, "tarm", &uri, None).await.ok());
    assert_eq!(
        get_if(&api, "tarm", &uri, Some("W/\"2\""))
            .await
            .status
            .as_u16(),
        304
    );
}

#[actix_web::test]
async fn cache_busters_change_nothing_and_other_parameters_are_strict() {
    let api = Api::new().await;
    for (plain, busted) in [
        ("/health-unit?q=sao", "/health-unit?q=sao&_=1700000000123"),
        ("/user/search?q=a&limit=5", "/user/search?_=123&q=a&limit=5"),
        (
            "/mobile-unit?active_only=true",
            "/mobile-unit?active_only=true&_=1",
        ),
        ("/unallocated?page_size=5", "/unallocated?page_size=5&_=9"),
        ("/shared/default-values", "/shared/default-values?_=123"),
    ] {
        let a = api.get("tarm", plain).await;
        let b = api.get("tarm", busted).await;
        assert_eq!(b.ok(), a.ok(), "{busted}");
    }
    let id = an_open_incident(&api).await;
    let with_history = api
        .get("tarm", &format!("/incident/{id}?include_history=true&_=42"))
        .await;
    assert_eq!(with_history.ok()["history"][0]["version"], 1);

    // A parameter the route does not take: 400 naming it and the ones the route takes, so a
    // misspelt filter never shows everything (docs/dispatch-routes.md, "Query parameters").
    for (uri, field, takes) in [
        (
            "/mobile-unit?activeonly=true",
            "activeonly",
            "`active_only`",
        ),
        (
            "/unallocated?page_size=5&_=9&utm_source=x",
            "utm_source",
            "`page_size`",
        ),
    ] {
        let reply = api.get("tarm", uri).await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some(field.into()),
            "{uri}"
        );
        let message = reply.body["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("is not a parameter of this route, which takes")
                && message.contains(takes),
            "{uri}: {message}"
        );
    }

    // A parameter the route takes, with a bad value: 400 naming it, cache-buster or not.
    for (uri, field) in [
        ("/health-unit?_=1&limit=100", "limit"),
        ("/mobile-unit?active_only=1&_=1", "active_only"),
        ("/user/search?limit=x&_=1", "limit"),
    ] {
        let reply = api.get("tarm", uri).await;
        assert_eq!(
            reply.problem(400, "invalid_parameter"),
            Some(field.into()),
            "{uri}"
        );
    }
}
