//! Logging setup and the request id every response and log line of a request carries.

use std::time::Instant;

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const MAX_REQUEST_ID_LEN: usize = 128;

/// Installs the global subscriber. A second call (tests) is a no-op.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}

/// The id of the request being served, for handlers that want to log or return it.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// A client's id is kept when it is 1..=128 visible ASCII characters; otherwise we make one.
pub fn accept_request_id(given: Option<&HeaderValue>) -> String {
    given
        .and_then(|v| v.to_str().ok())
        .filter(|s| {
            !s.is_empty()
                && s.len() <= MAX_REQUEST_ID_LEN
                && s.bytes().all(|b| b.is_ascii_graphic())
        })
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
}

/// Middleware: gives the request its id, runs it inside a span carrying that id, echoes the
/// id on the response and logs one line per request. Only the path is logged, never the
/// query string (a WebSocket token may travel there).
pub async fn request_id(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = accept_request_id(req.headers().get(&REQUEST_ID));
    req.extensions_mut().insert(RequestId(id.clone()));
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %req.path(),
    );
    let started = Instant::now();
    // Handler errors arrive here already rendered as responses; an `Err` can only come from
    // a middleware, and actix renders it further out.
    let mut res = next.call(req).instrument(span.clone()).await?;
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(REQUEST_ID, v);
    }
    let status = res.status().as_u16();
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    span.in_scope(|| {
        if status >= 500 {
            tracing::warn!(status, elapsed_ms, "request served");
        } else {
            tracing::info!(status, elapsed_ms, "request served");
        }
    });
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_sane_client_id_and_replaces_others() {
        let ok = HeaderValue::from_static("abc-123");
        assert_eq!(accept_request_id(Some(&ok)), "abc-123");
        let long = HeaderValue::from_str(&"a".repeat(129)).unwrap();
        assert_ne!(accept_request_id(Some(&long)), "a".repeat(129));
        let spaced = HeaderValue::from_static("a b");
        assert_ne!(accept_request_id(Some(&spaced)), "a b");
        let made = accept_request_id(None);
        assert!(uuid::Uuid::parse_str(&made).is_ok());
    }
}
