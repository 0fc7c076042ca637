//! The service's one error type. Every layer above the store returns it; the store returns
//! its own (`store::error::StoreError`, no HTTP), turned into this one by the one `From`
//! below, so `?` works from the store up. Its one [`ResponseError`] impl decides each
//! failure's status, `code` and problem+json body (docs/dispatch-realtime.md, "Writes",
//! lists the codes).

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use common::{FieldError, Problem};

use crate::domain::Refusal;
use crate::domain::refusal::FieldFault;
use crate::store::error::StoreError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A rule of the dispatch centre said no (a client error, see [`Refusal`]).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The request itself is malformed (a parameter, a header, the body): found by an
    /// extractor before any rule runs, already a problem.
    #[error("{0}")]
    Request(Problem),
    /// The database failed: unreachable (503) or a bug (500, logged).
    #[error("database: {0}")]
    Db(#[from] diesel::result::Error),
    /// No connection to be had from the pool (503).
    #[error("no database connection: {0}")]
    Pool(#[from] diesel_async::pooled_connection::deadpool::PoolError),
    /// Anything else that should not happen (500, logged).
    #[error("{0}")]
    Internal(String),
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Refused(r) => Error::Refused(r),
            StoreError::Db(e) => Error::Db(e),
        }
    }
}

impl From<Problem> for Error {
    fn from(p: Problem) -> Self {
        Error::Request(p)
    }
}

fn field_errors(faults: &[FieldFault]) -> Vec<FieldError> {
    faults
        .iter()
        .map(|f| FieldError {
            field: f.field.clone(),
            message: f.message.clone(),
        })
        .collect()
}

impl Error {
    /// The problem+json this failure answers with.
    pub fn problem(&self) -> Problem {
        match self {
            Error::Refused(r) => refusal(r),
            Error::Request(p) => p.clone(),
            Error::Db(e) if common::db::is_unavailable(e) => Problem::unavailable(),
            Error::Pool(_) => Problem::unavailable(),
            Error::Db(_) | Error::Internal(_) => Problem::internal(),
        }
    }

    /// Members a problem carries besides the standard ones: `vehicle_type_mismatch` names
    /// the type asked for (`requested_vehicle_type`) and the unit's
    /// (`mobile_unit: {id, vehicle_type}`), each type `{id, name}` as the reads name them;
    /// an unknown occurrence type lists the ones allowed (`allowed_values`).
    fn members(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        match self {
            Error::Refused(Refusal::UnknownOccurrenceType { allowed, .. }) => {
                let mut m = serde_json::Map::new();
                m.insert("allowed_values".into(), serde_json::json!(allowed));
                Some(m)
            }
            Error::Refused(Refusal::VehicleTypeMismatch {
                unit,
                requested,
                offered,
            }) => {
                let mut m = serde_json::Map::new();
                m.insert(
                    "requested_vehicle_type".into(),
                    serde_json::json!(requested),
                );
                m.insert(
                    "mobile_unit".into(),
                    serde_json::json!({"id": unit, "vehicle_type": offered}),
                );
                Some(m)
            }
            _ => None,
        }
    }

    /// Logs what the client is not told: the cause of a 503 or a 500.
    fn log(&self) {
        match self {
            Error::Db(e) if common::db::is_unavailable(e) => {
                tracing::warn!(error = %e, "database unavailable");
            }
            Error::Pool(e) => tracing::warn!(error = %e, "no database connection"),
            Error::Db(e) => tracing::error!(error = %e, "database error"),
            Error::Internal(what) => tracing::error!(error = %what, "internal error"),
            Error::Refused(_) | Error::Request(_) => {}
        }
    }
}

fn refusal(r: &Refusal) -> Problem {
    let detail = r.to_string();
    match r {
        Refusal::InvalidTransition { .. } => {
            Problem::new(StatusCode::CONFLICT, "invalid_transition", detail)
        }
        Refusal::VersionConflict { .. } => {
            Problem::new(StatusCode::PRECONDITION_FAILED, "version_conflict", detail)
        }
        Refusal::NotFound(_) => Problem::not_found(detail),
        Refusal::InvalidReference(fault) => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_reference",
            detail,
        )
        .with_errors(field_errors(std::slice::from_ref(fault))),
        Refusal::InvalidFields(faults) => {
            Problem::new(StatusCode::BAD_REQUEST, "invalid_payload", detail)
                .with_errors(field_errors(faults))
        }
        Refusal::UnknownOccurrenceType { allowed, .. } => {
            Problem::new(StatusCode::BAD_REQUEST, "invalid_payload", detail).with_errors(vec![
                FieldError {
                    field: crate::domain::form::wire_name("occurrence_type").to_owned(),
                    message: format!("must be one of: {}", allowed.join(", ")),
                },
            ])
        }
        Refusal::NothingToChange => Problem::invalid_payload(None, detail),
        Refusal::UnitInactive(_) => Problem::new(StatusCode::CONFLICT, "unit_inactive", detail),
        Refusal::UnitBusy { holder, .. } => {
            // The field to change, and where the unit is.
            let message = format!("is {}", crate::domain::refusal::busy_on(holder));
            Problem::new(StatusCode::CONFLICT, "unit_busy", detail).with_errors(vec![FieldError {
                field: "mobile_unit_id".to_owned(),
                message,
            }])
        }
        Refusal::UnitAssigned => Problem::new(StatusCode::CONFLICT, "unit_assigned", detail),
        Refusal::UnitDispatched(_) => Problem::new(StatusCode::CONFLICT, "unit_dispatched", detail),
        Refusal::AlreadyAllocated { .. } => {
            Problem::new(StatusCode::CONFLICT, "already_allocated", detail)
        }
        Refusal::NotAllocated { .. } => Problem::new(StatusCode::CONFLICT, "not_allocated", detail),
        Refusal::VehicleTypeMismatch { .. } => {
            Problem::new(StatusCode::CONFLICT, "vehicle_type_mismatch", detail).with_errors(vec![
                FieldError {
                    field: "mobile_unit_id".to_owned(),
                    message: "is not of the vehicle type the latest technical decision asks for"
                        .to_owned(),
                },
            ])
        }
        Refusal::Forbidden { .. } => Problem::forbidden(detail),
        Refusal::Unauthorized(_) => Problem::unauthorized(detail),
        Refusal::CallOutOfOrder(_) => {
            Problem::new(StatusCode::CONFLICT, "call_out_of_order", detail)
        }
        Refusal::IdempotencyKeyReused => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_key_reused",
            detail,
        ),
    }
}

impl ResponseError for Error {
    fn status_code(&self) -> StatusCode {
        self.problem().status()
    }

    fn error_response(&self) -> HttpResponse {
        self.log();
        let problem = self.problem();
        let Some(members) = self.members() else {
            return problem.error_response();
        };
        let mut body = serde_json::to_value(&problem).unwrap_or_default();
        if let serde_json::Value::Object(m) = &mut body {
            m.extend(members);
        }
        HttpResponse::build(problem.status())
            .content_type(common::problem::CONTENT_TYPE)
            .body(body.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::incident::{State, transition};

    #[test]
    fn every_refused_incident_move_is_409_invalid_transition_naming_both_states() {
        for from in State::ALL {
            for to in State::ALL {
                let Err(refusal) = transition(from, to) else {
                    continue;
                };
                let p = Error::from(refusal).problem();
                assert_eq!((p.status, p.code.as_ref()), (409, "invalid_transition"));
                assert!(p.detail.contains(from.as_str()) && p.detail.contains(to.as_str()));
            }
        }
    }
}
