//! The service's one error type and its one mapping to problem+json: each failure's status
//! and `code` as docs/proposal-callback.md lists them. Domain modules return their own small
//! errors (a parse failure, a registration failure, ...); `From` lifts them here, so `?`
//! works from the store up.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use common::{FieldError, Problem};

use chrono::{DateTime, Utc};

use crate::domain::code::ErrorCode;
use crate::domain::insurer::ParseError;
use crate::domain::status::Status;
use crate::registration::client::RegistrationFailure;
use crate::registration::config::NotConfigured;
use crate::store::outbox::Delivery;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Already a response (the shared extractors' 400/413/415/503).
    #[error("{0}")]
    Problem(Problem),
    #[error("unknown insurer identifier {0:?}")]
    UnknownInsurer(String),
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    Forbidden(&'static str),
    #[error("too many failed attempts; retry in {retry_after_secs} s")]
    TooManyAttempts { retry_after_secs: u32 },
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("no proposal {proposal_id:?} for this tenant")]
    ProposalNotFound { proposal_id: String },
    #[error("a callback cannot move a proposal from {from} to {to}")]
    InvalidTransition { from: Status, to: Status },
    #[error("no receipt {0} for this tenant")]
    ReceiptNotFound(i64),
    #[error("no integration {0} for this tenant")]
    IntegrationNotFound(i64),
    #[error("no email {0} for this tenant")]
    EmailNotFound(i64),
    #[error(
        "email {id} is {delivery}: only a failed email (refused for good by the relay) can be sent again; {why}"
    )]
    EmailNotFailed {
        id: i64,
        delivery: Delivery,
        why: &'static str,
    },
    #[error(
        "receipt {id} cannot be processed again: its raw body was erased at {} ({retention}); its outcome, references and metadata are kept",
        .erased_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )]
    BodyErased {
        id: i64,
        erased_at: DateTime<Utc>,
        /// The retention rule that erased it, in words.
        retention: String,
    },
    /// What is missing, as variable names (never values).
    #[error(transparent)]
    NotConfigured(#[from] NotConfigured),
    #[error(
        "a registration of this integration is already waiting for the insurer; retry in {retry_after_secs} s"
    )]
    RegistrationInProgress { retry_after_secs: u32 },
    #[error(
        "the insurer accepted this registration, but a later registration of the integration replaced it; register again"
    )]
    RegistrationSuperseded,
    #[error(transparent)]
    Registration(#[from] RegistrationFailure),
    #[error("database: {0}")]
    Database(#[from] diesel::result::Error),
    #[error("no database connection: {0}")]
    Pool(String),
    #[error("{0}")]
    Internal(String),
}

impl From<Problem> for Error {
    fn from(p: Problem) -> Self {
        Error::Problem(p)
    }
}

impl From<diesel_async::pooled_connection::deadpool::PoolError> for Error {
    fn from(e: diesel_async::pooled_connection::deadpool::PoolError) -> Self {
        Error::Pool(e.to_string())
    }
}

impl Error {
    /// The problem document this error answers with. Causes of 5xx go to the log only.
    pub fn problem(&self) -> Problem {
        let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
        match self {
            Error::Problem(p) => p.clone(),
            Error::UnknownInsurer(id) => Problem::new(
                StatusCode::NOT_FOUND,
                ErrorCode::UnknownInsurer.as_str(),
                format!("no insurer is known by the identifier {id:?}"),
            ),
            Error::Unauthorized(why) => Problem::unauthorized(*why),
            Error::Forbidden(why) => Problem::forbidden(*why),
            Error::TooManyAttempts { retry_after_secs } => Problem::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::TooManyRequests.as_str(),
                self.to_string(),
            )
            .with_retry_after(*retry_after_secs),
            Error::Parse(ParseError::NotJson(why)) => {
                Problem::invalid_payload(None, format!("the body is not JSON: {why}"))
            }
            Error::Parse(ParseError::Shape { field, message }) => {
                let p = Problem::new(
                    unprocessable,
                    ErrorCode::InvalidPayload.as_str(),
                    self.to_string(),
                );
                match field {
                    Some(f) => p.with_errors(vec![FieldError {
                        field: f.clone(),
                        message: message.clone(),
                    }]),
                    None => p,
                }
            }
            Error::Parse(ParseError::MissingField(field)) => Problem::new(
                unprocessable,
                ErrorCode::MissingField.as_str(),
                self.to_string(),
            )
            .with_errors(vec![FieldError {
                field: field.clone(),
                message: "is required".into(),
            }]),
            Error::ProposalNotFound { .. } => Problem::new(
                StatusCode::NOT_FOUND,
                ErrorCode::ProposalNotFound.as_str(),
                self.to_string(),
            ),
            Error::InvalidTransition { .. } => Problem::new(
                StatusCode::CONFLICT,
                ErrorCode::InvalidTransition.as_str(),
                self.to_string(),
            ),
            Error::ReceiptNotFound(_) | Error::IntegrationNotFound(_) | Error::EmailNotFound(_) => {
                Problem::not_found(self.to_string())
            }
            Error::EmailNotFailed { .. } => Problem::new(
                StatusCode::CONFLICT,
                ErrorCode::EmailNotFailed.as_str(),
                self.to_string(),
            ),
            Error::BodyErased { .. } => Problem::new(
                StatusCode::CONFLICT,
                ErrorCode::BodyErased.as_str(),
                self.to_string(),
            ),
            Error::NotConfigured(_) => Problem::new(
                StatusCode::BAD_GATEWAY,
                ErrorCode::NotConfigured.as_str(),
                self.to_string(),
            ),
            Error::RegistrationInProgress { retry_after_secs } => Problem::new(
                StatusCode::CONFLICT,
                ErrorCode::RegistrationInProgress.as_str(),
                self.to_string(),
            )
            .with_retry_after(*retry_after_secs),
            Error::RegistrationSuperseded => Problem::new(
                StatusCode::CONFLICT,
                ErrorCode::RegistrationSuperseded.as_str(),
                self.to_string(),
            ),
            Error::Registration(f) => {
                Problem::new(StatusCode::BAD_GATEWAY, f.code().as_str(), self.to_string())
            }
            Error::Database(e) => {
                if common::db::is_unavailable(e) {
                    tracing::warn!(error = %e, "database unavailable");
                    Problem::unavailable()
                } else {
                    tracing::error!(error = %e, "database error");
                    Problem::internal()
                }
            }
            Error::Pool(e) => {
                tracing::warn!(error = %e, "no database connection");
                Problem::unavailable()
            }
            Error::Internal(e) => {
                tracing::error!(error = %e, "internal error");
                Problem::internal()
            }
        }
    }

    /// A failure the sender caused (4xx): recorded on the receipt as `failed`. Server-side
    /// failures leave the receipt `received`, since the insurer will deliver again.
    pub fn is_client_error(&self) -> bool {
        match self {
            Error::Problem(p) => (400..500).contains(&p.status),
            Error::Database(_)
            | Error::Pool(_)
            | Error::Internal(_)
            | Error::NotConfigured(_)
            | Error::Registration(_) => false,
            _ => true,
        }
    }

    /// The stable `code` of the answer, for receipts and metrics, without logging anything.
    pub fn code(&self) -> ErrorCode {
        match self {
            // The shared extractors' codes are all ours (`domain::code`'s tests check it).
            Error::Problem(p) => ErrorCode::parse(&p.code).unwrap_or(ErrorCode::Internal),
            Error::UnknownInsurer(_) => ErrorCode::UnknownInsurer,
            Error::Unauthorized(_) => ErrorCode::Unauthorized,
            Error::Forbidden(_) => ErrorCode::Forbidden,
            Error::TooManyAttempts { .. } => ErrorCode::TooManyRequests,
            Error::Parse(ParseError::MissingField(_)) => ErrorCode::MissingField,
            Error::Parse(_) => ErrorCode::InvalidPayload,
            Error::ProposalNotFound { .. } => ErrorCode::ProposalNotFound,
            Error::InvalidTransition { .. } => ErrorCode::InvalidTransition,
            Error::ReceiptNotFound(_) | Error::IntegrationNotFound(_) | Error::EmailNotFound(_) => {
                ErrorCode::NotFound
            }
            Error::EmailNotFailed { .. } => ErrorCode::EmailNotFailed,
            Error::BodyErased { .. } => ErrorCode::BodyErased,
            Error::NotConfigured(_) => ErrorCode::NotConfigured,
            Error::RegistrationInProgress { .. } => ErrorCode::RegistrationInProgress,
            Error::RegistrationSuperseded => ErrorCode::RegistrationSuperseded,
            Error::Registration(f) => f.code(),
            Error::Database(e) if common::db::is_unavailable(e) => ErrorCode::Unavailable,
            Error::Pool(_) => ErrorCode::Unavailable,
            Error::Database(_) | Error::Internal(_) => ErrorCode::Internal,
        }
    }
}

impl ResponseError for Error {
    fn status_code(&self) -> StatusCode {
        self.problem().status()
    }

    fn error_response(&self) -> HttpResponse {
        self.problem().error_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_statuses_of_the_contract_table() {
        let cases: Vec<(Error, u16, &str)> = vec![
            (Error::UnknownInsurer("x".into()), 404, "unknown_insurer"),
            (Error::Unauthorized("no"), 401, "unauthorized"),
            (Error::Forbidden("no"), 403, "forbidden"),
            (
                Error::Parse(ParseError::NotJson("x".into())),
                400,
                "invalid_payload",
            ),
            (
                Error::Parse(ParseError::shape("a", "b")),
                422,
                "invalid_payload",
            ),
            (
                Error::Parse(ParseError::MissingField("a".into())),
                422,
                "missing_field",
            ),
            (
                Error::ProposalNotFound {
                    proposal_id: "1".into(),
                },
                404,
                "proposal_not_found",
            ),
            (
                Error::InvalidTransition {
                    from: Status::Approved,
                    to: Status::Refused,
                },
                409,
                "invalid_transition",
            ),
            (Error::Pool("down".into()), 503, "unavailable"),
            (Error::Internal("bug".into()), 500, "internal"),
            (
                Error::TooManyAttempts {
                    retry_after_secs: 3,
                },
                429,
                "too_many_requests",
            ),
        ];
        for (e, status, code) in cases {
            let p = e.problem();
            assert_eq!((p.status, p.code.as_ref()), (status, code), "{e}");
            assert_eq!(e.code().as_str(), code);
        }
    }

    #[test]
    fn an_unconfigured_insurer_is_502_not_configured_naming_the_variable() {
        use crate::registration::config::{Environment, RegistrationConfig};
        let e: Error = RegistrationConfig::default()
            .target(
                crate::domain::insurer::Insurer::Porto,
                Environment::Homologation,
            )
            .err()
            .unwrap()
            .into();
        let e = e.problem();
        assert_eq!((e.status, e.code.as_ref()), (502, "not_configured"));
        assert!(
            e.detail.contains("INSURER_PORTO_HOMOLOGATION_URL"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn failures_are_502_with_their_own_codes() {
        use reqwest::StatusCode;
        use std::time::Duration;
        let cases = [
            (
                RegistrationFailure::Rejected(StatusCode::INTERNAL_SERVER_ERROR),
                "insurer_rejected",
                "HTTP 500 Internal Server Error",
            ),
            (
                RegistrationFailure::Timeout(Duration::from_secs(10)),
                "insurer_timeout",
                "within 10s",
            ),
            (
                RegistrationFailure::Unreachable,
                "insurer_unreachable",
                "connect",
            ),
            (RegistrationFailure::Transport, "insurer_error", "failed"),
        ];
        for (f, code, detail) in cases {
            let p = Error::Registration(f).problem();
            assert_eq!((p.status, p.code.as_ref()), (502, code));
            assert!(p.detail.contains(detail), "{}", p.detail);
        }
    }
}
