//! The manager page's session: the access token a manager pasted, kept in a cookie that
//! lives as long as the browser session and is sent only to `/reports`, checked on every
//! request exactly as the API checks its Bearer token (`auth::authenticate`: signature,
//! audience, expiry, an active user) and then for the profile (ADMIN or regulator); a
//! message carried across the redirect to the sign-in page; and the refusal of posts made
//! from another site. The cookie rules are the callback service's console's, shared in
//! `common::pages`.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, HttpResponseBuilder, web};
use common::pages::{self, Cookies};
use futures_util::future::LocalBoxFuture;

use super::{BASE, PageError};
use crate::auth;
use crate::domain::user::{CurrentUser, may};
use crate::state::AppState;

pub use common::pages::is_https;

/// The page's cookies: the access token (a JWT) and a message for the sign-in page.
pub const COOKIES: Cookies = Cookies {
    path: BASE,
    session: "reports_session",
    flash: "reports_flash",
};

const MAX_FLASH_CHARS: usize = 400;

pub fn start_session(res: &mut HttpResponseBuilder, token: &str, secure: bool) {
    COOKIES.start_session(res, token, secure);
}

pub fn end_session(res: &mut HttpResponseBuilder, secure: bool) {
    COOKIES.end_session(res, secure);
}

/// Sets a message for the next page.
pub fn flash(res: &mut HttpResponseBuilder, message: &str, secure: bool) {
    let text: String = message.chars().take(MAX_FLASH_CHARS).collect();
    COOKIES.set_flash(res, &text, secure);
}

/// The message the request carries (its cookie dropped with this answer).
pub fn take_flash(req: &HttpRequest, res: &mut HttpResponseBuilder) -> Option<String> {
    let text = COOKIES.flash(req)?;
    COOKIES.clear_flash(res, is_https(req));
    text.map(|t| t.chars().take(MAX_FLASH_CHARS).collect())
}

/// Checks `token` as the API checks a Bearer token, then the profile: the manager it names.
pub async fn check(state: &AppState, token: &str) -> Result<CurrentUser, String> {
    if !pages::looks_like_jwt(token) {
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
        let token = COOKIES.token(req);
        let secure = is_https(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let Some(state) = state else {
                return Err(PageError::page(
                    actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "Erro interno.",
                ));
            };
            let Some(token) = token else {
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

/// Refuses a POST another site made the browser send (`common::pages::same_origin`).
pub fn same_origin(req: &HttpRequest) -> Result<(), PageError> {
    if pages::same_origin(req) {
        Ok(())
    } else {
        Err(PageError::CrossSite)
    }
}
