//! Conditional reads (docs/dispatch-routes.md, "Caching and revalidation"): an answer carries
//! an `ETag`, and a request whose `If-None-Match` names it gets `304 Not Modified` with no
//! body. A handler takes [`IfNoneMatch`] and answers with one call:
//!
//! - [`IfNoneMatch::lookup`] for the reference data a client loads at the start of its
//!   session: the `ETag` is a digest of the body; `Cache-Control: private, max-age=43200`
//!   (12 h) with `Vary: Authorization` lets the client keep it for its session (one token)
//!   without asking again, while another token (another login) never reuses it;
//! - [`IfNoneMatch::versioned`] for an incident: the `ETag` is its version (the `If-Match` the
//!   writes take), so any write to the incident changes it; `Cache-Control: no-cache`, since
//!   incidents change while they are being read.

use std::future::{Ready, ready};

use actix_web::dev::Payload;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{FromRequest, HttpRequest, HttpResponse};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::Reply;
use crate::auth::DEFAULT_MAX_LIFETIME;
use crate::error::Error;
use crate::patient_data::NoPatientData;

/// How long a client keeps the reference data, in seconds: a session, one shift (the
/// longest a token lives by default).
pub const LOOKUP_MAX_AGE_SECS: u64 = DEFAULT_MAX_LIFETIME.as_secs();

/// `Cache-Control` of an incident read: revalidate on every use.
pub const INCIDENT_CACHE_CONTROL: &str = "private, no-cache";

/// `If-None-Match` in the OpenAPI document (`params(IfNoneMatchHeader)`); the handler
/// reads it with [`IfNoneMatch`].
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IfNoneMatchHeader {
    /// The `ETag` of the copy the client holds: `304 Not Modified`, with no body, while it
    /// is still current.
    #[param(rename = "If-None-Match")]
    pub if_none_match: Option<String>,
}

/// The request's `If-None-Match`, if any. Never refuses a request: a header that cannot be
/// read matches nothing, so the full answer is sent.
#[derive(Debug, Default)]
pub struct IfNoneMatch(Option<String>);

impl FromRequest for IfNoneMatch {
    type Error = Error;
    type Future = Ready<Result<Self, Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let value = req
            .headers()
            .get_all(header::IF_NONE_MATCH)
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(",");
        ready(Ok(IfNoneMatch((!value.is_empty()).then_some(value))))
    }
}

impl IfNoneMatch {
    /// Whether the header names `etag` (a quoted tag): `*`, or one of its tags compared
    /// weakly (`W/"x"` matches `"x"`), as RFC 9110 asks of `If-None-Match`.
    pub fn matches(&self, etag: &str) -> bool {
        let Some(list) = &self.0 else {
            return false;
        };
        list.split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
    }

    /// Reference data the client keeps for its session: `ETag` from the body's digest.
    pub fn lookup<T: NoPatientData>(&self, body: &T) -> Reply {
        let bytes = serde_json::to_vec(body).map_err(|e| Error::Internal(e.to_string()))?;
        let digest = Sha256::digest(&bytes);
        let etag = format!(
            "\"{}\"",
            digest[..12]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let cache_control = format!("private, max-age={LOOKUP_MAX_AGE_SECS}");
        Ok(self.answer(&etag, &cache_control, true, bytes))
    }

    /// An incident read: `ETag: "<version>"`. Every incident read carries patient data, so
    /// only `Recorded::versioned` answers through it.
    pub(super) fn versioned<T: Serialize>(&self, version: i32, body: &T) -> Reply {
        let etag = format!("\"{version}\"");
        if self.matches(&etag) {
            return Ok(not_modified(&etag, INCIDENT_CACHE_CONTROL, false));
        }
        let bytes = serde_json::to_vec(body).map_err(|e| Error::Internal(e.to_string()))?;
        Ok(self.answer(&etag, INCIDENT_CACHE_CONTROL, false, bytes))
    }

    fn answer(&self, etag: &str, cache_control: &str, vary: bool, body: Vec<u8>) -> HttpResponse {
        if self.matches(etag) {
            return not_modified(etag, cache_control, vary);
        }
        let mut res = HttpResponse::Ok();
        headers(&mut res, etag, cache_control, vary);
        res.content_type(mime_json()).body(body)
    }
}

/// 304: no body, the same validators and caching rules as the 200 it stands for.
fn not_modified(etag: &str, cache_control: &str, vary: bool) -> HttpResponse {
    let mut res = HttpResponse::NotModified();
    headers(&mut res, etag, cache_control, vary);
    res.finish()
}

fn headers(res: &mut actix_web::HttpResponseBuilder, etag: &str, cache_control: &str, vary: bool) {
    res.insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, cache_control));
    if vary {
        res.insert_header((header::VARY, HeaderValue::from_static("Authorization")));
    }
}

fn mime_json() -> HeaderValue {
    HeaderValue::from_static("application/json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(v: &str) -> IfNoneMatch {
        IfNoneMatch(Some(v.to_owned()))
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_star() {
        assert!(header("\"3\"").matches("\"3\""));
        assert!(header("W/\"3\"").matches("\"3\""));
        assert!(header("\"1\", \"3\"").matches("\"3\""));
        assert!(header("*").matches("\"3\""));
        assert!(!header("\"4\"").matches("\"3\""));
        assert!(!header("3").matches("\"3\""));
        assert!(!IfNoneMatch::default().matches("\"3\""));
    }
}
