//! The incident writes: `POST /incident`, `PATCH /incident/{id}` and the
//! `POST /incident/{id}/...` actions (docs/dispatch-realtime.md, "Writes"). HTTP only: the
//! extractors read the caller, the body and the headers; the store runs each write in one
//! transaction.

use actix_web::http::StatusCode;
use actix_web::web;
use common::extract::Path;
use serde::Deserialize;
use utoipa::ToSchema;

use super::form::{CreateIncident, PatchIncident};
use crate::domain::Refusal;
use crate::domain::form::{Check, NOTES_MAX};
use crate::domain::history::HistoryAction;
use crate::domain::incident::State;
use crate::domain::refusal::FieldFault;
use crate::routes::extract::Judge;
use crate::routes::extract::{Body, Fleet, Post, Regulator, Tarm, TarmOrRegulator, Versioned};
use crate::routes::{Reply, Routes};
use crate::state::AppState;
use crate::store::incident_writes::{self as store, DispatchWritten, NewDispatch};
use crate::store::writes::Written;
use crate::views::{DispatchCreated, RefOption};

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_create, create)
        .add(__path_patch, patch)
        .add(__path_submit, submit)
        .add(__path_cancel, cancel)
        .add(__path_prank_call, prank_call)
        .add(__path_technical_decision, technical_decision)
        .add(__path_send_to, send_to)
        .add(__path_dispatch, dispatch)
        .add(__path_intercurrence, intercurrence)
        .add(__path_transfer, transfer)
        .add(__path_close, close);
}

/// Bodies with no rule of their own beyond their shape.
macro_rules! judged_by_shape {
    ($($body:ty),+) => {$(
        impl Judge for $body {
            type Judged = Self;
            fn judge(self) -> Result<Self, Refusal> {
                Ok(self)
            }
        }
    )+};
}
judged_by_shape!(Empty, SendToBody);

/// A body that must be `{}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// Create an incident from the Basic data form: `registering`, version 1.
#[utoipa::path(post, path = "/incident", tag = "writes", request_body = CreateIncident,
    params(("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 201, body = Written,
        headers(("ETag" = String), ("Location" = String)))))]
pub async fn create(state: web::Data<AppState>, w: Post<Tarm, CreateIncident>) -> Reply {
    w.commit(&state, StatusCode::CREATED, async |c, user, new| {
        Ok(store::create(c, user, new.form, new.call_received_at, new.call_id).await?)
    })
    .await
}

/// Partial update of the Basic data, Occurrence and Patient forms.
#[utoipa::path(patch, path = "/incident/{id}", tag = "writes", request_body = PatchIncident,
    params(("id" = i64, Path), ("If-Match" = String, Header, description = "the ETag read")),
    responses((status = 200, body = Written, headers(("ETag" = String)))))]
pub async fn patch(
    state: web::Data<AppState>,
    w: Versioned<Body<TarmOrRegulator, PatchIncident>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, async |c, user, change, expected| {
        Ok(store::patch(c, user, id.0, expected, |form| change.apply(form)).await?)
    })
    .await
}

/// Hand the call to regulation: `registering` -> `awaiting_regulation`. Body `{}`.
#[utoipa::path(post, path = "/incident/{id}/submit", tag = "writes", request_body = Empty,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn submit(
    state: web::Data<AppState>,
    w: Versioned<Post<Tarm, Empty>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, _, expected| {
        let to = State::AwaitingRegulation;
        Ok(store::move_to(c, user, id.0, expected, to, HistoryAction::Submitted, None).await?)
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelBody {
    /// Why the incident is cancelled (recorded in the history).
    pub reason: Option<String>,
}

impl Judge for CancelBody {
    type Judged = Self;
    fn judge(self) -> Result<Self, Refusal> {
        let mut check = Check::default();
        check.opt_text("reason", self.reason.as_deref(), NOTES_MAX);
        check.done().map(|()| self)
    }
}

/// Cancel an open incident (any open state -> `cancelled`).
#[utoipa::path(post, path = "/incident/{id}/cancel", tag = "writes", request_body = CancelBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn cancel(
    state: web::Data<AppState>,
    w: Versioned<Post<TarmOrRegulator, CancelBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, b, expected| {
        let to = State::Cancelled;
        Ok(store::move_to(
            c,
            user,
            id.0,
            expected,
            to,
            HistoryAction::Cancelled,
            b.reason,
        )
        .await?)
    })
    .await
}

/// Close as a prank call, recording the caller's phone. Body `{}`.
#[utoipa::path(post, path = "/incident/{id}/prank-call", tag = "writes", request_body = Empty,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn prank_call(
    state: web::Data<AppState>,
    w: Versioned<Post<TarmOrRegulator, Empty>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, _, expected| {
        Ok(store::prank_call(c, user, id.0, expected).await?)
    })
    .await
}

/// A record's notes (a decision's, an intercurrence's): at most 4,000 characters; blank
/// notes are none.
fn judge_notes(notes: Option<String>) -> Result<Option<String>, Refusal> {
    let notes = notes.filter(|n| !n.trim().is_empty());
    let mut check = Check::default();
    if let Some(n) = &notes {
        check.text("notes", n, false, NOTES_MAX);
    }
    check.done().map(|()| notes)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TechnicalDecisionBody {
    /// An active, not deleted technical decision action.
    pub action_id: i32,
    /// Absent, null or blank: the decision has no notes (read back as `notes: null`).
    pub notes: Option<String>,
    /// The vehicle type asked for, when the decision sends one: the `id` of
    /// `GET /mobile-unit-type` (read back as `vehicle_type`).
    pub vehicle_type_id: Option<i32>,
}

impl Judge for TechnicalDecisionBody {
    type Judged = Self;
    fn judge(self) -> Result<Self, Refusal> {
        Ok(Self {
            notes: judge_notes(self.notes)?,
            ..self
        })
    }
}

/// Record the regulator's decision: `awaiting_regulation` -> `regulated`.
#[utoipa::path(post, path = "/incident/{id}/technical-decision", tag = "writes",
    request_body = TechnicalDecisionBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn technical_decision(
    state: web::Data<AppState>,
    w: Versioned<Post<Regulator, TechnicalDecisionBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, b, expected| {
        let (action, vehicle_type) = (b.action_id, b.vehicle_type_id);
        Ok(
            store::technical_decision(c, user, id.0, expected, action, vehicle_type, b.notes)
                .await?,
        )
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendToBody {
    /// The `id` the "Send to" picker got from `GET /user/search`: an active
    /// `MEDICO_REGULADOR` (read back as `regulation.regulator`).
    pub regulator_id: i64,
}

/// Hand the incident to another regulating physician.
#[utoipa::path(post, path = "/incident/{id}/send-to", tag = "writes", request_body = SendToBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn send_to(
    state: web::Data<AppState>,
    w: Versioned<Post<Regulator, SendToBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, b, expected| {
        Ok(store::send_to(c, user, id.0, expected, b.regulator_id).await?)
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DispatchBody {
    /// An active unit with no dispatch that is not released (see
    /// `GET /mobile-unit/options?available=true`).
    pub mobile_unit_id: i64,
    /// Why a unit of another vehicle type than the latest technical decision asks for is
    /// sent anyway (4,000 characters at most, not blank). Without it such a unit is 409
    /// `vehicle_type_mismatch`; with it the history records the reason.
    pub override_reason: Option<String>,
    /// Where this unit takes its patient, when not where the incident's patient goes: the
    /// `id` of an active unit of `GET /health-unit` (read back as the dispatch's
    /// `destination`).
    pub destination_id: Option<i64>,
}

impl Judge for DispatchBody {
    type Judged = NewDispatch;
    fn judge(self) -> Result<NewDispatch, Refusal> {
        let mut check = Check::default();
        if let Some(reason) = &self.override_reason {
            check.text("override_reason", reason, true, NOTES_MAX);
        }
        check.done()?;
        Ok(NewDispatch {
            mobile_unit_id: self.mobile_unit_id,
            override_reason: self.override_reason,
            destination_id: self.destination_id,
        })
    }
}

/// The 409 of `POST /incident/{id}/dispatch`: a problem document (`invalid_transition`,
/// `unit_busy`, `unit_inactive` or `vehicle_type_mismatch`); a `vehicle_type_mismatch` also
/// names the vehicle type the latest technical decision asks for and the unit's.
#[derive(ToSchema)]
#[allow(dead_code)] // the document's shape only: `error::Error` writes this body
pub struct DispatchConflict {
    #[schema(rename = "type", example = "urn:problem-type:vehicle_type_mismatch")]
    type_: String,
    title: String,
    status: u16,
    detail: String,
    #[schema(example = "vehicle_type_mismatch")]
    code: String,
    errors: Option<Vec<common::FieldError>>,
    /// With `vehicle_type_mismatch`: the type the latest technical decision asks for.
    requested_vehicle_type: Option<RefOption>,
    /// With `vehicle_type_mismatch`: the unit offered and its type.
    mobile_unit: Option<MismatchedUnit>,
}

/// The unit of a `vehicle_type_mismatch`: its id and its vehicle type.
#[derive(ToSchema)]
#[allow(dead_code)] // the document's shape only: `error::Error` writes this body
pub struct MismatchedUnit {
    id: i64,
    vehicle_type: RefOption,
}

/// Assign a mobile unit: `regulated` -> `dispatched` (or one more unit). 409 `unit_busy`,
/// `unit_inactive`, or `vehicle_type_mismatch` (a unit of another type than the latest
/// decision asks for, without `override_reason`).
#[utoipa::path(post, path = "/incident/{id}/dispatch", tag = "writes", request_body = DispatchBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 201, body = DispatchCreated, headers(("ETag" = String))),
        (status = 409, description = "`invalid_transition`, `unit_busy`, `unit_inactive`, \
            `vehicle_type_mismatch` (with `requested_vehicle_type` and `mobile_unit`)",
            body = DispatchConflict, content_type = "application/problem+json")))]
pub async fn dispatch(
    state: web::Data<AppState>,
    w: Versioned<Post<Fleet, DispatchBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(
        &state,
        StatusCode::CREATED,
        async |c, user, order, expected| {
            let made = store::dispatch_unit(c, user, id.0, expected, order).await?;
            Ok(DispatchCreated::from(made))
        },
    )
    .await
}

impl From<DispatchWritten> for DispatchCreated {
    fn from(d: DispatchWritten) -> Self {
        DispatchCreated {
            id: d.id,
            status: d.status,
            version: d.incident_version,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IntercurrenceBody {
    /// An active, not deleted intercurrence.
    pub intercurrence_id: i32,
    /// Absent, null or blank: none (read back as `notes: null`).
    pub notes: Option<String>,
}

impl Judge for IntercurrenceBody {
    type Judged = Self;
    fn judge(self) -> Result<Self, Refusal> {
        Ok(Self {
            notes: judge_notes(self.notes)?,
            ..self
        })
    }
}

/// Record an intercurrence on the attendance.
#[utoipa::path(post, path = "/incident/{id}/intercurrence", tag = "writes",
    request_body = IntercurrenceBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn intercurrence(
    state: web::Data<AppState>,
    w: Versioned<Post<Fleet, IntercurrenceBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, b, expected| {
        Ok(store::intercurrence(c, user, id.0, expected, b.intercurrence_id, b.notes).await?)
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferBody {
    /// The `id` the "Transfer to" picker got from `GET /employee/search` (the employee's
    /// user id): an active employee whose user is active (read back as `assigned_to`).
    #[schema(required = true, value_type = i64)]
    pub assigned_to_id: Option<i64>,
    /// The old name, read as the employees table's key: refused (400 naming it) so that no
    /// client hands an incident to the wrong person.
    #[serde(default)]
    #[schema(ignore)]
    employee_id: Option<serde::de::IgnoredAny>,
}

impl Judge for TransferBody {
    type Judged = i64;
    fn judge(self) -> Result<i64, Refusal> {
        let fault = |field: &str, message: &str| {
            Refusal::InvalidFields(vec![FieldFault {
                field: field.to_owned(),
                message: message.to_owned(),
            }])
        };
        if self.employee_id.is_some() {
            return Err(fault(
                "employee_id",
                "is no longer read: send `assigned_to_id`, the `id` that GET /employee/search \
                 answers",
            ));
        }
        self.assigned_to_id.ok_or_else(|| {
            fault(
                "assigned_to_id",
                "is required: the `id` of GET /employee/search",
            )
        })
    }
}

/// "Transfer to" another employee: `assigned_to_id` is the `id` of `GET /employee/search`.
#[utoipa::path(post, path = "/incident/{id}/transfer", tag = "writes", request_body = TransferBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn transfer(
    state: web::Data<AppState>,
    w: Versioned<Post<Fleet, TransferBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(
        &state,
        StatusCode::OK,
        async |c, user, to_user, expected| {
            Ok(store::transfer(c, user, id.0, expected, to_user).await?)
        },
    )
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseBody {
    pub conclusion: String,
}

impl Judge for CloseBody {
    type Judged = Self;
    fn judge(self) -> Result<Self, Refusal> {
        let mut check = Check::default();
        check.text("conclusion", &self.conclusion, true, NOTES_MAX);
        check.done().map(|()| self)
    }
}

/// Close with a conclusion; 409 `unit_assigned` while a unit is not released.
#[utoipa::path(post, path = "/incident/{id}/close", tag = "writes", request_body = CloseBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn close(
    state: web::Data<AppState>,
    w: Versioned<Post<Regulator, CloseBody>>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, b, expected| {
        Ok(store::close(c, user, id.0, expected, b.conclusion).await?)
    })
    .await
}
