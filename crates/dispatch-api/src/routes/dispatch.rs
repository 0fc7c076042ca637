//! `/dispatch/...`: the units on an incident and a unit's progress.

use actix_web::http::StatusCode;
use actix_web::web;
use common::extract::Path;
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::Judge;
use super::extract::{Fleet, Post};
use super::recorded::record;
use super::{Reply, Routes, ok};
use crate::domain::Refusal;
use crate::domain::dispatch::Status;
use crate::domain::refusal::FieldFault;
use crate::domain::user::CurrentUser;
use crate::patient_data::AccessRoute;
use crate::state::AppState;
use crate::store::dispatches;
use crate::store::incident_writes::{self as store, DispatchWritten};
use crate::views::*;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_dispatches_of_incident, dispatches_of_incident)
        .add(__path_dispatch_data, dispatch_data)
        .add(__path_dispatch_status, dispatch_status);
}

/// The dispatches of an incident (same shape as `/mobile-unit/incident/{id}`).
#[utoipa::path(get, path = "/dispatch/incident/{id}", tag = "fleet",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = Vec<DispatchView>)))]
pub async fn dispatches_of_incident(
    state: web::Data<AppState>,
    _user: CurrentUser,
    id: Path<i64>,
) -> Reply {
    let conn = state.pool.get().await?;
    let units = dispatches::of_existing_incident(&conn, id.0).await?;
    ok(&units.ok_or_else(|| Refusal::not_found("incident", id.0))?)
}

/// The incident's fleet summary and its dispatches, in one pipeline.
#[utoipa::path(get, path = "/dispatch/bff/dispatch-data/{id}", tag = "fleet",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = DispatchData,
        headers(("ETag" = String, description = "the incident's version, quoted: the `If-Match` its writes take")))))]
pub async fn dispatch_data(state: web::Data<AppState>, user: CurrentUser, id: Path<i64>) -> Reply {
    let conn = state.pool.get().await?;
    let (row, units) = dispatches::fleet_row_and_units(&conn, id.0)
        .await?
        .ok_or_else(|| Refusal::not_found("incident", id.0))?;
    let version = row.summary.version;
    let view = DispatchData {
        incident: row.summary,
        dispatches: units,
    };
    record(&state, &user, AccessRoute::DispatchData, view, conn)
        .await?
        .with_etag(version)
}

impl From<DispatchWritten> for DispatchProgress {
    fn from(d: DispatchWritten) -> Self {
        DispatchProgress {
            id: d.id,
            status: d.status,
            incident_id: d.incident_id,
            version: d.incident_version,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusBody {
    /// `en_route`, `on_scene`, `transporting`, `at_destination`, `handed_over` (the patient
    /// handed to the hospital's team) or `released`.
    #[schema(value_type = Status)]
    pub status: String,
}

impl Judge for StatusBody {
    type Judged = Status;

    /// A step a unit can take (`assigned` is where it starts, never a step).
    fn judge(self) -> Result<Status, Refusal> {
        Status::parse(&self.status)
            .filter(|s| *s != Status::Assigned)
            .ok_or_else(|| {
                Refusal::InvalidFields(vec![FieldFault {
                    field: "status".to_owned(),
                    message: "must be one of en_route, on_scene, transporting, \
                              at_destination, handed_over, released"
                        .to_owned(),
                }])
            })
    }
}

/// One step of a unit. No `If-Match`: the order rule guards it.
#[utoipa::path(post, path = "/dispatch/{id}/status", tag = "writes", request_body = StatusBody,
    params(("id" = i64, Path, description = "dispatch id"),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = DispatchProgress)))]
pub async fn dispatch_status(
    state: web::Data<AppState>,
    w: Post<Fleet, StatusBody>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, user, to| {
        let step = store::dispatch_status(c, user, id.0, to).await?;
        Ok(DispatchProgress::from(step))
    })
    .await
}
