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
fn a_parameter_the_route_does_not_take_is_refused_naming_it_and_the_ones_it_takes() {
    // The cache-buster is the one exception.
    let ok = Query::<Strict>::parse("_=1700000000&q=s%C3%A3o&page-size=2").unwrap();
    assert_eq!((ok.q.as_deref(), ok.page_size), (Some("são"), Some(2)));
    // A misspelt or unknown name, with a value or none, whatever its bytes.
    for (query, name) in [
        ("q=a&pagesize=2", "pagesize"),
        ("_=1&utm_source=x&q=a", "utm_source"),
        ("flag&q=a", "flag"),
        ("x=%FF&q=a", "x"),
        ("page+size=1", "page size"),
        ("x=%00&q=a", "x"),
    ] {
        let p = Query::<Strict>::parse(query).unwrap_err();
        assert_eq!(
            (p.status, &*p.code, p.errors[0].field.as_str()),
            (400, "invalid_parameter", name),
            "{query}"
        );
        assert_eq!(
            p.errors[0].message, "is not a parameter of this route, which takes `q`, `page-size`",
            "{query}"
        );
    }
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
    for query in ["q=%FF", "q=ab%C3%28", "q=%80", "_=1&q=s%C3%A3o%FF"] {
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
    // `%2500` is the text `%00`, not a NUL.
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

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Reading {
    recorded_at: chrono::DateTime<chrono::Utc>,
    place: Place,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Place {
    lat: f64,
    lon: f64,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Range {
    from: Option<chrono::DateTime<chrono::Utc>>,
}

/// A date without its time, or one that is not a date, says the form it takes; a field the
/// shape requires and the body lacks is named, at its place in the body.
#[test]
fn a_bad_date_or_a_missing_field_says_what_to_send() {
    for body in [
        r#"{"recorded_at": "2026-11-01", "place": {"lat": 1, "lon": 2}}"#,
        r#"{"recorded_at": "ontem", "place": {"lat": 1, "lon": 2}}"#,
        r#"{"recorded_at": "2026-11-01T25:00:00Z", "place": {"lat": 1, "lon": 2}}"#,
    ] {
        let p = parse_json::<Reading>(body.as_bytes()).unwrap_err();
        assert_eq!(
            (p.errors[0].field.as_str(), p.errors[0].message.as_str()),
            ("recorded_at", DATE_TIME_MESSAGE),
            "{body}"
        );
    }
    for (body, field) in [
        (r#"{"place": {"lat": 1, "lon": 2}}"#, "recorded_at"),
        (
            r#"{"recorded_at": "2026-11-01T14:30:00-03:00", "place": {"lat": 1}}"#,
            "place.lon",
        ),
    ] {
        let p = parse_json::<Reading>(body.as_bytes()).unwrap_err();
        assert_eq!(
            (p.status, &*p.code, p.errors[0].field.as_str()),
            (400, "invalid_payload", field),
            "{body}"
        );
        assert_eq!(p.errors[0].message, "is required", "{body}");
    }
    // In a query too.
    let p = Query::<Range>::parse("from=2026-11-01").unwrap_err();
    assert_eq!(
        (p.errors[0].field.as_str(), p.errors[0].message.as_str()),
        ("from", DATE_TIME_MESSAGE)
    );
    assert!(Query::<Range>::parse("from=2026-11-01T00:00:00-03:00").is_ok());
}
