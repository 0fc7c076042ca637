//! The console's session (docs/operations.md, "The integrations console"): the admin token an
//! operator pasted, kept in a cookie that lives as long as the browser session, checked on
//! every request exactly as the admin routes check their Bearer token; a flash message
//! carried across a redirect; and the refusal of requests made from another site.
//!
//! The cookies are written and read here by hand (a few lines) rather than with actix-web's
//! `cookies` feature: turning that feature on for this crate would build actix-web a second
//! time, with other features, for the rest of the workspace.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, HttpResponseBuilder, web};
use common::pages::Cookies;
use futures_util::future::LocalBoxFuture;

use crate::auth::admin::Admin;
use crate::console::ConsoleError;
use crate::console::text;
use crate::state::AppState;

pub use common::pages::{is_https, looks_like_jwt};

/// Where the console lives; its cookies are sent only below it.
pub const BASE: &str = "/admin/integracao";
/// The console's cookies: the admin token (a JWT) and a message for the next page
/// (post/redirect/get).
const COOKIES: Cookies = Cookies {
    path: BASE,
    session: "console_session",
    flash: "console_flash",
};
const MAX_FLASH_CHARS: usize = 600;

pub fn start_session(res: &mut HttpResponseBuilder, token: &str, secure: bool) {
    COOKIES.start_session(res, token, secure);
}

pub fn end_session(res: &mut HttpResponseBuilder, secure: bool) {
    COOKIES.end_session(res, secure);
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
        let token = COOKIES.token(req);
        let secure = is_https(req);
        let tokens = req
            .app_data::<web::Data<AppState>>()
            .map(|state| state.admin_tokens.clone());
        Box::pin(async move {
            let tokens =
                tokens.ok_or_else(|| ConsoleError::internal("AppState is not registered"))?;
            let Some(token) = token else {
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
