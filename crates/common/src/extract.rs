//! Request extractors whose every failure is a problem+json naming what is wrong:
//! `Path`, `Query` and `Json` stand in for actix's own, which answer in plain text
//! and do not always say which parameter failed.
//!
//! Text reaching a handler through them never holds a NUL character (`%00` in a path or a
//! query, `\u0000` in a JSON string): PostgreSQL's text cannot store one, so a query using it
//! would fail with a 500. Each is refused here with a 400 naming the parameter or field.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::Problem;

mod lenient;
pub use lenient::{MAX_FAULTS, Misfit, REQUIRED, misfit};

/// Default body limit of JSON routes: 256 KiB (docs/operations.md says why).
pub const DEFAULT_BODY_LIMIT: usize = 256 * 1024;

/// Per-app override of the body limit: `App::app_data(BodyLimit(64 * 1024))`.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// How long a body may take to arrive once the request head is in. actix bounds the head
/// (5 s), nothing bounds the body: without this, a client trickling a byte now and then holds
/// its connection and its request open for ever (slowloris). Every body here is a few KiB from
/// a browser or an insurer's server.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Per-app override of the body timeout: `App::app_data(BodyTimeout(Duration::from_secs(2)))`.
#[derive(Debug, Clone, Copy)]
pub struct BodyTimeout(pub Duration);

/// What a parameter or field holding a NUL character is told.
pub const NUL_MESSAGE: &str = "must not contain a NUL character (U+0000)";

/// Path parameters. A scalar `T` (`Path<i64>`) takes the route's single parameter.
#[derive(Debug)]
pub struct Path<T>(pub T);

impl<T: DeserializeOwned> FromRequest for Path<T> {
    type Error = Problem;
    type Future = std::future::Ready<Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let info = req.match_info();
        // actix has already decoded `%00` in the matched path (it keeps only `%`, `/` and
        // `+` encoded), so a NUL is seen here as itself.
        if let Some((name, _)) = info.iter().find(|(_, value)| value.contains('\0')) {
            return std::future::ready(Err(Problem::invalid_parameter(name, NUL_MESSAGE)));
        }
        let de = actix_router::PathDeserializer::new(info);
        std::future::ready(serde_path_to_error::deserialize(de).map(Path).map_err(|e| {
            let field = match e.path().to_string() {
                p if p != "." => p,
                _ => info
                    .iter()
                    .next()
                    .map(|(name, _)| name.to_owned())
                    .unwrap_or_else(|| "path".to_owned()),
            };
            Problem::invalid_parameter(field, describe(&e.into_inner().to_string()))
        }))
    }
}

/// Query parameters, deserialised with the failing parameter named.
///
/// The route's parameters are the fields of `T` (a struct). A parameter the route does not
/// take is 400 `invalid_parameter` naming it and the ones the route takes, so a misspelt
/// filter (`activeonly=true`) never silently shows everything; the one exception is `_`, the
/// cache-buster browsers and HTTP libraries add (`?_=1700000000`), which is ignored. A
/// parameter the route takes with a bad value is 400 `invalid_parameter` naming it. For any
/// other `T` every parameter is passed on (the route checks the names itself).
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> Query<T> {
    pub fn parse(query: &str) -> Result<T, Problem> {
        let known;
        let query = match struct_fields::<T>() {
            Some(fields) => {
                if let Some(name) = unknown_name(query, fields) {
                    return Err(not_taken(&name, fields));
                }
                known = only_named(query, fields);
                known.as_ref()
            }
            None => query,
        };
        if let Some(field) = not_utf8(query) {
            return Err(Problem::invalid_parameter(
                field,
                "must be UTF-8 text: its percent-encoded bytes are not",
            ));
        }
        if let Some(field) = holding_nul(query) {
            return Err(Problem::invalid_parameter(field, NUL_MESSAGE));
        }
        let parse =
            || serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        // Read once without tracking where it is; only a refusal reads again to name the
        // parameter (the same input fails the same way).
        if let Ok(value) = T::deserialize(parse()) {
            return Ok(value);
        }
        serde_path_to_error::deserialize(parse()).map_err(|e| {
            let field = e.path().to_string();
            let message = describe(&e.into_inner().to_string());
            if field == "." {
                // serde reports a missing field at the top level; its message names it.
                Problem::new(
                    actix_web::http::StatusCode::BAD_REQUEST,
                    "invalid_parameter",
                    message,
                )
            } else {
                Problem::invalid_parameter(field, message)
            }
        })
    }
}

/// The cache-buster browsers and HTTP libraries add (`?_=1700000000123`): the one parameter
/// a route takes without naming it.
pub const CACHE_BUSTER: &str = "_";

/// The name of a `name=value` pair, percent- and plus-decoded (bytes that are not UTF-8 as
/// U+FFFD, which no field is named); borrowed when it holds nothing to decode.
fn param_name(pair: &str) -> Cow<'_, str> {
    let raw = pair.split_once('=').map_or(pair, |(name, _)| name);
    if !raw.contains(['+', '%']) {
        return Cow::Borrowed(raw);
    }
    let spaced = raw.replace('+', " ");
    Cow::Owned(
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// The first parameter name in `query` (percent-decoded) that is neither one of `fields`
/// nor the cache-buster.
fn unknown_name(query: &str, fields: &[&str]) -> Option<String> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(param_name)
        .find(|name| name != CACHE_BUSTER && !fields.contains(&name.as_ref()))
        .map(Cow::into_owned)
}

/// The refusal of a parameter the route does not take: its name, and the ones it takes.
fn not_taken(name: &str, fields: &[&str]) -> Problem {
    let message = if fields.is_empty() {
        "is not a parameter of this route, which takes none".to_owned()
    } else {
        format!(
            "is not a parameter of this route, which takes {}",
            fields
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Problem::invalid_parameter(name, message)
}

/// The `name=value` pairs of `query` whose name (percent-decoded) is one of `fields`, as
/// they were written: `query` itself when it names nothing else.
fn only_named<'q>(query: &'q str, fields: &[&str]) -> Cow<'q, str> {
    let known = |pair: &&str| fields.contains(&param_name(pair).as_ref());
    if query.split('&').all(|pair| known(&pair)) {
        return Cow::Borrowed(query);
    }
    Cow::Owned(query.split('&').filter(known).collect::<Vec<_>>().join("&"))
}

/// The field names `T` deserialises from, when `T` is a struct (what serde's derive hands to
/// `deserialize_struct`, renames and aliases included); `None` for anything else.
fn struct_fields<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    use serde::de::{self, Visitor};

    /// Stops the deserialisation as soon as the fields are known.
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("probing the fields")
        }
    }
    impl std::error::Error for Stop {}
    impl de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }

    struct Probe<'a>(&'a mut Option<&'static [&'static str]>);
    impl<'de> de::Deserializer<'de> for Probe<'_> {
        type Error = Stop;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            *self.0 = Some(fields);
            Err(Stop)
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let mut fields = None;
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

/// The first parameter whose name or value, percent-decoded, is not UTF-8. `form_urlencoded`
/// would replace such bytes with U+FFFD, and `q=%FF` would search for that character
/// instead of being refused.
fn not_utf8(query: &str) -> Option<String> {
    if !query.contains('%') {
        return None;
    }
    let decodes = |s: &str| {
        if !s.contains('%') {
            return true;
        }
        // Most parameters are short: decoded on the stack, without an allocation.
        let mut buf = [0u8; 512];
        let mut len = 0;
        for b in percent_encoding::percent_decode_str(s) {
            if len == buf.len() {
                return percent_encoding::percent_decode_str(s)
                    .decode_utf8()
                    .is_ok();
            }
            buf[len] = b;
            len += 1;
        }
        std::str::from_utf8(&buf[..len]).is_ok()
    };
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        (!decodes(name) || !decodes(value)).then(|| {
            percent_encoding::percent_decode_str(name)
                .decode_utf8_lossy()
                .replace('+', " ")
        })
    })
}

/// The first parameter whose name or value, decoded, holds a NUL character (only `%00`
/// decodes to one).
fn holding_nul(query: &str) -> Option<String> {
    if !query.contains("%00") {
        return None;
    }
    form_urlencoded::parse(query.as_bytes())
        .find(|(name, value)| name.contains('\0') || value.contains('\0'))
        .map(|(name, _)| name.replace('\0', "\\u0000"))
}

impl<T: DeserializeOwned> FromRequest for Query<T> {
    type Error = Problem;
    type Future = std::future::Ready<Result<Self, Problem>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(Self::parse(req.query_string()).map(Query))
    }
}

/// Serde's messages, said the way a client developer reads them.
fn describe(serde_message: &str) -> String {
    if serde_message.contains("provided string was not `true` or `false`") {
        return "must be `true` or `false`".to_owned();
    }
    if let Some(hint) = date_time_hint(serde_message) {
        return hint;
    }
    if serde_message.contains("invalid digit")
        || serde_message.contains("can not parse")
        || serde_message.contains("number too large")
    {
        return "must be an integer in range".to_owned();
    }
    serde_message.to_owned()
}

/// A JSON body: `application/json` (415 otherwise), within the body limit (413), valid JSON
/// of the route's shape (400 `invalid_payload` naming the field path).
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = Problem;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Problem>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let limit = req
            .app_data::<BodyLimit>()
            .map_or(DEFAULT_BODY_LIMIT, |l| l.0);
        let checked = require_json(req);
        let body = read_body(req, payload.take(), limit);
        Box::pin(async move {
            checked?;
            let bytes = body.await?;
            parse_json(&bytes).map(Json)
        })
    }
}

/// What a date and time parameter or field that does not parse is told, whatever the
/// parser said ("premature end of input" for `2026-11-01`): the form it takes.
pub const DATE_TIME_MESSAGE: &str = "must be a date and time with its offset from UTC, as RFC 3339 \
     writes it: `2026-11-01T14:30:00-03:00` (or `Z` for UTC)";

/// The messages of chrono's parser (its `ParseErrorKind`s, as serde passes them on): the
/// value was meant to be a date and time.
fn date_time_hint(message: &str) -> Option<String> {
    const CHRONO: [&str; 7] = [
        "premature end of input",
        "input contains invalid characters",
        "trailing input",
        "input is out of range",
        "input is not enough for unique date and time",
        "no possible date and time matching input",
        "bad or unsupported format string",
    ];
    CHRONO
        .iter()
        .any(|kind| message.starts_with(kind))
        .then(|| DATE_TIME_MESSAGE.to_owned())
}

/// serde's "missing field `x`" (its derive's wording), the field's name.
fn missing_field(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(name, _)| name)
}

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = inner.to_string();
        if inner.is_data() {
            // A field the shape requires is absent: named, with its place in the body.
            if let Some(name) = missing_field(&message) {
                let field = if path == "." {
                    name.to_owned()
                } else {
                    format!("{path}.{name}")
                };
                return Problem::invalid_payload(Some(field), REQUIRED);
            }
            if path != "."
                && let Some(hint) = date_time_hint(&message)
            {
                return Problem::invalid_payload(Some(path), hint);
            }
        }
        if inner.is_syntax() || inner.is_eof() || path == "." {
            Problem::invalid_payload(
                None,
                format!("the body is not valid JSON of this route's shape: {inner}"),
            )
        } else {
            Problem::invalid_payload(Some(path), inner.to_string())
        }
    })?;
    de.end()
        .map_err(|e| Problem::invalid_payload(None, format!("the body is not valid JSON: {e}")))?;
    // A NUL can only be written `\u0000` in JSON; a body without that text has none, and is
    // not read a second time.
    if memmem(bytes, br"\u0000")
        && let Ok(whole) = serde_json::from_slice::<serde_json::Value>(bytes)
        && let Some(field) = nul_field(&whole, String::new())
    {
        return Err(Problem::invalid_payload(Some(field), NUL_MESSAGE));
    }
    Ok(value)
}

fn memmem(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The path (`caller.phone`, `items[2].name`, as serde_path_to_error writes it) of the first
/// string or key of `value` holding a NUL character.
fn nul_field(value: &serde_json::Value, path: String) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(s) if s.contains('\0') => Some(if path.is_empty() {
            ".".to_owned()
        } else {
            path
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_field(item, format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            let at = if path.is_empty() {
                key.replace('\0', "\\u0000")
            } else {
                format!("{path}.{}", key.replace('\0', "\\u0000"))
            };
            if key.contains('\0') {
                Some(at)
            } else {
                nul_field(item, at)
            }
        }),
        _ => None,
    }
}

/// 415 unless the request says `application/json` (or a `+json` type).
pub fn require_json(req: &HttpRequest) -> Result<(), Problem> {
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| {
            let m = m.trim().to_ascii_lowercase();
            m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
        })
        .unwrap_or(false);
    if is_json {
        Ok(())
    } else {
        Err(Problem::unsupported_media_type())
    }
}

/// Reads the whole body, refusing it (413) as soon as it passes `limit`: an oversized
/// `Content-Length` is refused before a byte is read. A body still incomplete after the body
/// timeout (`BodyTimeout`, default 10 s) is refused with 408.
pub fn read_body(
    req: &HttpRequest,
    mut payload: Payload,
    limit: usize,
) -> impl Future<Output = Result<Bytes, Problem>> + 'static {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let timeout = req
        .app_data::<BodyTimeout>()
        .map_or(DEFAULT_BODY_TIMEOUT, |t| t.0);
    async move {
        if declared.is_some_and(|n| n > limit) {
            return Err(Problem::payload_too_large(limit));
        }
        let read = async {
            let mut body = BytesMut::with_capacity(declared.unwrap_or(1024).min(limit));
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|e| {
                    Problem::invalid_payload(None, format!("the body could not be read: {e}"))
                })?;
                if body.len() + chunk.len() > limit {
                    return Err(Problem::payload_too_large(limit));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(body.freeze())
        };
        tokio::time::timeout(timeout, read)
            .await
            .unwrap_or_else(|_| Err(Problem::body_timeout(timeout)))
    }
}

#[cfg(test)]
mod tests;
