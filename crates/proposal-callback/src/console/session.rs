//! The console's session (docs/operations.md, "The integrations console"): sign-in checks the
//! pasted admin token exactly as the admin routes check their Bearer token and opens a
//! server-side session (`store::console_sessions`): the browser gets a random id in a cookie
//! that lives as long as the browser session and is sent only below the console; the database
//! keeps the id's hash with the tenant and the admin. Every request finds the session by that
//! hash and refuses it when signed out, idle or past its end (`common::pages::session`). Also:
//! a flash message carried across a redirect, and the refusal of requests made from another
//! site.
//!
//! The cookies are written and read here by hand (a few lines) rather than with actix-web's
//! `cookies` feature: turning that feature on for this crate would build actix-web a second
//! time, with other features, for the rest of the workspace.

use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, HttpResponseBuilder, web};
use common::auth::now_secs;
use common::pages::{Cookies, SessionId};
use futures_util::future::LocalBoxFuture;

use crate::auth::admin::Admin;
use crate::console::ConsoleError;
use crate::state::AppState;
use crate::store::console_sessions::{self, ADMIN_ROLE};

pub use common::pages::{is_https, looks_like_jwt};

/// Where the console lives; its cookies are sent only below it.
pub const BASE: &str = "/admin/integracao";
/// The console's cookies: the session's id and a message for the next page
/// (post/redirect/get).
const COOKIES: Cookies = Cookies {
    path: BASE,
    session: "console_session",
    flash: "console_flash",
};
const MAX_FLASH_CHARS: usize = 600;

pub fn start_session(res: &mut HttpResponseBuilder, id: &SessionId, secure: bool) {
    COOKIES.start_session(res, id, secure);
}

pub fn end_session(res: &mut HttpResponseBuilder, secure: bool) {
    COOKIES.end_session(res, secure);
}

/// Opens a session for `admin`, whose token expires at `exp` (seconds since the epoch),
/// ending the one the browser still carries, if any, and deleting the ended ones: its id, for
/// the cookie.
pub async fn start(
    state: &AppState,
    req: &HttpRequest,
    admin: &Admin,
    exp: i64,
) -> Result<SessionId, ConsoleError> {
    let now = state.clock.now();
    let left = u64::try_from(exp - now_secs()).unwrap_or(0).max(1);
    let rules = state.page_sessions;
    let id = SessionId::generate();
    let mut conn = state.pool.get().await?;
    if let Some(old) = COOKIES.session_id(req) {
        console_sessions::revoke(&mut conn, &old.hash(), now).await?;
    }
    console_sessions::prune(&mut conn, now, rules.idle_before(now)).await?;
    console_sessions::create(
        &mut conn,
        &id.hash(),
        &admin.tenant,
        &admin.sub,
        now,
        rules.expires_at(now, Duration::from_secs(left)),
    )
    .await?;
    Ok(id)
}

/// Ends the session the request carries, if any (signed out).
pub async fn revoke(state: &AppState, req: &HttpRequest) -> Result<(), ConsoleError> {
    if let Some(id) = COOKIES.session_id(req) {
        let mut conn = state.pool.get().await?;
        console_sessions::revoke(&mut conn, &id.hash(), state.clock.now()).await?;
    }
    Ok(())
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

    /// The cookie's text (`common::pages::Cookies` percent-encodes it): `tone:text`.
    fn encode(&self) -> String {
        let text: String = self.text.chars().take(MAX_FLASH_CHARS).collect();
        format!("{}:{text}", self.tone.as_str())
    }

    fn decode(decoded: &str) -> Option<Self> {
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
        COOKIES.set_flash(res, &self.encode(), secure);
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
            COOKIES.clear_flash(res, self.secure);
        }
    }
}

impl FromRequest for Flash {
    type Error = ConsoleError;
    type Future = std::future::Ready<Result<Self, ConsoleError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let text = COOKIES.flash(req);
        std::future::ready(Ok(Flash {
            message: text
                .as_ref()
                .and_then(|t| FlashMessage::decode(t.as_deref()?)),
            present: text.is_some(),
            secure: is_https(req),
        }))
    }
}

/// The signed-in tenant administrator of a console request: the session its cookie names,
/// still open. Without one, the request is sent to the sign-in page (with the reason when the
/// browser had a session).
#[derive(Debug, Clone)]
pub struct ConsoleAdmin {
    pub admin: Admin,
    /// Whether the request came over https (the cookies it sets are then `Secure`).
    pub secure: bool,
}

/// The admin of the session named `id`, or the sign-in page saying why there is none.
async fn open(state: &AppState, id: &SessionId, secure: bool) -> Result<Admin, ConsoleError> {
    let ended = |why: &str| ConsoleError::SignIn {
        message: Some(FlashMessage::erro(format!("Sua sessão terminou. {why}"))),
        secure,
    };
    let hash = id.hash();
    let now = state.clock.now();
    let mut conn = state.pool.get().await?;
    let Some(stored) = console_sessions::find(&mut conn, &hash).await? else {
        return Err(ended("Entre de novo."));
    };
    let rules = state.page_sessions;
    if let Err(e) = rules.judge(now, &stored.times) {
        return Err(ended(e.reason()));
    }
    if stored.role != ADMIN_ROLE {
        return Err(ended("Entre de novo."));
    }
    if rules.needs_touch(now, stored.times.last_seen_at) {
        console_sessions::touch(&mut conn, &hash, now).await?;
    }
    Ok(Admin {
        sub: stored.subject,
        tenant: stored.tenant,
    })
}

impl FromRequest for ConsoleAdmin {
    type Error = ConsoleError;
    type Future = LocalBoxFuture<'static, Result<Self, ConsoleError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let id = COOKIES.session_id(req);
        let had_one = COOKIES.has_session(req);
        let secure = is_https(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let state =
                state.ok_or_else(|| ConsoleError::internal("AppState is not registered"))?;
            let Some(id) = id else {
                return Err(ConsoleError::SignIn {
                    message: had_one
                        .then(|| FlashMessage::erro("Sua sessão terminou. Entre de novo.")),
                    secure,
                });
            };
            let admin = open(&state, &id, secure).await?;
            Ok(ConsoleAdmin { admin, secure })
        })
    }
}

/// Refuses a console POST that another site made the browser send
/// (`common::pages::same_origin`).
pub fn same_origin(req: &HttpRequest) -> Result<(), ConsoleError> {
    if common::pages::same_origin(req) {
        Ok(())
    } else {
        Err(ConsoleError::CrossSite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flash_message_survives_the_cookie_and_nothing_else_is_read_as_one() {
        let m = FlashMessage::erro("A seguradora respondeu HTTP 503; nada mudou.");
        assert_eq!(FlashMessage::decode(&m.encode()), Some(m));
        assert_eq!(FlashMessage::decode("x:y"), None);
        assert_eq!(FlashMessage::decode("sem tom"), None);
    }
}
