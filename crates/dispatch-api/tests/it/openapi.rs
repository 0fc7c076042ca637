//! `/openapi.json` describes every route, its parameters and its response schema.

use crate::access::{ROUTES, documented_routes};
use crate::support::Api;

#[actix_web::test]
async fn every_route_is_in_the_document_with_params_and_schema() {
    let api = Api::new().await;
    let doc = api.get_as(None, "/openapi.json").await;
    let doc = doc.ok();
    let paths = doc["paths"].as_object().unwrap();
    for uri in ROUTES {
        // The concrete URI back to its template: numbers and phones become `{...}`.
        let path = uri.split('?').next().unwrap();
        let template = paths
            .keys()
            .find(|t| matches(t, path))
            .unwrap_or_else(|| panic!("{path} is not in /openapi.json"));
        let op = &paths[template]["get"];
        let ok = &op["responses"]["200"]["content"]["application/json"]["schema"];
        assert!(ok.is_object(), "{template}: no 200 schema");
        for status in ["400", "401", "403", "404", "503"] {
            assert!(
                op["responses"][status].is_object(),
                "{template}: no {status}"
            );
        }
        assert!(op["security"].is_array(), "{template}: no security");
        if let Some(query) = uri.split('?').nth(1) {
            let documented: Vec<&str> = op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            for pair in query.split('&') {
                let name = pair.split('=').next().unwrap();
                assert!(
                    documented.contains(&name),
                    "{template}: {name} undocumented"
                );
            }
        }
    }
    assert!(paths["/shared/possible-values"]["get"]["deprecated"] == true);
}

/// `/docs` lists each route with its summary as plain text: no raw backticks (Swagger UI
/// does not render Markdown there), no line break.
#[actix_web::test]
async fn every_summary_reads_as_plain_text() {
    let api = Api::new().await;
    let doc = api.get_as(None, "/openapi.json").await;
    let mut summaries = 0;
    for (path, item) in doc.ok()["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(summary) = op["summary"].as_str() else {
                continue;
            };
            summaries += 1;
            assert!(
                !summary.contains('`') && !summary.contains('\n'),
                "{method} {path}: {summary:?}"
            );
        }
    }
    assert!(summaries > 50, "{summaries} summaries");
}

/// Every write documents the headers it reads: each POST `Idempotency-Key` (all of them
/// accept it), each incident write `If-Match` (all but a unit's own status step).
#[actix_web::test]
async fn every_write_documents_its_headers() {
    let api = Api::new().await;
    let doc = api.get_as(None, "/openapi.json").await;
    let mut writes = 0;
    for (path, item) in doc.ok()["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if !["post", "patch"].contains(&method.as_str())
                || !path.starts_with("/incident") && !path.starts_with("/dispatch")
            {
                continue;
            }
            writes += 1;
            let headers: Vec<&str> = op["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter(|p| p["in"] == "header")
                        .map(|p| p["name"].as_str().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            if method == "post" {
                assert!(
                    headers.contains(&"Idempotency-Key"),
                    "{method} {path}: {headers:?}"
                );
            }
            if path.starts_with("/incident/") {
                assert!(
                    headers.contains(&"If-Match"),
                    "{method} {path}: {headers:?}"
                );
            }
        }
    }
    assert_eq!(
        writes, 12,
        "every write of docs/dispatch-realtime.md, \"Writes\""
    );
}

fn matches(template: &str, path: &str) -> bool {
    let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len()
        && t.iter().zip(&p).all(|(t, p)| {
            t == p || (t.starts_with('{') && !["search", "options", "mask"].contains(p))
        })
}

/// Every route the document lists has a concrete URI above (`ROUTES`), so the reads'
/// tests reach every route; the list to check comes from the document itself.
#[test]
fn every_documented_read_has_a_concrete_uri() {
    // The socket is no read; `realtime` covers it. The telephone's reads answer only with
    // the telephone configured: `telephony` covers them (their profiles, 503 without it).
    let elsewhere = ["/ws", "/phone-credentials", "/telephony/calls/{call_id}"];
    for path in documented_routes()
        .iter()
        .filter(|p| !elsewhere.contains(&p.as_str()))
    {
        assert!(
            ROUTES.iter().any(|uri| template_matches(path, uri)),
            "{path} has no concrete URI in ROUTES"
        );
    }
}

fn template_matches(concrete: &str, uri: &str) -> bool {
    let path = uri.split('?').next().unwrap();
    let (a, b): (Vec<&str>, Vec<&str>) = (concrete.split('/').collect(), path.split('/').collect());
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || x.parse::<u64>().is_ok())
}

/// The whole document against its snapshot (`snapshots/`), so a change to any route's shape
/// shows in review. After an intended change: `cargo insta review` (or `INSTA_UPDATE=always`).
#[test]
fn the_document_matches_its_snapshot() {
    insta::assert_json_snapshot!("openapi", dispatch_api::openapi::document());
}
