//! The integrations console at `/admin/integracao` (the screen the callback spec names): HTML
//! pages in Portuguese for a tenant's administrator, rendered on the server with askama
//! (templates under `templates/console/`), no script, one small stylesheet, everything served
//! from the binary (docs/operations.md, "The integrations console").
//!
//! - [`session`]: sign-in with the admin token, which opens a server-side session (its id in
//!   a cookie), flash messages, the refusal of cross-site posts;
//! - [`pages`]: the handlers, which call the same flows and queries (`flow/`, `query/`) as
//!   the admin JSON routes (RegisterCallback, a receipt's replay, a proposal's story);
//! - [`repairs`]: pause, and resume or bulk replay after a preview (a dry run) and a
//!   confirmation;
//! - [`text`]: what the pages say; [`pretty`]: a JSON body indented for reading.
//!
//! These are pages, not API: they are not in the OpenAPI document.

pub mod pages;
pub mod pretty;
pub mod repairs;
pub mod session;
pub mod text;
pub mod views;

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError, web};
use askama::Template;

use crate::error::Error;
use session::{BASE, FlashMessage};

/// The stylesheet; its URL carries the crate version so a new release is a new URL.
const CSS: &str = include_str!("../../assets/console.css");
pub const CSS_PATH: &str = concat!(
    "/admin/integracao/console.css?v=",
    env!("CARGO_PKG_VERSION")
);

pub use common::pages::{html, see_other};

/// Registers the console's pages under [`BASE`]; an unknown page below it is an HTML 404.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        common::pages::scope(
            BASE,
            || {
                ConsoleError::page(
                    StatusCode::BAD_REQUEST,
                    "O formulário chegou incompleto ou grande demais. Volte e tente de novo.",
                )
                .into()
            },
            || {
                ConsoleError::page(
                    StatusCode::BAD_REQUEST,
                    "O endereço tem parâmetros que o console não entende.",
                )
                .into()
            },
        )
        .route("", web::get().to(pages::integrations))
        .route("/", web::get().to(pages::integrations))
        .route(
            "/console.css",
            web::get().to(|| async { common::pages::stylesheet(CSS) }),
        )
        .route(
            "/icone.svg",
            web::get().to(|| async { common::pages::icon() }),
        )
        .route("/entrar", web::get().to(pages::sign_in_form))
        .route("/entrar", web::post().to(pages::sign_in))
        .route("/sair", web::post().to(pages::sign_out))
        .route(
            "/integracoes/{id}/registrar",
            web::post().to(pages::register_callback),
        )
        .route("/integracoes/{id}/pausar", web::post().to(repairs::pause))
        .route(
            "/integracoes/{id}/retomar",
            web::get().to(repairs::resume_preview),
        )
        .route("/integracoes/{id}/retomar", web::post().to(repairs::resume))
        .route("/callbacks", web::get().to(pages::receipts))
        .route(
            "/callbacks/reprocessar",
            web::get().to(repairs::replay_preview),
        )
        .route("/callbacks/reprocessar", web::post().to(repairs::replay))
        .route("/callbacks/{id}", web::get().to(pages::receipt))
        .route("/callbacks/{id}/reprocessar", web::post().to(pages::replay))
        .route("/emails/{id}/reenviar", web::post().to(pages::retry_email))
        .route(
            "/emails/reenviar-recusados",
            web::post().to(pages::retry_failed_emails),
        )
        .route("/propostas", web::get().to(pages::find_proposal))
        .route("/propostas/{id}", web::get().to(pages::proposal))
        .default_service(web::to(|| async {
            Err::<HttpResponse, _>(ConsoleError::page(
                StatusCode::NOT_FOUND,
                "Esta página não existe no console.",
            ))
        })),
    );
}

/// An error page, standing alone (it may be shown to someone not signed in).
#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage<'a> {
    css: &'a str,
    title: &'a str,
    message: &'a str,
}

/// What a console request ends with when it cannot show its page: the sign-in page (with the
/// reason), or an error page in Portuguese. Never the cause of a server-side failure: that
/// goes to the log.
#[derive(Debug)]
pub enum ConsoleError {
    /// No session, or one that has ended: to the sign-in page, the cookie dropped.
    SignIn {
        message: Option<FlashMessage>,
        secure: bool,
    },
    /// A POST that another site made the browser send.
    CrossSite,
    /// An error page with this status and message.
    Page { status: StatusCode, message: String },
}

impl ConsoleError {
    pub fn page(status: StatusCode, message: impl Into<String>) -> Self {
        ConsoleError::Page {
            status,
            message: message.into(),
        }
    }

    pub fn internal(cause: &str) -> Self {
        Error::Internal(cause.into()).into()
    }
}

impl std::fmt::Display for ConsoleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConsoleError::SignIn { .. } => f.write_str("console: not signed in"),
            ConsoleError::CrossSite => f.write_str("console: cross-site request refused"),
            ConsoleError::Page { status, .. } => write!(f, "console: {status}"),
        }
    }
}

/// The domain's errors as pages. Those an action expects (a registration the insurer refused,
/// a replay that fails again) are flash messages instead, decided by the action.
impl From<Error> for ConsoleError {
    fn from(e: Error) -> Self {
        let (status, message) = match &e {
            Error::ProposalNotFound { proposal_id } => (
                StatusCode::NOT_FOUND,
                format!("Não há proposta {proposal_id} neste cliente."),
            ),
            Error::ReceiptNotFound(id) => (
                StatusCode::NOT_FOUND,
                format!("Não há callback nº {id} neste cliente."),
            ),
            Error::IntegrationNotFound(id) => {
                (StatusCode::NOT_FOUND, format!("Não há integração nº {id}."))
            }
            Error::EmailNotFound(id) => (
                StatusCode::NOT_FOUND,
                format!("Não há e-mail nº {id} neste cliente."),
            ),
            Error::Forbidden(_) => (
                StatusCode::FORBIDDEN,
                "Isto pertence a outro cliente: você não tem acesso.".to_owned(),
            ),
            _ => {
                // Logs the cause (never shown) and gives the status it maps to.
                let problem = e.problem();
                match problem.status {
                    503 => (
                        StatusCode::SERVICE_UNAVAILABLE,
                        "O banco de dados não respondeu. Tente de novo em instantes.".to_owned(),
                    ),
                    400..=499 => (
                        StatusCode::BAD_REQUEST,
                        "O pedido não pôde ser atendido como veio.".to_owned(),
                    ),
                    _ => (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "Erro interno. O registro do serviço tem os detalhes deste pedido."
                            .to_owned(),
                    ),
                }
            }
        };
        ConsoleError::Page { status, message }
    }
}

impl From<diesel_async::pooled_connection::deadpool::PoolError> for ConsoleError {
    fn from(e: diesel_async::pooled_connection::deadpool::PoolError) -> Self {
        Error::from(e).into()
    }
}

impl From<diesel::result::Error> for ConsoleError {
    fn from(e: diesel::result::Error) -> Self {
        Error::from(e).into()
    }
}

impl ResponseError for ConsoleError {
    fn status_code(&self) -> StatusCode {
        match self {
            ConsoleError::SignIn { .. } => StatusCode::SEE_OTHER,
            ConsoleError::CrossSite => StatusCode::FORBIDDEN,
            ConsoleError::Page { status, .. } => *status,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (status, message) = match self {
            ConsoleError::SignIn { message, secure } => {
                let mut res = see_other(&format!("{BASE}/entrar"));
                session::end_session(&mut res, *secure);
                if let Some(m) = message {
                    m.set(&mut res, *secure);
                }
                return res.finish();
            }
            ConsoleError::CrossSite => (
                StatusCode::FORBIDDEN,
                "Pedido recusado: ele não partiu de uma página deste console. Abra o console e \
                 tente de novo por ele.",
            ),
            ConsoleError::Page { status, message } => (*status, message.as_str()),
        };
        let page = ErrorPage {
            css: CSS_PATH,
            title: common::pages::error_title(status),
            message,
        };
        match page.render() {
            Ok(body) => html(status).body(body),
            Err(e) => {
                tracing::error!(error = %e, "console: error page not rendered");
                html(status).body(message.to_owned())
            }
        }
    }
}
