//! Browser clients served from another origin (docs/dispatch-routes.md, "Browser clients"):
//! the origins `CORS_ALLOWED_ORIGINS` lists may call every route with the headers the writes
//! need, and read the headers the answers carry. With none listed (the default) no CORS
//! header is ever sent, and browsers keep other origins out.

use actix_cors::Cors;
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderName};

/// The variable listing the allowed origins, comma-separated.
pub const VAR: &str = "CORS_ALLOWED_ORIGINS";

/// How long a browser may keep a preflight's answer (10 minutes, the most Chromium keeps).
const PREFLIGHT_MAX_AGE_SECS: usize = 600;

/// The request headers a client sends beyond the CORS-safelisted ones: the token, the
/// incident's version on writes, a retried write's key, a JSON body, a revalidation, and the
/// client's own request id.
fn allowed_headers() -> [HeaderName; 6] {
    [
        header::AUTHORIZATION,
        header::IF_MATCH,
        HeaderName::from_static("idempotency-key"),
        header::CONTENT_TYPE,
        header::IF_NONE_MATCH,
        HeaderName::from_static("x-request-id"),
    ]
}

/// The answer headers a client may read beyond the safelisted ones: the version of what it
/// read (`ETag`), where a created incident is (`Location`), when to retry (`Retry-After`)
/// and the request id to quote in a report.
fn exposed_headers() -> [HeaderName; 4] {
    [
        header::ETAG,
        header::LOCATION,
        header::RETRY_AFTER,
        HeaderName::from_static("x-request-id"),
    ]
}

/// The allowed origins, read once at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorsSettings {
    /// Exact origins (`https://dispatch.example.org`, scheme, host and port as the browser
    /// sends them), compared byte for byte.
    pub allowed_origins: Vec<String>,
}

impl CorsSettings {
    /// `CORS_ALLOWED_ORIGINS` (read by `crate::settings`): `scheme://host[:port]` items
    /// separated by commas; empty, none. `*` is refused: every route needs a token, and a
    /// wildcard would let any site a dispatcher visits use it.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let mut allowed_origins = Vec::new();
        for item in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            allowed_origins.push(origin(item).map_err(|reason| format!("{item:?}: {reason}"))?);
        }
        Ok(Self { allowed_origins })
    }

    pub fn is_enabled(&self) -> bool {
        !self.allowed_origins.is_empty()
    }

    /// The middleware when origins are listed, for `startup::app`, allowing `methods` (every
    /// method a route uses: `openapi::methods`); `None` otherwise.
    pub fn layer(&self, methods: &[Method]) -> Option<Cors> {
        self.is_enabled().then(|| self.middleware(methods))
    }

    /// The middleware. A request from an origin not listed is served as usual, without CORS
    /// headers, so that its browser withholds the answer; same-origin pages (`/docs`) and
    /// clients that are not browsers are not affected.
    pub fn middleware(&self, methods: &[Method]) -> Cors {
        let mut cors = Cors::default()
            .allowed_methods(methods.iter().cloned())
            .allowed_headers(allowed_headers())
            .expose_headers(exposed_headers())
            .max_age(PREFLIGHT_MAX_AGE_SECS)
            .block_on_origin_mismatch(false);
        for origin in &self.allowed_origins {
            cors = cors.allowed_origin(origin);
        }
        cors
    }
}

/// An origin as browsers send it: `http(s)://host[:port]`, nothing after.
fn origin(item: &str) -> Result<String, String> {
    if item == "*" {
        return Err("a wildcard is not allowed; list each origin".into());
    }
    let (scheme, rest) = item
        .split_once("://")
        .ok_or_else(|| "must be scheme://host[:port]".to_owned())?;
    if !matches!(scheme, "http" | "https") {
        return Err("the scheme must be http or https".into());
    }
    if rest.is_empty() || rest.contains(['/', '?', '#', ' ', '*']) {
        return Err("must be scheme://host[:port], with no path (an origin)".into());
    }
    Ok(item.to_ascii_lowercase())
}
