//! The manager page's session: the access token a manager pasted, kept in a cookie that
//! lives as long as the browser session and is sent only to `/reports`, checked on every
//! request exactly as the API checks its Bearer token (`auth::authenticate`: signature,
//! audience, expiry, an active user) and then for the profile (ADMIN or regulator); a
//! message carried across the redirect to the sign-in page; and the refusal of posts made
//! from another site. The same rules as proposal-callback's integrations console.
//!
//! The cookies are written and read here by hand (a few lines) rather than with actix-web's
//! `cookies` feature, which would build actix-web a second time for the workspace.

use actix_web::dev::Payload;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{FromRequest, HttpRequest, HttpResponseBuilder, web};
use futures_util::future::LocalBoxFuture;
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use super::{BASE, PageError};
use crate::auth;
use crate::domain::user::{CurrentUser, may};
use crate::state::AppState;

/// The access token (a JWT).
const SESSION: &str = "reports_session";
/// A message for the sign-in page.
const FLASH: &str = "reports_flash";
/// Browsers keep cookies up to 4 KiB; a JWT is a few hundred bytes, a provider's one or two
/// KiB.
pub const MAX_TOKEN_BYTES: usize = 3_800;

pub fn is_https(req: &HttpRequest) -> bool {
    req.connection_info().scheme() == "https"
}

fn cookie(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_owned())
}

/// A cookie for the page's path that the browser drops when its session ends, that scripts
/// cannot read and that other sites never send.
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
    append(res, set_cookie(SESSION, token, secure));
}

pub fn end_session(res: &mut HttpResponseBuilder, secure: bool) {
    append(res, clear_cookie(SESSION, secure));
}

/// Sets a message for the next page.
pub fn flash(res: &mut HttpResponseBuilder, message: &str, secure: bool) {
    let text: String = message.chars().take(400).collect();
    let encoded = utf8_percent_encode(&text, NON_ALPHANUMERIC).to_string();
    append(res, set_cookie(FLASH, &encoded, secure));
}

/// The message the request carries (and whether to drop its cookie).
pub fn take_flash(req: &HttpRequest, res: &mut HttpResponseBuilder) -> Option<String> {
    let raw = cookie(req, FLASH)?;
    append(res, clear_cookie(FLASH, is_https(req)));
    percent_decode_str(&raw)
        .decode_utf8()
        .ok()
        .map(|t| t.chars().take(400).collect())
}

/// Checks `token` as the API checks a Bearer token, then the profile: the manager it names.
pub async fn check(state: &AppState, token: &str) -> Result<CurrentUser, String> {
    if !looks_like_jwt(token) {
        return Err("Isto não é um token de acesso.".into());
    }
    match auth::authenticate(state, token).await {
        Ok(user) if may::REPORTS.contains(&user.profile) => Ok(user),
        Ok(user) => Err(format!(
            "O perfil {} não tem acesso aos relatórios (só ADMIN e MEDICO_REGULADOR).",
            user.profile.title()
        )),
        Err(e) => {
            let p = e.problem();
            Err(match p.status {
                401 => "O token não foi aceito: expirado, inválido ou de um usuário inativo."
                    .to_owned(),
                503 => "O banco de dados não respondeu. Tente de novo em instantes.".to_owned(),
                _ => "O token não pôde ser verificado.".to_owned(),
            })
        }
    }
}

/// The signed-in manager of a page request: the session cookie's token, checked again.
/// Without a session, or with one whose token no longer passes, to the sign-in page.
pub struct Manager {
    pub user: CurrentUser,
    pub secure: bool,
}

impl FromRequest for Manager {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = cookie(req, SESSION);
        let secure = is_https(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let Some(state) = state else {
                return Err(PageError::page(
                    actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "Erro interno.",
                ));
            };
            let Some(token) = token.filter(|t| !t.is_empty()) else {
                return Err(PageError::SignIn {
                    message: None,
                    secure,
                });
            };
            match check(&state, &token).await {
                Ok(user) => Ok(Manager { user, secure }),
                Err(why) => Err(PageError::SignIn {
                    message: Some(format!("Sua sessão terminou. {why}")),
                    secure,
                }),
            }
        })
    }
}

/// Refuses a POST another site made the browser send: `Sec-Fetch-Site` must say
/// `same-origin`, or (a browser that does not send it) `Origin` must be this page's.
pub fn same_origin(req: &HttpRequest) -> Result<(), PageError> {
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
        Err(PageError::CrossSite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_lives_with_the_browser_session_on_the_page_only() {
        assert_eq!(
            set_cookie(SESSION, "a.b.c", false),
            "reports_session=a.b.c; Path=/reports; HttpOnly; SameSite=Strict"
        );
        assert!(set_cookie(SESSION, "a.b.c", true).ends_with("; Secure"));
        assert!(clear_cookie(SESSION, false).contains("Max-Age=0"));
        assert!(looks_like_jwt("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig-_"));
        assert!(!looks_like_jwt("a;b"));
    }
}
