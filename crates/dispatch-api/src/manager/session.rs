//! The manager page's session (docs/dispatch-routes.md, "The manager's page"): sign-in checks
//! the pasted access token exactly as the API checks its Bearer token
//! (`auth::authenticate`: signature, audience, expiry, an active user) and then the profile
//! (ADMIN or regulator), and opens a server-side session (`store::page_sessions`): the browser
//! gets a random id in a cookie that lives as long as the browser session and is sent only to
//! `/reports`; the database keeps the id's hash. Every request finds the session by that hash
//! and refuses it when signed out, idle, past its end (`common::pages::session`), or when its
//! user is no longer active or has lost the profile (read through the user cache, so at
//! once): such a session is revoked. Also: a message carried across the redirect to the
//! sign-in page, and the refusal of posts made from another site. The cookie rules are the
//! callback service's console's, shared in `common::pages`.

use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::{FromRequest, HttpRequest, HttpResponseBuilder, web};
use common::auth::now_secs;
use common::pages::{self, Cookies, SessionId};
use futures_util::future::LocalBoxFuture;

use super::{BASE, PageError};
use crate::auth::{self, Authenticated};
use crate::domain::user::{CurrentUser, may};
use crate::state::AppState;
use crate::store::page_sessions;

pub use common::pages::is_https;

/// The page's cookies: the session's id and a message for the sign-in page.
pub const COOKIES: Cookies = Cookies {
    path: BASE,
    session: "reports_session",
    flash: "reports_flash",
};

const MAX_FLASH_CHARS: usize = 400;

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

fn no_profile(user: &CurrentUser) -> String {
    format!(
        "O perfil {} não tem acesso aos relatórios (só ADMIN e MEDICO_REGULADOR).",
        user.profile.title()
    )
}

/// Checks `token` as the API checks a Bearer token, then the profile: the manager it names
/// and when the token expires.
pub async fn check(state: &AppState, token: &str) -> Result<Authenticated, String> {
    if !pages::looks_like_jwt(token) {
        return Err("Isto não é um token de acesso.".into());
    }
    match auth::authenticate_with_expiry(state, token).await {
        Ok(a) if may::REPORTS.contains(&a.user.profile) => Ok(a),
        Ok(a) => Err(no_profile(&a.user)),
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

/// Opens a session for the manager `signed_in` names (ending the one the browser still
/// carries, if any, and deleting the ended ones): its id, for the cookie.
pub async fn start(
    state: &AppState,
    req: &HttpRequest,
    signed_in: &Authenticated,
) -> Result<SessionId, PageError> {
    let now = state.clock.now();
    let left = u64::try_from(signed_in.expires_at - now_secs()).unwrap_or(0);
    let rules = state.page_sessions;
    let id = SessionId::generate();
    let conn = state.pool.get().await?;
    if let Some(old) = COOKIES.session_id(req) {
        page_sessions::revoke(&conn, &old.hash(), now).await?;
    }
    page_sessions::prune(&conn, now, rules.idle_before(now)).await?;
    page_sessions::create(
        &conn,
        &id.hash(),
        signed_in.user.id,
        signed_in.user.profile,
        now,
        rules.expires_at(now, Duration::from_secs(left.max(1))),
    )
    .await?;
    Ok(id)
}

/// Ends the session the request carries, if any (signed out).
pub async fn revoke(state: &AppState, req: &HttpRequest) -> Result<(), PageError> {
    if let Some(id) = COOKIES.session_id(req) {
        let conn = state.pool.get().await?;
        page_sessions::revoke(&conn, &id.hash(), state.clock.now()).await?;
    }
    Ok(())
}

/// The manager of the session named `id`, or the sign-in page saying why there is none.
async fn open(state: &AppState, id: &SessionId, secure: bool) -> Result<CurrentUser, PageError> {
    let ended = |why: &str| PageError::SignIn {
        message: Some(format!("Sua sessão terminou. {why}")),
        secure,
    };
    let hash = id.hash();
    let now = state.clock.now();
    let stored = {
        let conn = state.pool.get().await?;
        page_sessions::find(&conn, &hash).await?
    };
    let Some(stored) = stored else {
        return Err(ended("Entre de novo."));
    };
    let rules = state.page_sessions;
    if let Err(e) = rules.judge(now, &stored.times) {
        return Err(ended(e.reason()));
    }
    let why = match auth::active_user(state, stored.user_id).await {
        Ok(user) if may::REPORTS.contains(&user.profile) => {
            if rules.needs_touch(now, stored.times.last_seen_at) {
                let conn = state.pool.get().await?;
                page_sessions::touch(&conn, &hash, now).await?;
            }
            return Ok(user);
        }
        Ok(user) => no_profile(&user),
        Err(e) if e.problem().status == 401 => "O usuário não está mais ativo.".to_owned(),
        Err(e) => return Err(e.into()),
    };
    let conn = state.pool.get().await?;
    page_sessions::revoke(&conn, &hash, now).await?;
    Err(ended(&why))
}

/// The signed-in manager of a page request: the session its cookie names, still open.
/// Without one, to the sign-in page (saying why when the browser had a session).
pub struct Manager {
    pub user: CurrentUser,
    pub secure: bool,
}

impl FromRequest for Manager {
    type Error = PageError;
    type Future = LocalBoxFuture<'static, Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let id = COOKIES.session_id(req);
        let had_one = COOKIES.has_session(req);
        let secure = is_https(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let Some(state) = state else {
                return Err(PageError::page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Erro interno.",
                ));
            };
            let Some(id) = id else {
                return Err(PageError::SignIn {
                    message: had_one.then(|| "Sua sessão terminou. Entre de novo.".to_owned()),
                    secure,
                });
            };
            let user = open(&state, &id, secure).await?;
            Ok(Manager { user, secure })
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
