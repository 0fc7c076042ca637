//! What the services' HTML pages share (docs/architecture.md): proposal-callback's
//! integrations console and dispatch-api's manager page are server-rendered HTML, no script,
//! one stylesheet served from the binary, signed in with a pasted token that opens a
//! server-side session ([`session`]). Their rules are the same and live here once:
//!
//! - the answer of a page ([`html`]: never cached, no script or frame can use it) and of a
//!   POST ([`see_other`]), the stylesheet ([`stylesheet`]), the icon ([`icon`]);
//! - the page set's scope with its form and query limits ([`scope`]);
//! - the sessions ([`session`]): a random id, stored hashed, with an idle and an absolute end;
//! - the cookies ([`Cookies`]): the session's id and a message for the next page, sent only
//!   below the pages' path, dropped with the browser session, unreadable by scripts, never sent
//!   by other sites;
//! - the refusal of a POST another site made the browser send ([`same_origin`]).
//!
//! The cookies are written and read here by hand (a few lines) rather than with actix-web's
//! `cookies` feature, which would build actix-web a second time for the workspace.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, CacheControl, CacheDirective, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, Scope, web};
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

pub mod session;

pub use session::{Ended, SessionId, SessionRules, SessionTimes};

/// No script at all; styles, images and forms of this origin only; never inside a frame.
/// Charts are inline SVG.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The largest form a page accepts (a pasted token is the largest field).
pub const FORM_LIMIT: usize = 16 * 1024;

/// A page's answer: HTML that no cache keeps (it shows people's data) and that no script or
/// frame can use.
pub fn html(status: StatusCode) -> HttpResponseBuilder {
    let mut res = HttpResponse::build(status);
    res.content_type("text/html; charset=utf-8")
        .insert_header(CacheControl(vec![CacheDirective::NoStore]))
        .insert_header((header::CONTENT_SECURITY_POLICY, CSP))
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
    res
}

/// A redirect after a POST (303: the browser follows it with a GET).
pub fn see_other(location: &str) -> HttpResponseBuilder {
    let mut res = HttpResponse::SeeOther();
    res.insert_header((header::LOCATION, location))
        .insert_header(CacheControl(vec![CacheDirective::NoStore]));
    res
}

/// The pages' stylesheet, cached for a day (its URL carries the crate's version, so a new
/// release is a new URL).
pub fn stylesheet(css: &'static str) -> HttpResponse {
    cached_a_day("text/css; charset=utf-8", css)
}

/// A file of the binary, which any cache may keep for a day.
fn cached_a_day(content_type: &'static str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(CacheControl(vec![
            CacheDirective::Public,
            CacheDirective::MaxAge(86_400),
        ]))
        .body(body)
}

/// The pages' icon (a white cross on the pages' blue), served by each page set at
/// `{base}/icone.svg` and named by every page's `<link rel="icon">`, so a browser asks for no
/// `/favicon.ico` that would answer 404.
pub const ICON_SVG: &str = include_str!("../assets/pages-icon.svg");

/// The pages' icon's answer, cached for a day.
pub fn icon() -> HttpResponse {
    cached_a_day("image/svg+xml", ICON_SVG)
}

/// The title of an error page of this status, in Portuguese.
pub fn error_title(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "Não encontrado",
        StatusCode::FORBIDDEN => "Sem acesso",
        StatusCode::BAD_REQUEST => "Pedido inválido",
        StatusCode::SERVICE_UNAVAILABLE => "Serviço indisponível",
        _ => "Erro",
    }
}

/// The scope of a page set under `base`: forms up to [`FORM_LIMIT`], and the pages' own
/// answers (an error page, never problem+json) for a form or a query string they cannot read.
pub fn scope(
    base: &str,
    bad_form: fn() -> actix_web::Error,
    bad_query: fn() -> actix_web::Error,
) -> Scope {
    web::scope(base)
        .app_data(
            web::FormConfig::default()
                .limit(FORM_LIMIT)
                .error_handler(move |_, _| bad_form()),
        )
        .app_data(web::QueryConfig::default().error_handler(move |_, _| bad_query()))
}

/// Whether the request came over https (directly, or as a trusted proxy says with
/// `X-Forwarded-Proto`/`Forwarded`): the cookies are then `Secure`.
pub fn is_https(req: &HttpRequest) -> bool {
    req.connection_info().scheme() == "https"
}

/// The longest token the sign-in forms accept: a JWT of these services is a few hundred
/// bytes, an identity provider's one or two KiB.
pub const MAX_TOKEN_BYTES: usize = 3_800;

/// Characters of a JWT (base64url and dots), of a size a sign-in form takes.
pub fn looks_like_jwt(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= MAX_TOKEN_BYTES
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Whether a POST is this site's own: the browser's `Sec-Fetch-Site` says `same-origin`; a
/// browser that does not send it must send an `Origin` equal to this page's own. (The
/// cookies are `SameSite=Strict` as well.)
pub fn same_origin(req: &HttpRequest) -> bool {
    let headers = req.headers();
    match headers.get("sec-fetch-site") {
        Some(site) => site.as_bytes() == b"same-origin",
        None => match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
            Some(origin) => {
                let info = req.connection_info();
                origin == format!("{}://{}", info.scheme(), info.host())
            }
            None => false,
        },
    }
}

/// The cookies of one page set: the session's id and a message for the next page (the
/// post/redirect/get pattern), both sent only below `path`.
#[derive(Debug, Clone, Copy)]
pub struct Cookies {
    /// Where the pages live.
    pub path: &'static str,
    /// The cookie holding the session's id ([`SessionId`]).
    pub session: &'static str,
    /// The cookie holding a message for the next page.
    pub flash: &'static str,
}

impl Cookies {
    /// A cookie that the browser drops when its session ends (no `Max-Age`/`Expires`), that
    /// scripts cannot read and that other sites never send.
    fn set(&self, name: &str, value: &str, secure: bool) -> String {
        format!(
            "{name}={value}; Path={}; HttpOnly; SameSite=Strict{}",
            self.path,
            if secure { "; Secure" } else { "" }
        )
    }

    fn clear(&self, name: &str, secure: bool) -> String {
        format!(
            "{name}=; Path={}; Max-Age=0; HttpOnly; SameSite=Strict{}",
            self.path,
            if secure { "; Secure" } else { "" }
        )
    }

    fn append(res: &mut HttpResponseBuilder, cookie: String) {
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            res.append_header((header::SET_COOKIE, v));
        }
    }

    /// The value of cookie `name` the request carries.
    fn read(req: &HttpRequest, name: &str) -> Option<String> {
        req.headers()
            .get_all(header::COOKIE)
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_owned())
    }

    /// Whether the request carries a session cookie at all (a sign-in page says then that
    /// the session ended).
    pub fn has_session(&self, req: &HttpRequest) -> bool {
        Self::read(req, self.session).is_some_and(|v| !v.is_empty())
    }

    /// The session id the request carries, if its cookie holds one ([`SessionId::parse`]).
    pub fn session_id(&self, req: &HttpRequest) -> Option<SessionId> {
        SessionId::parse(&Self::read(req, self.session)?)
    }

    /// Gives `id` to the browser for its session.
    pub fn start_session(&self, res: &mut HttpResponseBuilder, id: &SessionId, secure: bool) {
        Self::append(res, self.set(self.session, &id.cookie_value(), secure));
    }

    pub fn end_session(&self, res: &mut HttpResponseBuilder, secure: bool) {
        Self::append(res, self.clear(self.session, secure));
    }

    /// Sets `text` (percent-encoded here) as the message for the next page.
    pub fn set_flash(&self, res: &mut HttpResponseBuilder, text: &str, secure: bool) {
        let encoded = utf8_percent_encode(text, NON_ALPHANUMERIC).to_string();
        Self::append(res, self.set(self.flash, &encoded, secure));
    }

    /// The message the request carries: `None` without the cookie, `Some(None)` with one
    /// that does not decode.
    pub fn flash(&self, req: &HttpRequest) -> Option<Option<String>> {
        let raw = Self::read(req, self.flash)?;
        Some(
            percent_decode_str(&raw)
                .decode_utf8()
                .ok()
                .map(|t| t.into_owned()),
        )
    }

    /// Drops the message from the browser once the page showing it is answered.
    pub fn clear_flash(&self, res: &mut HttpResponseBuilder, secure: bool) {
        Self::append(res, self.clear(self.flash, secure));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    const COOKIES: Cookies = Cookies {
        path: "/pages",
        session: "pages_session",
        flash: "pages_flash",
    };

    fn set_cookies(res: HttpResponseBuilder) -> Vec<String> {
        let mut res = res;
        res.finish()
            .headers()
            .get_all(header::SET_COOKIE)
            .map(|v| v.to_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn the_session_cookie_lives_with_the_browser_session_on_the_pages_path_only() {
        let id = SessionId::generate();
        let v = id.cookie_value();
        let mut res = see_other("/pages");
        COOKIES.start_session(&mut res, &id, false);
        assert_eq!(
            set_cookies(res),
            [format!(
                "pages_session={v}; Path=/pages; HttpOnly; SameSite=Strict"
            )]
        );
        let mut res = see_other("/pages");
        COOKIES.start_session(&mut res, &id, true);
        COOKIES.end_session(&mut res, true);
        assert_eq!(
            set_cookies(res),
            [
                format!("pages_session={v}; Path=/pages; HttpOnly; SameSite=Strict; Secure"),
                "pages_session=; Path=/pages; Max-Age=0; HttpOnly; SameSite=Strict; Secure"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn cookies_are_found_by_name_among_others_and_a_flash_survives_its_cookie() {
        let id = SessionId::generate();
        let req = TestRequest::default()
            .insert_header((
                header::COOKIE,
                format!(
                    "a=1; pages_session={}; pages_flash=S%C3%A3o%3A%20ok; b=2",
                    id.cookie_value()
                ),
            ))
            .to_http_request();
        assert_eq!(COOKIES.session_id(&req), Some(id));
        assert_eq!(COOKIES.flash(&req), Some(Some("São: ok".to_owned())));

        let mut res = html(StatusCode::OK);
        COOKIES.set_flash(&mut res, "São: ok", false);
        assert_eq!(
            set_cookies(res),
            ["pages_flash=S%C3%A3o%3A%20ok; Path=/pages; HttpOnly; SameSite=Strict"]
        );

        let bare = TestRequest::default()
            .insert_header((header::COOKIE, "pages_session=; pages_flash=%FF"))
            .to_http_request();
        assert_eq!(COOKIES.session_id(&bare), None);
        assert!(!COOKIES.has_session(&bare));
        let jwt = TestRequest::default()
            .insert_header((header::COOKIE, "pages_session=x.y.z"))
            .to_http_request();
        assert_eq!(COOKIES.session_id(&jwt), None, "a token is no session id");
        assert!(COOKIES.has_session(&jwt));
        assert_eq!(COOKIES.flash(&bare), Some(None));
    }

    #[test]
    fn only_tokens_made_of_a_jwts_characters_are_checked() {
        assert!(looks_like_jwt("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig-_"));
        assert!(!looks_like_jwt("a b"));
        assert!(!looks_like_jwt("a;b"));
        assert!(!looks_like_jwt(""));
        assert!(!looks_like_jwt(&"a".repeat(MAX_TOKEN_BYTES + 1)));
    }

    #[test]
    fn a_post_from_another_site_is_refused() {
        let post = |headers: &[(&str, &str)]| {
            let mut req = TestRequest::post().insert_header((header::HOST, "127.0.0.1:8081"));
            for (k, v) in headers {
                req = req.insert_header((*k, *v));
            }
            same_origin(&req.to_http_request())
        };
        assert!(post(&[("sec-fetch-site", "same-origin")]));
        assert!(!post(&[("sec-fetch-site", "cross-site")]));
        assert!(!post(&[("sec-fetch-site", "same-site")]));
        assert!(post(&[("origin", "http://127.0.0.1:8081")]));
        assert!(!post(&[("origin", "http://evil.example")]));
        assert!(!post(&[]));
    }

    #[test]
    fn a_page_is_never_cached_nor_scripted() {
        let res = html(StatusCode::OK).finish();
        assert_eq!(
            res.headers().get(header::CACHE_CONTROL).unwrap(),
            "no-store"
        );
        assert_eq!(
            res.headers().get(header::CONTENT_SECURITY_POLICY).unwrap(),
            CSP
        );
        assert_eq!(
            res.headers().get(header::X_CONTENT_TYPE_OPTIONS).unwrap(),
            "nosniff"
        );
    }
}
