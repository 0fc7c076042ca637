//! The console's session (docs/operations.md, "The integrations console"): the admin token an
//! operator pasted, kept in a cookie that lives as long as the browser session, checked on
//! every request exactly as the admin routes check their Bearer token; a flash message
//! carried across a redirect; and the refusal of requests made from another site.
//!
//! The cookies are written and read here by hand (a few lines) rather than with actix-web's
//! `cookies` feature: turning that feature on for this crate would build actix-web a second
//! time, with other features, for the rest of the workspace.

use actix_web::dev::Payload;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{FromRequest, HttpRequest, HttpResponseBuilder, web};
use futures_util::future::LocalBoxFuture;
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::auth::admin::Admin;
use crate::console::ConsoleError;
use crate::console::text;
use crate::state::AppState;

/// Where the console lives; its cookies are sent only below it.
pub const BASE: &str = "/admin/integracao";
/// The admin token (a JWT).
const SESSION: &str = "console_session";
/// A message for the next page (post/redirect/get).
const FLASH: &str = "console_flash";
/// A JWT of this service is a few hundred bytes, an identity provider's one or two KiB;
/// browsers keep cookies up to 4 KiB.
pub const MAX_TOKEN_BYTES: usize = 3_800;
const MAX_FLASH_CHARS: usize = 600;

/// Whether the request came over https (directly, or as a proxy says with
/// `X-Forwarded-Proto`/`Forwarded`): the cookies are then `Secure`.
pub fn is_https(req: &HttpRequest) -> bool {
    req.connection_info().scheme() == "https"
}

/// The value of cookie `name` the request carries.
fn cookie(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_owned())
}

/// A cookie for the console's path that the browser drops when its session ends (no
/// `Max-Age`/`Expires`), that scripts cannot read and that other sites never send.
fn set_cookie(name: &str, value: &str, secure: bool) -> String {
    format!(
        "{name}={value}; Path={BASE}; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    )
}

fn clear_cookie(name: &str, secure: bool) -> String {
    format!(
        "{name}=; Path={BASE}; Max-Age=0; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    )
}

fn append(res: &mut HttpResponseBuilder, cookie: String) {
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        res.append_header((header::SET_COOKIE, v));
    }
}

/// Characters of a JWT (base64url and dots): nothing a cookie must escape.
pub fn looks_like_jwt(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= MAX_TOKEN_BYTES
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

pub fn start_session(res: &mut HttpResponseBuilder, token: &str, secure: bool) {
    debug_assert!(looks_like_jwt(token));
    append(res, set_cookie(SESSION, token, secure));
}

pub fn end_session(res: &mut HttpResponseBuilder, secure: bool) {
    append(res, clear_cookie(SESSION, secure));
}

/// How a flash message reads: a success, a failure or a plain note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Ok,
    Erro,
    Info,
}

impl Tone {
    pub fn as_str(self) -> &'static str {
        match self {
            Tone::Ok => "ok",
            Tone::Erro => "erro",
            Tone::Info => "info",
        }
    }
}

/// A message shown once, on the page a POST redirects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlashMessage {
    pub tone: Tone,
    pub text: String,
}

impl FlashMessage {
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            tone: Tone::Ok,
            text: text.into(),
        }
    }

    pub fn erro(text: impl Into<String>) -> Self {
        Self {
            tone: Tone::Erro,
            text: text.into(),
        }
    }

    pub fn info(text: impl Into<String>) -> Self {
        Self {
            tone: Tone::Info,
            text: text.into(),
        }
    }

    fn encode(&self) -> String {
        let text: String = self.text.chars().take(MAX_FLASH_CHARS).collect();
        utf8_percent_encode(&format!("{}:{text}", self.tone.as_str()), NON_ALPHANUMERIC).to_string()
    }

    fn decode(raw: &str) -> Option<Self> {
        let decoded = percent_decode_str(raw).decode_utf8().ok()?;
        let (tone, text) = decoded.split_once(':')?;
        let tone = match tone {
            "ok" => Tone::Ok,
            "erro" => Tone::Erro,
            "info" => Tone::Info,
            _ => return None,
        };
        Some(Self {
            tone,
            text: text.chars().take(MAX_FLASH_CHARS).collect(),
        })
    }

    /// Sets the message for the next page.
    pub fn set(&self, res: &mut HttpResponseBuilder, secure: bool) {
        append(res, set_cookie(FLASH, &self.encode(), secure));
    }
}

/// The flash message the request carries, if any; [`Flash::clear`] drops it from the browser
/// once the page showing it is answered.
#[derive(Debug, Clone)]
pub struct Flash {
    pub message: Option<FlashMessage>,
    present: bool,
    secure: bool,
}

impl Flash {
    pub fn clear(&self, res: &mut HttpResponseBuilder) {
        if self.present {
            append(res, clear_cookie(FLASH, self.secure));
        }
    }
}

impl FromRequest for Flash {
    type Error = ConsoleError;
    type Future = std::future::Ready<Result<Self, ConsoleError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let raw = cookie(req, FLASH);
        std::future::ready(Ok(Flash {
            message: raw.as_deref().and_then(FlashMessage::decode),
            present: raw.is_some(),
            secure: is_https(req),
        }))
    }
}

/// The signed-in tenant administrator of a console request: the session cookie's token,
/// verified as the admin routes verify theirs (`AdminTokens::check`: signature, audience,
/// expiry, role, tenant). Without a session, or with one whose token no longer passes, the
/// request is sent to the sign-in page with the reason.
#[derive(Debug, Clone)]
pub struct ConsoleAdmin {
    pub admin: Admin,
    /// Whether the request came over https (the cookies it sets are then `Secure`).
    pub secure: bool,
}

impl FromRequest for ConsoleAdmin {
    type Error = ConsoleError;
    type Future = LocalBoxFuture<'static, Result<Self, ConsoleError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = cookie(req, SESSION);
        let secure = is_https(req);
        let tokens = req
            .app_data::<web::Data<AppState>>()
            .map(|state| state.admin_tokens.clone());
        Box::pin(async move {
            let tokens =
                tokens.ok_or_else(|| ConsoleError::internal("AppState is not registered"))?;
            let Some(token) = token.filter(|t| !t.is_empty()) else {
                return Err(ConsoleError::SignIn {
                    message: None,
                    secure,
                });
            };
            match tokens.check(&token).await {
                Ok(admin) => Ok(ConsoleAdmin { admin, secure }),
                Err(refusal) => Err(ConsoleError::SignIn {
                    message: Some(FlashMessage::erro(format!(
                        "Sua sessão terminou. {}",
                        text::refusal(&refusal)
                    ))),
                    secure,
                }),
            }
        })
    }
}

/// Refuses a console POST that another site made the browser send: the browser's
/// `Sec-Fetch-Site` must say `same-origin`; a browser that does not send it must send an
/// `Origin` equal to this page's own. (The cookies are `SameSite=Strict` as well.)
pub fn same_origin(req: &HttpRequest) -> Result<(), ConsoleError> {
    let headers = req.headers();
    let same = match headers.get("sec-fetch-site") {
        Some(site) => site.as_bytes() == b"same-origin",
        None => match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
            Some(origin) => {
                let info = req.connection_info();
                origin == format!("{}://{}", info.scheme(), info.host())
            }
            None => false,
        },
    };
    if same {
        Ok(())
    } else {
        Err(ConsoleError::CrossSite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn the_session_cookie_lives_with_the_browser_session_on_the_console_path_only() {
        assert_eq!(
            set_cookie(SESSION, "a.b.c", false),
            "console_session=a.b.c; Path=/admin/integracao; HttpOnly; SameSite=Strict"
        );
        assert_eq!(
            set_cookie(SESSION, "a.b.c", true),
            "console_session=a.b.c; Path=/admin/integracao; HttpOnly; SameSite=Strict; Secure"
        );
        assert!(clear_cookie(SESSION, false).contains("Max-Age=0"));
    }

    #[test]
    fn a_flash_message_survives_the_cookie_and_nothing_else_is_read_as_one() {
        let m = FlashMessage::erro("A seguradora respondeu HTTP 503; nada mudou.");
        assert_eq!(FlashMessage::decode(&m.encode()), Some(m));
        assert_eq!(FlashMessage::decode("x%3Ay"), None);
        assert_eq!(FlashMessage::decode("%FF"), None);
    }

    #[test]
    fn cookies_are_found_by_name_among_others() {
        let req = TestRequest::default()
            .insert_header((header::COOKIE, "a=1; console_session=x.y.z; b=2"))
            .to_http_request();
        assert_eq!(cookie(&req, SESSION).as_deref(), Some("x.y.z"));
        assert_eq!(cookie(&req, FLASH), None);
    }

    #[test]
    fn only_tokens_made_of_a_jwts_characters_go_into_a_cookie() {
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
            same_origin(&req.to_http_request()).is_ok()
        };
        assert!(post(&[("sec-fetch-site", "same-origin")]));
        assert!(!post(&[("sec-fetch-site", "cross-site")]));
        assert!(!post(&[("sec-fetch-site", "same-site")]));
        assert!(post(&[("origin", "http://127.0.0.1:8081")]));
        assert!(!post(&[("origin", "http://evil.example")]));
        assert!(!post(&[]));
    }
}
