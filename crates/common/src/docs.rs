//! The API reference at `/docs`: Swagger UI rendering the service's own `/openapi.json`.
//!
//! Everything is served from the binary (the viewer's files are vendored under
//! `crates/common/assets/swagger-ui/`, see its `README.md`), because a dispatch centre's network
//! may be closed to the internet. The page holds a pasted bearer token in the browser tab only
//! (`persistAuthorization` is off), so "Try it out" works without storing credentials.

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::{HttpResponse, web};

/// The vendored Swagger UI release; part of the asset URLs, so a new release is a new URL and
/// the assets can be cached for long.
pub const SWAGGER_UI_VERSION: &str = include_str!("../assets/swagger-ui/VERSION");

const BUNDLE: &[u8] = include_bytes!("../assets/swagger-ui/swagger-ui-bundle.js");
const CSS: &[u8] = include_bytes!("../assets/swagger-ui/swagger-ui.css");

/// Relative URLs throughout, so the page also works behind a proxy that adds a path prefix.
const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css?v={version}">
</head>
<body>
<main id="swagger-ui" aria-label="API reference"></main>
<script src="docs/swagger-ui-bundle.js?v={version}"></script>
<script src="docs/init.js?v={version}"></script>
</body>
</html>
"#;

const INIT: &str = r##"window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: false,
    displayRequestDuration: true,
    tryItOutEnabled: false,
  });
});
"##;

/// Scripts only from this origin; Swagger UI sets inline styles and `data:` images.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

/// `GET /docs` and its assets, and `GET /docs/` redirecting to it. None of them is part of the
/// OpenAPI document: they describe it.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/docs", web::get().to(page))
        .route("/docs/", web::get().to(to_page))
        .route("/docs/swagger-ui.css", web::get().to(css))
        .route("/docs/swagger-ui-bundle.js", web::get().to(bundle))
        .route("/docs/init.js", web::get().to(init));
}

async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, CSP))
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        .body(PAGE.replace("{version}", SWAGGER_UI_VERSION.trim()))
}

/// `/docs/` (a typed or bookmarked trailing slash) is the page's own address misspelt. Not the
/// page itself: its relative asset URLs would resolve under `/docs/docs/`. The `Location` is
/// relative too, so the redirect also works behind a proxy that adds a path prefix.
async fn to_page() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, "../docs"))
        .finish()
}

fn asset(content_type: &'static str, body: &'static [u8]) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(CacheControl(vec![
            CacheDirective::Public,
            CacheDirective::MaxAge(86_400),
        ]))
        .body(body)
}

async fn css() -> HttpResponse {
    asset("text/css; charset=utf-8", CSS)
}

async fn bundle() -> HttpResponse {
    asset("text/javascript; charset=utf-8", BUNDLE)
}

async fn init() -> HttpResponse {
    asset("text/javascript; charset=utf-8", INIT.as_bytes())
}

/// Each operation's summary as the reference page shows it: plain text on one line. A
/// summary is the first paragraph of a route's doc comment, whose `code` spans Swagger UI
/// would print with their backticks (the description, below it, renders them); both
/// services call this on their document before serving it.
pub fn plain_summaries(doc: &mut utoipa::openapi::OpenApi) {
    for item in doc.paths.paths.values_mut() {
        let ops = [
            item.get.as_mut(),
            item.put.as_mut(),
            item.post.as_mut(),
            item.delete.as_mut(),
            item.options.as_mut(),
            item.head.as_mut(),
            item.patch.as_mut(),
            item.trace.as_mut(),
        ];
        for op in ops.into_iter().flatten() {
            if let Some(summary) = op.summary.as_mut() {
                *summary = plain(summary);
            }
        }
    }
}

/// `text` without backticks, its lines and spaces joined by one space.
fn plain(text: &str) -> String {
    text.replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod summary_tests {
    #[test]
    fn a_summary_loses_its_backticks_and_line_breaks() {
        assert_eq!(
            super::plain("Create an incident from the Basic data form: `registering`,\nversion 1."),
            "Create an incident from the Basic data form: registering, version 1."
        );
    }
}
