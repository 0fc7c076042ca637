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
/// Parameters the route does not take are ignored, so a browser's cache-buster (`?_=1700000000`)
/// or a parameter added by a newer client changes nothing; a parameter the route takes with a
/// bad value is 400 `invalid_parameter` naming it. The route's parameters are the fields of
/// `T` (a struct; `#[serde(deny_unknown_fields)]` on it has no effect here). For any other `T`
/// every parameter is passed on.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> Query<T> {
    pub fn parse(query: &str) -> Result<T, Problem> {
        let known;
        let query = match struct_fields::<T>() {
            Some(fields) => {
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

/// The `name=value` pairs of `query` whose name (percent-decoded) is one of `fields`, as
/// they were written: `query` itself when it names nothing else.
fn only_named<'q>(query: &'q str, fields: &[&str]) -> Cow<'q, str> {
    let known = |pair: &&str| {
        let name = pair.split_once('=').map_or(*pair, |(name, _)| name);
        if !name.contains(['+', '%']) {
            return fields.contains(&name);
        }
        let name = name.replace('+', " ");
        percent_encoding::percent_decode_str(&name)
            .decode_utf8()
            .is_ok_and(|name| fields.contains(&name.as_ref()))
    };
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

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
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
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Paging {
        page: Option<u32>,
        include_self: Option<bool>,
    }

    #[test]
    fn query_errors_name_the_parameter() {
        let p = Query::<Paging>::parse("page=abc").unwrap_err();
        assert_eq!(p.status, 400);
        assert_eq!(p.errors[0].field, "page");
        let p = Query::<Paging>::parse("include_self=yes").unwrap_err();
        assert_eq!(p.errors[0].field, "include_self");
        assert_eq!(p.errors[0].message, "must be `true` or `false`");
        let ok = Query::<Paging>::parse("page=2&include_self=false").unwrap();
        assert_eq!((ok.page, ok.include_self), (Some(2), Some(false)));
    }

    #[derive(Debug, Deserialize)]
    struct Search {
        q: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        q: Option<String>,
        #[serde(rename = "page-size")]
        page_size: Option<u32>,
    }

    #[test]
    fn only_the_named_parameters_are_kept_as_written() {
        let fields = &["q", "page-size"];
        // Each query, what is kept, and whether that is the query itself (nothing copied).
        for (query, kept, itself) in [
            (
                "q=s%C3%A3o+jos%C3%A9&page-size=2",
                "q=s%C3%A3o+jos%C3%A9&page-size=2",
                true,
            ),
            ("q", "q", true),
            ("page%2Dsize=1&q=a", "page%2Dsize=1&q=a", true),
            ("", "", false),
            (
                "_=1&q=a&&utm_source=x&page-size=3",
                "q=a&page-size=3",
                false,
            ),
            ("page+size=1&q=a", "q=a", false),
            ("%FF=1&q=a", "q=a", false),
        ] {
            let got = only_named(query, fields);
            assert_eq!(got, kept, "{query}");
            assert_eq!(matches!(got, Cow::Borrowed(_)), itself, "{query}");
        }
    }

    #[test]
    fn parameters_the_route_does_not_take_are_ignored() {
        let ok =
            Query::<Strict>::parse("_=1700000000&q=s%C3%A3o&page-size=2&utm_source=x").unwrap();
        assert_eq!((ok.q.as_deref(), ok.page_size), (Some("são"), Some(2)));
        // Even when their bytes are not UTF-8, or they have no value.
        let ok = Query::<Strict>::parse("x=%FF&%FF=1&flag&q=a").unwrap();
        assert_eq!(ok.q.as_deref(), Some("a"));
        // A parameter the route takes is still checked, and named.
        let p = Query::<Strict>::parse("_=1&page-size=many").unwrap_err();
        assert_eq!((p.status, p.errors[0].field.as_str()), (400, "page-size"));
        let p = Query::<Paging>::parse("page=abc&_=1").unwrap_err();
        assert_eq!(p.errors[0].field, "page");
        // Not a struct: every parameter is passed on.
        let all = Query::<std::collections::HashMap<String, String>>::parse("a=1&_=2").unwrap();
        assert_eq!(all.len(), 2);
    }

    #[test]
    fn query_bytes_that_are_not_utf8_are_refused_naming_the_parameter() {
        for query in ["q=%FF", "q=ab%C3%28", "q=%80", "page=1&q=s%C3%A3o%FF"] {
            let p = Query::<Search>::parse(query).unwrap_err();
            assert_eq!(
                (p.status, p.errors[0].field.as_str()),
                (400, "q"),
                "{query}"
            );
        }
        // A name that is not UTF-8 is named as well as it can be (where every name counts).
        let p = Query::<std::collections::HashMap<String, String>>::parse("%FFx=1").unwrap_err();
        assert_eq!(p.errors[0].field, "\u{FFFD}x");
        // Long ones too (past what is decoded on the stack).
        let long = format!("q={}%FF", "%C3%A3".repeat(300));
        let p = Query::<Search>::parse(&long).unwrap_err();
        assert_eq!(p.errors[0].field, "q");
        let long = "%C3%A3".repeat(300);
        let ok = Query::<Search>::parse(&format!("q={long}")).unwrap();
        assert_eq!(ok.q.as_deref(), Some("ã".repeat(300).as_str()));
        // Well-formed UTF-8, percent-encoded or plus-encoded, passes, U+FFFD itself included.
        let ok = Query::<Search>::parse("q=s%C3%A3o+jos%C3%A9").unwrap();
        assert_eq!(ok.q.as_deref(), Some("são josé"));
        let ok = Query::<Search>::parse("q=%EF%BF%BD").unwrap();
        assert_eq!(ok.q.as_deref(), Some("\u{FFFD}"));
    }

    #[test]
    fn a_nul_in_a_query_parameter_is_refused_naming_it() {
        for (query, field) in [
            ("q=%00", "q"),
            ("q=abc%00def", "q"),
            ("_=1&page-size=2&q=%00", "q"),
        ] {
            let p = Query::<Strict>::parse(query).unwrap_err();
            assert_eq!(
                (p.status, &*p.code, p.errors[0].field.as_str()),
                (400, "invalid_parameter", field),
                "{query}"
            );
            assert_eq!(p.errors[0].message, NUL_MESSAGE);
        }
        // Where every parameter counts, a name holding one is named as well as it can be.
        let p = Query::<std::collections::HashMap<String, String>>::parse("a%00b=1").unwrap_err();
        assert_eq!(p.errors[0].field, "a\\u0000b");
        // A parameter the route does not take is ignored, NUL or not; `%2500` is the text
        // `%00`, not a NUL.
        assert!(Query::<Strict>::parse("x=%00&q=a").is_ok());
        let ok = Query::<Search>::parse("q=%2500").unwrap();
        assert_eq!(ok.q.as_deref(), Some("%00"));
    }

    #[test]
    fn a_nul_in_a_path_parameter_is_refused_naming_it() {
        let req = actix_web::test::TestRequest::default()
            .param("proposalId", "99121\0")
            .to_http_request();
        let p = Path::<String>::extract(&req).into_inner().unwrap_err();
        assert_eq!(
            (p.status, &*p.code, p.errors[0].field.as_str()),
            (400, "invalid_parameter", "proposalId")
        );
        assert_eq!(p.errors[0].message, NUL_MESSAGE);
        let req = actix_web::test::TestRequest::default()
            .param("proposalId", "99121")
            .to_http_request();
        assert_eq!(
            Path::<String>::extract(&req).into_inner().unwrap().0,
            "99121"
        );
    }

    #[test]
    fn a_nul_in_a_json_string_is_refused_naming_the_field() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Filter {
            code: Option<String>,
            tags: Option<Vec<String>>,
            caller: Option<serde_json::Value>,
        }
        for (body, field) in [
            (r#"{"code":"\u0000"}"#, "code"),
            (r#"{"code":"proposal\u0000_not_found"}"#, "code"),
            (r#"{"tags":["a","b\u0000"]}"#, "tags[1]"),
            (r#"{"caller":{"phone":"1\u0000"}}"#, "caller.phone"),
            (r#"{"caller":{"a\u0000b":1}}"#, "caller.a\\u0000b"),
        ] {
            let p = parse_json::<Filter>(body.as_bytes()).unwrap_err();
            assert_eq!(
                (p.status, &*p.code, p.errors[0].field.as_str()),
                (400, "invalid_payload", field),
                "{body}"
            );
            assert_eq!(p.errors[0].message, NUL_MESSAGE);
        }
        // An escaped backslash before `u0000` is text, not a NUL.
        let ok = parse_json::<Filter>(br#"{"code":"\\u0000"}"#).unwrap();
        assert_eq!(ok.code.as_deref(), Some("\\u0000"));
        // The shape is checked first: a wrong type is named as such.
        let p = parse_json::<Filter>(br#"{"code":1,"tags":["\u0000"]}"#).unwrap_err();
        assert_eq!(p.errors[0].field, "code");
        assert_ne!(p.errors[0].message, NUL_MESSAGE);
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        caller: Caller,
    }
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Caller {
        phone: String,
    }

    #[test]
    fn json_errors_name_the_field_path() {
        let p = parse_json::<Body>(br#"{"caller":{"phone":12}}"#).unwrap_err();
        assert_eq!(p.code, "invalid_payload");
        assert_eq!(p.errors[0].field, "caller.phone");
        let p = parse_json::<Body>(br#"{"caller":{"phone":"1","x":1}}"#).unwrap_err();
        assert_eq!(p.errors[0].field, "caller.x");
        let p = parse_json::<Body>(b"{not json").unwrap_err();
        assert_eq!(p.status, 400);
        assert!(p.errors.is_empty());
        let p = parse_json::<Body>(br#"{"caller":{"phone":"1"}} trailing"#).unwrap_err();
        assert_eq!(p.status, 400);
    }
}
