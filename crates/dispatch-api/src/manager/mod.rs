//! The centre manager's page at `/reports` (docs/dispatch-routes.md, "The manager's page"):
//! HTML in Portuguese rendered on the server (askama, `templates/manager/`), no script, one
//! small stylesheet and charts drawn by the server as SVG (plotters), everything served from
//! the binary. Signed in with an ADMIN or regulator token that opens a server-side session,
//! as the callback service's integrations console does.
//!
//! - [`session`]: sign-in (the token checked as the API checks a Bearer token), the session
//!   its cookie names, checked on every request, and the refusal of posts made from another
//!   site;
//! - [`pages`]: the handlers, which read what the API routes read (`routes::reports::build`,
//!   `routes::health_unit::board`);
//! - [`charts`]: the two charts;
//! - [`format`]: how both write times and shares.
//!
//! These are pages, not API: they are not in the OpenAPI document.

pub mod charts;
pub mod format;
pub mod pages;
pub mod session;

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError, web};
use askama::Template;

pub use common::pages::{html, see_other};

/// Where the page lives; its cookie is sent only below it.
pub const BASE: &str = "/reports";

const CSS: &str = include_str!("../../assets/reports.css");
/// The stylesheet's URL carries the crate version: a new release is a new URL.
pub const CSS_PATH: &str = concat!("/reports/relatorios.css?v=", env!("CARGO_PKG_VERSION"));

/// Registers the pages under [`BASE`] (after the API's own `/reports/response-times`).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        common::pages::scope(
            BASE,
            || {
                PageError::page(
                    StatusCode::BAD_REQUEST,
                    "O formulário chegou incompleto ou grande demais.",
                )
                .into()
            },
            || {
                PageError::page(
                    StatusCode::BAD_REQUEST,
                    "As datas do período não foram entendidas: use o formato AAAA-MM-DD.",
                )
                .into()
            },
        )
        .route("", web::get().to(pages::reports))
        .route("/", web::get().to(pages::reports))
        .route(
            "/relatorios.css",
            web::get().to(|| async { common::pages::stylesheet(CSS) }),
        )
        .route(
            "/icone.svg",
            web::get().to(|| async { common::pages::icon() }),
        )
        .route("/entrar", web::get().to(pages::sign_in_form))
        .route("/entrar", web::post().to(pages::sign_in))
        .route("/sair", web::post().to(pages::sign_out))
        .route("/tempos.csv", web::get().to(pages::csv))
        .default_service(web::to(|| async {
            Err::<HttpResponse, _>(PageError::page(
                StatusCode::NOT_FOUND,
                "Esta página não existe.",
            ))
        })),
    );
}

#[derive(Template)]
#[template(path = "manager/error.html")]
struct ErrorPage<'a> {
    css: &'a str,
    title: &'a str,
    message: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "manager/sign_in.html")]
pub struct SignInPage<'a> {
    pub css: &'a str,
    pub title: &'a str,
    pub message: Option<&'a str>,
}

/// What a request ends with when it cannot show its page: the sign-in page (with the reason)
/// or an error page in Portuguese; never a server-side cause (that goes to the log).
#[derive(Debug)]
pub enum PageError {
    /// No session, or one that has ended: the sign-in page, the cookie dropped.
    SignIn {
        message: Option<String>,
        secure: bool,
    },
    /// A POST another site made the browser send.
    CrossSite,
    Page {
        status: StatusCode,
        message: String,
    },
}

impl PageError {
    pub fn page(status: StatusCode, message: impl Into<String>) -> Self {
        PageError::Page {
            status,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageError::SignIn { .. } => f.write_str("reports: not signed in"),
            PageError::CrossSite => f.write_str("reports: cross-site request refused"),
            PageError::Page { status, .. } => write!(f, "reports: {status}"),
        }
    }
}

/// The service's errors as pages: a bad range is the manager's to fix, the rest says what
/// happened without the cause.
impl From<crate::error::Error> for PageError {
    fn from(e: crate::error::Error) -> Self {
        let problem = e.problem();
        let (status, message) = match problem.status {
            400..=499 => (
                StatusCode::BAD_REQUEST,
                "O período pedido não pode ser mostrado: até 31 dias, o início antes do fim."
                    .to_owned(),
            ),
            503 => (
                StatusCode::SERVICE_UNAVAILABLE,
                "O banco de dados não respondeu. Tente de novo em instantes.".to_owned(),
            ),
            _ => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Erro interno. O registro do serviço tem os detalhes deste pedido.".to_owned(),
            ),
        };
        PageError::Page { status, message }
    }
}

impl From<diesel::result::Error> for PageError {
    fn from(e: diesel::result::Error) -> Self {
        crate::error::Error::from(e).into()
    }
}

impl From<diesel_async::pooled_connection::deadpool::PoolError> for PageError {
    fn from(e: diesel_async::pooled_connection::deadpool::PoolError) -> Self {
        crate::error::Error::from(e).into()
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            PageError::SignIn { .. } => StatusCode::SEE_OTHER,
            PageError::CrossSite => StatusCode::FORBIDDEN,
            PageError::Page { status, .. } => *status,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (status, message) = match self {
            PageError::SignIn { message, secure } => {
                let mut res = see_other(&format!("{BASE}/entrar"));
                session::end_session(&mut res, *secure);
                if let Some(m) = message {
                    session::flash(&mut res, m, *secure);
                }
                return res.finish();
            }
            PageError::CrossSite => (
                StatusCode::FORBIDDEN,
                "Pedido recusado: ele não partiu desta página. Abra os relatórios e tente de novo.",
            ),
            PageError::Page { status, message } => (*status, message.as_str()),
        };
        let page = ErrorPage {
            css: CSS_PATH,
            title: common::pages::error_title(status),
            message: Some(message),
        };
        match page.render() {
            Ok(body) => html(status).body(body),
            Err(e) => {
                tracing::error!(error = %e, "reports: error page not rendered");
                html(status).body(message.to_owned())
            }
        }
    }
}
