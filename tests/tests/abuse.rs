//! Hostile input against the real processes: oversized and malformed requests, wildcards in
//! search terms, tampered tokens, another tenant's data, other users' logins. Each refusal is
//! a clean 4xx (problem+json wherever the application answers) and changes no data.

mod support;

use std::time::{Duration, Instant};

use common::auth::{JwtKeys, now_secs};
use common::test_support::TestDb;
use secrecy::SecretString;
use serde_json::{Value, json};

use support::{
    SECRET, Service, assert_problem, basic_token, callback_jwt, client, count, dispatch_token,
    exec, porto, raw_request, read, row_counts, seed_callback, seed_dispatch, texts,
};

/// The services over a fresh database with demo data.
struct Stack {
    db: TestDb,
    dispatch: Option<Service>,
    callback: Option<Service>,
    tokens: Vec<(String, String)>,
    http: reqwest::Client,
}

impl Stack {
    async fn dispatch() -> Stack {
        let db = TestDb::blank().await;
        seed_dispatch(db.url());
        let dispatch = Service::start("dispatch-api", db.url(), &[]);
        Stack {
            db,
            dispatch: Some(dispatch),
            callback: None,
            tokens: Vec::new(),
            http: client(),
        }
    }

    async fn callback() -> Stack {
        let db = TestDb::blank().await;
        let tokens = seed_callback(db.url());
        let callback = Service::start("proposal-callback", db.url(), &[]);
        Stack {
            db,
            dispatch: None,
            callback: Some(callback),
            tokens,
            http: client(),
        }
    }

    fn d(&self) -> &Service {
        self.dispatch.as_ref().unwrap()
    }

    fn c(&self) -> &Service {
        self.callback.as_ref().unwrap()
    }

    fn url(&self) -> &str {
        self.db.url()
    }

    async fn dispatch_get(
        &self,
        path_and_query: &str,
        token: Option<&str>,
    ) -> (u16, String, Value) {
        let mut req = self
            .http
            .get(format!("{}{path_and_query}", self.d().base()));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    async fn callback_post(
        &self,
        path: &str,
        bearer: Option<&str>,
        body: Vec<u8>,
    ) -> (u16, String, Value) {
        let mut req = self
            .http
            .post(format!("{}{path}", self.c().base()))
            .header("content-type", "application/json")
            .body(body);
        if let Some(t) = bearer {
            req = req.bearer_auth(t);
        }
        read(req.send().await.unwrap()).await
    }

    async fn callback_get(&self, path: &str, bearer: &str) -> (u16, String, Value) {
        let req = self
            .http
            .get(format!("{}{path}", self.c().base()))
            .bearer_auth(bearer);
        read(req.send().await.unwrap()).await
    }

    async fn jwt(&self, integration: &str) -> String {
        callback_jwt(
            &self.http,
            &self.c().base(),
            &basic_token(&self.tokens, integration),
        )
        .await
    }

    /// Both processes still answer, after whatever was thrown at them.
    fn assert_alive(&self) {
        for s in [&self.dispatch, &self.callback].into_iter().flatten() {
            let (status, _, body) = support::get(&s.addr, "/readyz", &[]).unwrap();
            assert_eq!(status, 200, "{} after abuse: {body}", s.name);
        }
    }
}

/// `body` in HTTP/1.1 chunked encoding, `size` bytes a chunk, with the closing chunk.
fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 64);
    for c in body.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// `[[[...]]]`, `depth` levels deep.
fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut b = "[".repeat(depth).into_bytes();
    b.extend(std::iter::repeat_n(b']', depth));
    b
}

/// `{"a":{"a":...1}}`, `depth` levels deep.
fn nested_objects(depth: usize) -> Vec<u8> {
    let mut b = r#"{"a":"#.repeat(depth).into_bytes();
    b.push(b'1');
    b.extend(std::iter::repeat_n(b'}', depth));
    b
}

fn keys() -> JwtKeys {
    JwtKeys::lenient(&SecretString::from(SECRET))
}

fn b64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Tokens that must never authenticate, each with what is wrong with it, carrying `claims`
/// (whose `exp` is in the future).
fn tampered(claims: &Value) -> Vec<(&'static str, String)> {
    let good = keys().issue(claims).unwrap();
    let body = good.split('.').nth(1).unwrap().to_owned();
    let none_header = b64url(br#"{"alg":"none","typ":"JWT"}"#);
    let hs512_header = b64url(br#"{"alg":"HS512","typ":"JWT"}"#);
    let sig = good.split('.').nth(2).unwrap();
    let wrong_key = JwtKeys::lenient(&SecretString::from(
        "another-secret-another-secret-another-secret",
    ));
    let with = |patch: Value| {
        let mut c = claims.clone();
        for (k, v) in patch.as_object().unwrap() {
            c[k] = v.clone();
        }
        keys().issue(&c).unwrap()
    };
    let mut other_claims = claims.clone();
    other_claims["exp"] = json!(claims["exp"].as_i64().unwrap() + 3600);
    let forged_body = b64url(serde_json::to_string(&other_claims).unwrap().as_bytes());
    vec![
        ("alg none, no signature", format!("{none_header}.{body}.")),
        (
            "alg none, old signature",
            format!("{none_header}.{body}.{sig}"),
        ),
        (
            "alg HS512 header on an HS256 signature",
            format!("{hs512_header}.{body}.{sig}"),
        ),
        (
            "claims changed after signing",
            format!("{}.{forged_body}.{sig}", good.split('.').next().unwrap()),
        ),
        ("signed with another key", wrong_key.issue(claims).unwrap()),
        ("expired", with(json!({"exp": now_secs() - 120}))),
        ("not yet valid", with(json!({"nbf": now_secs() + 600}))),
        ("no exp", {
            let mut c = claims.clone();
            c.as_object_mut().unwrap().remove("exp");
            keys().issue(&c).unwrap()
        }),
        ("garbage", "not.a.token".to_owned()),
        (
            "empty signature",
            format!("{}.{body}.", good.split('.').next().unwrap()),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_bodies_and_headers_are_refused_with_a_clean_4xx() {
    let s = Stack::callback().await;
    let jwt = s.jwt("demo-a/porto").await;
    let before = row_counts(s.url(), "proposal").await;

    // A body over 64 KiB on the callback route: 413 before it is read or stored.
    let mut big = porto("POR-2026-000123", "APROVADA");
    big.pop();
    big.extend_from_slice(br#","padding":""#);
    big.extend(std::iter::repeat_n(b'x', 64 * 1024));
    big.extend_from_slice(br#""}"#);
    let (status, ctype, body) = s
        .callback_post("/callback/demo-a/porto", Some(&jwt), big.clone())
        .await;
    assert_problem("64 KiB + callback", status, &ctype, &body, &[413]);
    assert_eq!(body["code"], "payload_too_large");

    // The same without Content-Length (chunked): refused as soon as it passes the limit.
    let chunked = chunked(&big, 8 * 1024);
    let (status, head, body) = raw_request(
        &s.c().addr,
        b"POST /callback/demo-a/porto HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
        &[
            ("Authorization", &format!("Bearer {jwt}")),
            ("Content-Type", "application/json"),
            ("Transfer-Encoding", "chunked"),
        ],
        &chunked,
    )
    .unwrap();
    assert_eq!(status, 413, "chunked 64 KiB + callback: {body}");
    assert!(head.contains("application/problem+json"), "{head}");

    // A declared length far beyond the limit, with no body following: refused at once.
    let (status, _, body) = raw_request(
        &s.c().addr,
        b"POST /callback/demo-a/porto HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
        &[
            ("Authorization", &format!("Bearer {jwt}")),
            ("Content-Type", "application/json"),
            ("Content-Length", "10000000000"),
        ],
        b"",
    )
    .unwrap();
    assert_eq!(status, 413, "{body}");

    // Headers: one of 200 KiB (actix-http reads a head of at most 128 KiB), and 200 small
    // ones (at most 96). actix refuses both before the app sees them (431, plain text: no
    // route runs, so there is no problem+json to send).
    let huge = "a".repeat(200 * 1024);
    let many: Vec<(String, String)> = (0..200).map(|i| (format!("x-h{i}"), "v".into())).collect();
    for (what, headers) in [
        ("a 200 KiB header", vec![("x-big".to_owned(), huge)]),
        ("200 headers", many),
    ] {
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let (status, _, _) = raw_request(
            &s.c().addr,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
            &headers,
            b"",
        )
        .unwrap_or((0, String::new(), String::new()));
        assert!(status == 431 || status == 400, "{what}: status {status}");
    }
    assert_eq!(row_counts(s.url(), "proposal").await, before);
    s.assert_alive();
}

#[tokio::test(flavor = "multi_thread")]
async fn deeply_nested_and_invalid_utf8_bodies_are_refused_without_a_crash() {
    let s = Stack::callback().await;
    let jwt = s.jwt("demo-a/porto").await;
    let proposals_before = count(
        s.url(),
        "SELECT count(*) AS n FROM proposal.proposals WHERE status <> 'under_analysis'",
    )
    .await;
    let mut in_field =
        br#"{"idProposta":"POR-2026-000123","situacao":"APROVADA","protocolo":"p","x":"#.to_vec();
    in_field.extend(nested_arrays(10_000));
    in_field.push(b'}');
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("10,000 nested arrays", nested_arrays(10_000)),
        ("10,000 nested objects", nested_objects(10_000)),
        ("nesting inside an ignored field", in_field),
        (
            "invalid UTF-8",
            b"{\"idProposta\":\"\xff\xfe\",\"situacao\":\"APROVADA\"}".to_vec(),
        ),
        (
            "a lone surrogate escape",
            br#"{"idProposta":"\ud800","situacao":"APROVADA","protocolo":"p"}"#.to_vec(),
        ),
        ("NUL bytes", b"{\"idProposta\":\"a\x00b\"}".to_vec()),
        ("empty", Vec::new()),
    ];
    for (what, body) in cases {
        let (status, ctype, problem) = s
            .callback_post("/callback/demo-a/porto", Some(&jwt), body)
            .await;
        assert_problem(what, status, &ctype, &problem, &[400, 422]);
    }
    // Invalid UTF-8 in the path's tenant, percent-encoded: 400 naming it.
    let (status, ctype, problem) = s
        .callback_post("/callback/%FF%FE/porto", Some(&jwt), porto("x", "APROVADA"))
        .await;
    assert_problem(
        "invalid UTF-8 tenant",
        status,
        &ctype,
        &problem,
        &[400, 403],
    );
    let (status, ctype, problem) = s
        .callback_get("/admin/receipts?status=%FF", &admin_token("demo-a"))
        .await;
    assert_problem("invalid UTF-8 in a query", status, &ctype, &problem, &[400]);

    let proposals_after = count(
        s.url(),
        "SELECT count(*) AS n FROM proposal.proposals WHERE status <> 'under_analysis'",
    )
    .await;
    assert_eq!(proposals_after, proposals_before, "no proposal moved");
    assert_eq!(
        count(
            s.url(),
            "SELECT count(*) AS n FROM proposal.integration_history"
        )
        .await,
        0
    );
    s.assert_alive();
}

fn admin_token(tenant: &str) -> String {
    keys()
        .issue(&json!({"sub": "ops", "tenant": tenant, "role": "admin", "aud": "proposal-callback-admin", "iat": now_secs(), "exp": now_secs() + 600}))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_query_strings_on_dispatch_are_400_naming_the_parameter() {
    let s = Stack::dispatch().await;
    let token = dispatch_token(s.url(), "tarm");
    let long = "a".repeat(101);
    let very_long = "b".repeat(20_000);
    let cases = [
        format!("/user/search?q={long}"),
        format!("/incident/mask?q={very_long}"),
        format!("/health-unit?q={long}"),
        format!("/employee/search?query={long}"),
        "/incident/mask?q=%00".to_owned(),
        "/user/search?limit=21".to_owned(),
        "/user/search?limit=-1".to_owned(),
        "/user/search?offset=99999999999999999999".to_owned(),
        "/unallocated?page_size=101".to_owned(),
        "/unallocated?page=0".to_owned(),
        "/unallocated?include_self=yes".to_owned(),
        "/mobile-unit?active_only=1".to_owned(),
        "/user/abc".to_owned(),
        "/user/99999999999999999999999".to_owned(),
    ];
    for path in &cases {
        let (status, ctype, body) = s.dispatch_get(path, Some(&token)).await;
        assert_problem(&path[..path.len().min(60)], status, &ctype, &body, &[400]);
    }
    // Percent-encoded bytes that are not UTF-8: 400 naming the parameter, never a search
    // for U+FFFD.
    for path in [
        "/user/search?q=%FF%FE",
        "/health-unit?q=%C3%28",
        "/incident/mask?q=%80",
    ] {
        let (status, ctype, body) = s.dispatch_get(path, Some(&token)).await;
        assert_problem(path, status, &ctype, &body, &[400]);
        assert_eq!(body["errors"][0]["field"], "q", "{path}: {body}");
    }
    // Raw bytes that are not UTF-8 in the request line: refused by the HTTP layer.
    let (status, _, _) = raw_request(
        &s.d().addr,
        b"GET /user/search?q=\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
        &[("Authorization", &format!("Bearer {token}"))],
        b"",
    )
    .unwrap();
    assert!((400..500).contains(&status), "raw invalid UTF-8: {status}");
    s.assert_alive();
}

#[tokio::test(flavor = "multi_thread")]
async fn sql_and_like_wildcards_in_search_terms_match_only_literally() {
    let s = Stack::dispatch().await;
    let token = dispatch_token(s.url(), "admin");
    // One name that holds every wildcard literally, so a literal match has something to find.
    exec(
        s.url(),
        r"UPDATE dispatch.users SET descriptive_name = 'Zé 100%_off \ O''Brien' WHERE login = 'regulador'",
    )
    .await;
    let before = row_counts(s.url(), "dispatch").await;
    for term in [
        "%",
        "_",
        "\\",
        "'",
        "%_",
        "100%",
        "0%_",
        "'' OR 1=1 --",
        "%' OR '1'='1",
        "*",
        "[a]",
        ".*",
    ] {
        let enc: String = term.bytes().map(|b| format!("%{b:02X}")).collect();
        for path in [
            format!("/user/search?q={enc}"),
            format!("/employee/search?query={enc}"),
            format!("/incident/mask?q={enc}"),
            format!("/health-unit?q={enc}"),
        ] {
            let (status, _, body) = s.dispatch_get(&path, Some(&token)).await;
            assert_eq!(status, 200, "{term:?} {path}: {body}");
            let items = body.as_array().unwrap_or_else(|| panic!("{path}: {body}"));
            let folded = |v: &Value| v.to_string().to_lowercase().replace("\\\\", "\\");
            for item in items {
                let text = folded(item);
                assert!(
                    text.contains(&term.to_lowercase()),
                    "{term:?} on {path} matched {item} (not literally)"
                );
            }
            if path.starts_with("/user/search")
                && ["%", "_", "\\", "'", "%_", "100%", "0%_"].contains(&term)
            {
                assert_eq!(items.len(), 1, "{term:?}: the one literal match: {body}");
            }
        }
    }
    assert_eq!(row_counts(s.url(), "dispatch").await, before);
    s.assert_alive();
}

#[tokio::test(flavor = "multi_thread")]
async fn tampered_tokens_get_401_on_both_services() {
    let s = {
        let db = TestDb::blank().await;
        seed_dispatch(db.url());
        let tokens = seed_callback(db.url());
        Stack {
            dispatch: Some(Service::start("dispatch-api", db.url(), &[])),
            callback: Some(Service::start("proposal-callback", db.url(), &[])),
            db,
            tokens,
            http: client(),
        }
    };
    let admin_id = count(
        s.url(),
        "SELECT id AS n FROM dispatch.users WHERE login = 'admin'",
    )
    .await;
    let dispatch_claims = json!({"sub": admin_id.to_string(), "aud": "dispatch-api",
        "iat": now_secs(), "exp": now_secs() + 600});
    let before = row_counts(s.url(), "proposal").await;
    let valid = keys().issue(&dispatch_claims).unwrap();
    let (status, _, body) = s.dispatch_get("/user", Some(&valid)).await;
    assert_eq!(status, 200, "the untampered token works: {body}");
    for (what, token) in tampered(&dispatch_claims) {
        let (status, ctype, body) = s.dispatch_get("/user", Some(&token)).await;
        assert_problem(&format!("dispatch: {what}"), status, &ctype, &body, &[401]);
    }
    for (what, token) in [
        (
            "no sub",
            keys()
                .issue(&json!({"aud": "dispatch-api", "iat": now_secs(), "exp": now_secs() + 60}))
                .unwrap(),
        ),
        (
            "sub not a number",
            keys()
                .issue(&json!({"sub": "admin", "aud": "dispatch-api", "iat": now_secs(), "exp": now_secs() + 60}))
                .unwrap(),
        ),
        (
            "unknown user",
            keys()
                .issue(&json!({"sub": "987654321", "aud": "dispatch-api", "iat": now_secs(), "exp": now_secs() + 60}))
                .unwrap(),
        ),
    ] {
        let (status, ctype, body) = s.dispatch_get("/user", Some(&token)).await;
        assert_problem(&format!("dispatch: {what}"), status, &ctype, &body, &[401]);
    }

    let integration = count(
        s.url(),
        "SELECT id AS n FROM proposal.integrations WHERE tenant_id = 'demo-a' AND insurer = 'porto'",
    )
    .await;
    let callback_claims = json!({"sub": integration.to_string(), "tenant": "demo-a", "insurer": "porto",
        "iat": now_secs(), "exp": now_secs() + 600});
    for (what, token) in tampered(&callback_claims) {
        let (status, ctype, body) = s
            .callback_post(
                "/callback/demo-a/porto",
                Some(&token),
                porto("POR-2026-000123", "APROVADA"),
            )
            .await;
        assert_problem(&format!("callback: {what}"), status, &ctype, &body, &[401]);
    }
    let admin_claims = json!({"sub": "ops", "tenant": "demo-a", "role": "admin", "aud": "proposal-callback-admin", "iat": now_secs(), "exp": now_secs() + 600});
    for (what, token) in tampered(&admin_claims) {
        let (status, ctype, body) = s.callback_get("/admin/receipts", &token).await;
        assert_problem(&format!("admin: {what}"), status, &ctype, &body, &[401]);
    }
    // A callback token is no admin token and the reverse.
    let (status, ctype, body) = s
        .callback_get("/admin/receipts", &keys().issue(&callback_claims).unwrap())
        .await;
    assert_problem(
        "callback token on admin",
        status,
        &ctype,
        &body,
        &[401, 403],
    );
    let (status, ctype, body) = s
        .callback_post(
            "/callback/demo-a/porto",
            Some(&admin_token("demo-a")),
            porto("POR-2026-000123", "APROVADA"),
        )
        .await;
    assert_problem(
        "admin token on callback",
        status,
        &ctype,
        &body,
        &[401, 403],
    );
    // A dispatch token means nothing to the callback service (same secret here, other claims).
    let (status, ctype, body) = s.callback_get("/admin/receipts", &valid).await;
    assert_problem(
        "dispatch token on admin",
        status,
        &ctype,
        &body,
        &[401, 403],
    );

    // Wrong Basic tokens: 401, then 429 with Retry-After, also for the right one.
    let auth = |basic: String| {
        s.http
            .post(format!("{}/callback/auth", s.c().base()))
            .header("authorization", format!("Basic {basic}"))
            .send()
    };
    let mut limited = None;
    for i in 0..12 {
        let res = auth(format!("{:064x}", i)).await.unwrap();
        let retry = res.headers().get("retry-after").is_some();
        let (status, ctype, body) = read(res).await;
        assert_problem("wrong Basic token", status, &ctype, &body, &[401, 429]);
        if status == 429 {
            assert!(retry, "429 without Retry-After");
            limited = Some(i);
            break;
        }
    }
    assert!(
        limited.is_some_and(|i| i >= 10),
        "slowed down after 10 failures: {limited:?}"
    );
    let res = auth(basic_token(&s.tokens, "demo-a/porto")).await.unwrap();
    assert_eq!(
        res.status().as_u16(),
        429,
        "the right token is slowed down too"
    );

    // Nothing changes but the limiter's own count (docs/proposal-callback.md): one row, for
    // the one client that failed.
    let without_limiter = |counts: Vec<(String, i64)>| -> Vec<(String, i64)> {
        counts
            .into_iter()
            .filter(|(t, _)| t != "auth_failures")
            .collect()
    };
    let after = row_counts(s.url(), "proposal").await;
    assert!(
        after.contains(&("auth_failures".to_owned(), 1)),
        "{after:?}"
    );
    assert_eq!(without_limiter(after), without_limiter(before));
    s.assert_alive();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_deactivated_after_the_token_was_issued_gets_401_within_seconds() {
    let s = Stack::dispatch().await;
    let token = dispatch_token(s.url(), "tarm");
    // Warm the replica's user cache.
    for _ in 0..3 {
        let (status, _, body) = s.dispatch_get("/shared/default-values", Some(&token)).await;
        assert_eq!(status, 200, "{body}");
    }
    exec(
        s.url(),
        "UPDATE dispatch.users SET status = 'inativo' WHERE login = 'tarm'",
    )
    .await;
    let changed = Instant::now();
    loop {
        let (status, ctype, body) = s.dispatch_get("/shared/default-values", Some(&token)).await;
        if status == 401 {
            assert_problem("deactivated", status, &ctype, &body, &[401]);
            break;
        }
        assert_eq!(status, 200, "{body}");
        assert!(
            changed.elapsed() < Duration::from_secs(3),
            "a deactivated user still served 3 s later"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("refused {:?} after the update", changed.elapsed());
    // And stays refused on every route.
    for path in [
        "/user",
        "/user/search?q=a",
        "/incident/mask?q=a",
        "/health-unit?q=sao",
    ] {
        let (status, ctype, body) = s.dispatch_get(path, Some(&token)).await;
        assert_problem(path, status, &ctype, &body, &[401]);
    }
    // Reactivated: served again.
    exec(
        s.url(),
        "UPDATE dispatch.users SET status = 'ativo' WHERE login = 'tarm'",
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(3);
    while s.dispatch_get("/user/search?q=a", Some(&token)).await.0 != 200 {
        assert!(Instant::now() < deadline, "reactivated user still refused");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn another_tenant_is_refused_on_every_admin_and_callback_route_and_nothing_changes() {
    let s = Stack::callback().await;
    // demo-a has a stored receipt (processed) and a failed one.
    let a_jwt = s.jwt("demo-a/porto").await;
    let (status, _, body) = s
        .callback_post(
            "/callback/demo-a/porto",
            Some(&a_jwt),
            porto("POR-2026-000124", "PENDENTE"),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, _) = s
        .callback_post(
            "/callback/demo-a/porto",
            Some(&a_jwt),
            porto("NO-SUCH", "APROVADA"),
        )
        .await;
    assert_eq!(status, 404);
    let a_receipts = texts(
        s.url(),
        "SELECT id::text AS t FROM proposal.callback_receipts WHERE tenant_id = 'demo-a'",
    )
    .await;
    assert_eq!(a_receipts.len(), 2);
    let a_integrations = texts(
        s.url(),
        "SELECT id::text AS t FROM proposal.integrations WHERE tenant_id = 'demo-a'",
    )
    .await;
    let before = row_counts(s.url(), "proposal").await;

    let b_admin = admin_token("demo-b");
    // Lists show only demo-b's own.
    let (status, _, body) = s.callback_get("/admin/receipts", &b_admin).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["items"].as_array().unwrap().len(), 0, "{body}");
    let (status, _, body) = s
        .callback_get("/admin/receipts?status=failed", &b_admin)
        .await;
    assert_eq!(
        (status, body["items"].as_array().unwrap().len()),
        (200, 0),
        "{body}"
    );
    let (status, _, body) = s.callback_get("/admin/integrations", &b_admin).await;
    assert_eq!(status, 200, "{body}");
    for i in body.as_array().unwrap() {
        assert!(
            !a_integrations.contains(&i["id"].to_string()),
            "demo-a's integration listed to demo-b: {i}"
        );
    }
    // Another tenant's receipt and integration by id.
    for id in &a_receipts {
        let (status, ctype, body) = s
            .callback_post(
                &format!("/admin/receipts/{id}/replay"),
                Some(&b_admin),
                Vec::new(),
            )
            .await;
        assert_problem(
            "replay of another tenant's receipt",
            status,
            &ctype,
            &body,
            &[403, 404],
        );
    }
    for id in &a_integrations {
        let (status, ctype, body) = s
            .callback_post(
                &format!("/admin/integrations/{id}/register-callback"),
                Some(&b_admin),
                Vec::new(),
            )
            .await;
        assert_problem(
            "registration of another tenant's integration",
            status,
            &ctype,
            &body,
            &[403, 404],
        );
    }
    // Callbacks: another tenant's token, and another insurer's, on demo-a/porto.
    for integration in ["demo-b/porto", "demo-a/tokio", "demo-b/too"] {
        let jwt = s.jwt(integration).await;
        for path in ["/callback/demo-a/porto", "/callback/demo-b/tokio"] {
            if path.ends_with(
                integration
                    .split_once('/')
                    .map(|(t, i)| format!("{t}/{i}"))
                    .unwrap()
                    .as_str(),
            ) {
                continue;
            }
            let (status, ctype, body) = s
                .callback_post(path, Some(&jwt), porto("POR-2026-000123", "APROVADA"))
                .await;
            assert_problem(
                &format!("{integration} token on {path}"),
                status,
                &ctype,
                &body,
                &[403],
            );
        }
    }
    assert_eq!(
        row_counts(s.url(), "proposal").await,
        before,
        "nothing changed"
    );
    let status = texts(
        s.url(),
        "SELECT status AS t FROM proposal.proposals WHERE proposal_id = 'POR-2026-000123'",
    )
    .await;
    assert_eq!(status, ["under_analysis"]);
    s.assert_alive();
}

/// Every JSON string value in `v`, with the key it sits under.
fn strings<'a>(v: &'a Value, key: &'a str, out: &mut Vec<(&'a str, &'a str)>) {
    match v {
        Value::String(s) => out.push((key, s)),
        Value::Array(a) => a.iter().for_each(|x| strings(x, key, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| strings(x, k, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn non_admins_never_see_another_users_login() {
    let s = Stack::dispatch().await;
    let logins = texts(s.url(), "SELECT login AS t FROM dispatch.users").await;
    let some_id = count(
        s.url(),
        "SELECT id AS n FROM dispatch.users WHERE login = 'admin'",
    )
    .await;
    let paths = [
        "/user".to_owned(),
        format!("/user/{some_id}"),
        "/user/search".to_owned(),
        "/user/search?q=a".to_owned(),
        "/employee/search?query=a".to_owned(),
        format!("/employee/user_id/{some_id}"),
        "/shared/default-values".to_owned(),
        "/shared/possible-values".to_owned(),
        "/unallocated?page_size=100".to_owned(),
    ];
    for login in ["tarm", "regulador", "frota"] {
        let token = dispatch_token(s.url(), login);
        for path in &paths {
            let (status, _, body) = s.dispatch_get(path, Some(&token)).await;
            if status == 404 && path.starts_with("/employee/user_id") {
                continue; // the admin user may have no employee record
            }
            assert_eq!(status, 200, "{login} {path}: {body}");
            // Users (the list's items, or the one user) carry no `name` key.
            if path == "/user" || path.starts_with("/user/") && !path.contains("search") {
                let users: Vec<&Value> = match &body {
                    Value::Array(a) => a.iter().collect(),
                    one => vec![one],
                };
                for u in users {
                    assert!(u.get("name").is_none(), "{login} {path}: `name` on {u}");
                }
            }
            let mut found = Vec::new();
            strings(&body, "", &mut found);
            // (`inativo` is a login and also a status word.)
            for (key, value) in found.into_iter().filter(|(k, _)| *k != "status") {
                assert!(key != "login", "{login} {path}: a `login` key");
                assert!(
                    !logins.iter().any(|l| l == value),
                    "{login} {path}: the login {value:?} under {key:?}"
                );
            }
        }
    }
    // The ADMIN sees them (the check above would have caught a leak).
    let token = dispatch_token(s.url(), "admin");
    let (status, _, body) = s
        .dispatch_get(&format!("/user/{some_id}"), Some(&token))
        .await;
    assert_eq!(
        (status, body["name"].as_str()),
        (200, Some("admin")),
        "{body}"
    );
}

/// Every dispatch write (docs/contract.md §1), as the profile allowed to make it, with `If-Match`.
/// `{id}` is an incident, `{dispatch}` a dispatch. The last item is a body whose only fault
/// is a NUL in a free-text field, for the routes that have one.
const DISPATCH_WRITES: [(&str, &str, &str, Option<&str>); 12] = [
    (
        "POST",
        "/incident",
        "tarm",
        Some(
            r#"{"caller_name":"Ana\u0000","caller_phone":"12 3456-7890","address":"Av. Brasil 1","complaint":"queda"}"#,
        ),
    ),
    (
        "PATCH",
        "/incident/{id}",
        "tarm",
        Some(r#"{"patient":{"name":"Rita\u0000"}}"#),
    ),
    ("POST", "/incident/{id}/submit", "tarm", None),
    (
        "POST",
        "/incident/{id}/cancel",
        "tarm",
        Some(r#"{"reason":"\u0000"}"#),
    ),
    ("POST", "/incident/{id}/prank-call", "tarm", None),
    (
        "POST",
        "/incident/{id}/technical-decision",
        "regulador",
        Some(r#"{"action_id":1,"notes":"x\u0000"}"#),
    ),
    ("POST", "/incident/{id}/send-to", "regulador", None),
    ("POST", "/incident/{id}/dispatch", "frota", None),
    ("POST", "/dispatch/{dispatch}/status", "frota", None),
    (
        "POST",
        "/incident/{id}/intercurrence",
        "frota",
        Some(r#"{"intercurrence_id":1,"notes":"x\u0000"}"#),
    ),
    ("POST", "/incident/{id}/transfer", "frota", None),
    (
        "POST",
        "/incident/{id}/close",
        "regulador",
        Some(r#"{"conclusion":"\u0000"}"#),
    ),
];

/// What is sent, its content type, its `Content-Length` (none: chunked, or the body's own
/// length), the body, and the status it must get.
type HostileBody = (&'static str, &'static str, Option<String>, Vec<u8>, u16);

#[tokio::test(flavor = "multi_thread")]
async fn hostile_bodies_on_every_dispatch_write_are_refused_and_write_nothing() {
    const LIMIT: usize = 256 * 1024;
    let s = Stack::dispatch().await;
    let incident = &texts(
        s.url(),
        "SELECT id::text AS t FROM dispatch.incidents LIMIT 1",
    )
    .await[0];
    let dispatch = &texts(
        s.url(),
        "SELECT id::text AS t FROM dispatch.dispatches LIMIT 1",
    )
    .await[0];
    let version = &texts(
        s.url(),
        &format!("SELECT version::text AS t FROM dispatch.incidents WHERE id = {incident}"),
    )
    .await[0];
    let before = row_counts(s.url(), "dispatch").await;

    let mut too_big = br#"{"notes":""#.to_vec();
    too_big.extend(std::iter::repeat_n(b'x', LIMIT));
    too_big.extend_from_slice(br#""}"#);
    let too_big_chunked = chunked(&too_big, 16 * 1024);
    let mut deep_field = br#"{"notes":"#.to_vec();
    deep_field.extend(nested_arrays(10_000));
    deep_field.push(b'}');
    let deep_objects = nested_objects(10_000);

    let mut sent = 0;
    for (method, route, login, nul_body) in DISPATCH_WRITES {
        let path = route
            .replace("{id}", incident)
            .replace("{dispatch}", dispatch);
        let token = dispatch_token(s.url(), login);
        let if_match = format!("\"{version}\"");
        let start = format!("{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
        let headers = |ctype: &'static str, length: Option<String>| {
            let mut h = vec![
                ("Authorization", format!("Bearer {token}")),
                ("If-Match", if_match.clone()),
                ("Content-Type", ctype.to_owned()),
            ];
            match length {
                Some(n) => h.push(("Content-Length", n)),
                None => h.push(("Transfer-Encoding", "chunked".to_owned())),
            }
            h
        };
        let json = "application/json";
        let mut cases: Vec<HostileBody> = vec![
            ("over 256 KiB", json, None, too_big.clone(), 413),
            (
                "over 256 KiB, chunked",
                json,
                None,
                too_big_chunked.clone(),
                413,
            ),
            (
                "a declared 10 GB",
                json,
                Some("10000000000".into()),
                Vec::new(),
                413,
            ),
            (
                "10,000 nested arrays",
                json,
                None,
                nested_arrays(10_000),
                400,
            ),
            (
                "10,000 nested objects",
                json,
                None,
                deep_objects.clone(),
                400,
            ),
            (
                "deep nesting in a field",
                json,
                None,
                deep_field.clone(),
                400,
            ),
            (
                "invalid UTF-8",
                json,
                None,
                b"{\"notes\":\"\xff\xfe\"}".to_vec(),
                400,
            ),
            (
                "a lone surrogate",
                json,
                None,
                br#"{"notes":"\ud800"}"#.to_vec(),
                400,
            ),
            (
                "a raw NUL",
                json,
                None,
                b"{\"notes\":\"a\x00b\"}".to_vec(),
                400,
            ),
            ("empty", json, None, Vec::new(), 400),
            ("not JSON", "text/plain", None, b"{}".to_vec(), 415),
        ];
        if let Some(body) = nul_body {
            cases.push(("an escaped NUL in free text", json, None, body.into(), 400));
        }
        for (what, ctype, length, body, expected) in cases {
            let chunked_body = what.ends_with("chunked");
            let length = length.or_else(|| (!chunked_body).then(|| body.len().to_string()));
            let h = headers(ctype, length);
            let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (status, head, text) =
                raw_request(&s.d().addr, start.as_bytes(), &h, &body).unwrap();
            let what = format!("{method} {route}: {what}");
            let problem: Value = serde_json::from_str(&text)
                .unwrap_or_else(|_| panic!("{what}: {status} {head} {text}"));
            let ctype = head
                .lines()
                .find_map(|l| l.strip_prefix("content-type: "))
                .unwrap_or("");
            assert_problem(&what, status, ctype, &problem, &[expected]);
            if what.ends_with("free text") {
                // Refused by the shared JSON extractor, before any route's own rules.
                assert!(
                    problem["errors"][0]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("NUL")),
                    "{what}: {problem}"
                );
            }
            sent += 1;
        }
    }
    assert!(sent >= 12 * 11, "{sent}");
    assert_eq!(
        row_counts(s.url(), "dispatch").await,
        before,
        "nothing written"
    );
    s.assert_alive();
}
