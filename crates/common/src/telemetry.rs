//! Logging setup and the request id every response and log line of a request carries.
//!
//! One event is one line in both formats, whatever its fields hold: JSON escapes strings by
//! itself, and the pretty format writes every field value through [`EscapedFields`], which
//! writes a control character (a line break, a NUL, an escape) or a line separator as its
//! escape (`\n`, `\u{1b}`). So an identity or a parameter holding a line break cannot write a
//! line that looks like another event.

use std::fmt;
use std::time::Instant;

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::{DefaultFields, DefaultVisitor, Writer};
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::LogFormat;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const MAX_REQUEST_ID_LEN: usize = 128;

/// Installs the global subscriber: [`subscriber`] writing to stdout, filtered by `filter`
/// (`RUST_LOG`, read by `crate::settings::CommonSettings`; one that does not parse logs
/// `info`). A second call (tests) is a no-op.
pub fn init(format: LogFormat, filter: &str) {
    let filter = EnvFilter::try_new(filter)
        .unwrap_or_else(|_| EnvFilter::new(crate::settings::DEFAULT_LOG_FILTER));
    let _ = subscriber(format, filter, std::io::stdout).try_init();
}

/// The subscriber [`init`] installs, writing to `writer` (tests capture the lines with it):
/// JSON, one object per line, the current span's fields included; or pretty, its field values
/// escaped by [`EscapedFields`].
pub fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
) -> Box<dyn Subscriber + Send + Sync + 'static>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match format {
        LogFormat::Json => Box::new(
            builder
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false)
                .finish(),
        ),
        LogFormat::Pretty => Box::new(builder.fmt_fields(EscapedFields).finish()),
    }
}

/// The pretty format's fields (of events and spans): tracing-subscriber's own layout
/// (`message`, then `name=value`), each value written with its control characters and line
/// separators escaped, as Rust escapes them (`\n`, `\r`, `\t`, `\0`, `\u{1b}`,
/// `\u{2028}`). Everything else passes unchanged, and nothing is copied on the way.
#[derive(Debug, Clone, Copy, Default)]
pub struct EscapedFields;

impl<'a> MakeVisitor<Writer<'a>> for EscapedFields {
    type Visitor = Escaping<DefaultVisitor<'a>>;

    fn make_visitor(&self, target: Writer<'a>) -> Self::Visitor {
        Escaping(DefaultFields::new().make_visitor(target))
    }
}

/// A field visitor that hands every value to `V` with its control characters escaped.
#[derive(Debug)]
pub struct Escaping<V>(V);

impl<V: Visit> Visit for Escaping<V> {
    fn record_str(&mut self, field: &Field, value: &str) {
        // As `DefaultVisitor` does: the message as text, other strings quoted.
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"));
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.record_debug(field, &ErrorChain(field.name(), value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.record_debug(field, &Escaped(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.record_i64(field, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.record_u64(field, value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.record_f64(field, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.record_bool(field, value);
    }
}

impl<V: VisitOutput<fmt::Result>> VisitOutput<fmt::Result> for Escaping<V> {
    fn finish(self) -> fmt::Result {
        self.0.finish()
    }
}

impl<V: VisitFmt> VisitFmt for Escaping<V> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        self.0.writer()
    }
}

/// A value's `Debug` text with its control characters and line separators escaped.
struct Escaped<'a>(&'a dyn fmt::Debug);

impl fmt::Debug for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        write!(EscapingWriter(f), "{:?}", self.0)
    }
}

/// Passes text on, writing each control character or line separator as its escape.
struct EscapingWriter<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl fmt::Write for EscapingWriter<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut rest = s;
        while let Some(at) = rest.find(crate::auth::breaks_text) {
            self.0.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            match c {
                '\n' => self.0.write_str("\\n")?,
                '\r' => self.0.write_str("\\r")?,
                '\t' => self.0.write_str("\\t")?,
                '\0' => self.0.write_str("\\0")?,
                c => write!(self.0, "\\u{{{:x}}}", u32::from(c))?,
            }
            rest = &rest[at + c.len_utf8()..];
        }
        self.0.write_str(rest)
    }
}

/// An error field and its sources, as `DefaultVisitor` writes them (`error=e
/// error.sources=[a, b]`, without the colours), so they are escaped like any value.
struct ErrorChain<'a>(&'a str, &'a (dyn std::error::Error + 'static));

impl fmt::Debug for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.1)?;
        let mut source = self.1.source();
        if source.is_some() {
            write!(f, " {}.sources=[", self.0)?;
            let mut first = true;
            while let Some(error) = source {
                if !first {
                    f.write_str(", ")?;
                }
                write!(f, "{error}")?;
                first = false;
                source = error.source();
            }
            f.write_str("]")?;
        }
        Ok(())
    }
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
