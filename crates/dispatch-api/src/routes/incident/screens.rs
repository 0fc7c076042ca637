//! The per-screen reads of an incident: each answers one screen whole, its statements in one
//! pipeline (docs/dispatch-routes.md, "Screens -> requests").

use actix_web::web;
use common::extract::Path;
use tokio::try_join;

use crate::domain::Refusal;
use crate::domain::dispatch::Status;
use crate::domain::phone;
use crate::patient_data::AccessRoute;
use crate::routes::extract::{
    Caller, Fleet, FleetOrRegulator, Regulator, RegulatorOrTarm, TimesReader,
};
use crate::routes::recorded::record;
use crate::routes::{Reply, Routes};
use crate::state::AppState;
use crate::store::{dispatches, incidents, times};
use crate::views::*;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_unit_selection, unit_selection)
        .add(__path_fleet_summary, fleet_summary)
        .add(__path_fleet_occurrence, fleet_occurrence)
        .add(__path_regulation, regulation)
        .add(__path_occurrence_view, occurrence_view)
        .add(__path_timeline, timeline);
}

/// Unit selection screen: the patient and the vehicle of the incident.
#[utoipa::path(get, path = "/incident/{id}/unit-selection", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = UnitSelection, headers(("ETag" = String, description = "the incident's version, quoted: the `If-Match` its writes take")))))]
pub async fn unit_selection(
    state: web::Data<AppState>,
    user: Caller<FleetOrRegulator>,
    id: Path<i64>,
) -> Reply {
    let conn = state.pool.get().await?;
    let (row, units) = dispatches::fleet_row_and_units(&conn, id.0)
        .await?
        .ok_or_else(|| Refusal::not_found("incident", id.0))?;
    let s = row.summary;
    let view = UnitSelection {
        id: s.id,
        number: s.number,
        state: s.state,
        version: s.version,
        patient: row.patient,
        requested_vehicle_type: s.requested_vehicle_type,
        active_dispatches: units
            .into_iter()
            .filter(|d| d.status != Status::Released)
            .collect(),
    };
    record(&state, &user, AccessRoute::UnitSelection, view, conn)
        .await?
        .with_etag(s.version)
}

/// Fleet operator's incident selection: the basic data only.
#[utoipa::path(get, path = "/incident/{id}/fleet-summary", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = IncidentFleetSummary, headers(("ETag" = String, description = "the incident's version, quoted: the `If-Match` its writes take")))))]
pub async fn fleet_summary(
    state: web::Data<AppState>,
    user: Caller<Fleet>,
    id: Path<i64>,
) -> Reply {
    let conn = state.pool.get().await?;
    let row = incidents::fleet_row(&conn, id.0)
        .await?
        .ok_or_else(|| Refusal::not_found("incident", id.0))?;
    let version = row.summary.version;
    record(&state, &user, AccessRoute::FleetSummary, row.summary, conn)
        .await?
        .with_etag(version)
}

/// The fleet occurrence screen, whole: five statements in one pipeline.
#[utoipa::path(get, path = "/incident/{id}/fleet-occurrence", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = FleetOccurrence, headers(("ETag" = String, description = "the incident's version, quoted: the `If-Match` its writes take")))))]
pub async fn fleet_occurrence(
    state: web::Data<AppState>,
    user: Caller<Fleet>,
    id: Path<i64>,
) -> Reply {
    let (id, conn) = (id.0, state.pool.get().await?);
    let (row, decisions, units, intercurrences, timeline) = try_join!(
        incidents::fleet_row(&conn, id),
        incidents::decisions(&conn, id),
        dispatches::of_incident(&conn, id),
        incidents::recorded_intercurrences(&conn, id),
        times::timeline(&conn, id, state.clock.now()),
    )?;
    let (row, response_times) = row
        .zip(timeline)
        .ok_or_else(|| Refusal::not_found("incident", id))?;
    let version = row.summary.version;
    let view = FleetOccurrence {
        incident: row.summary,
        caller_name: row.caller_name,
        caller_phone: row.caller_phone,
        assigned_to: row.assigned_to,
        patient: row.patient,
        technical_decision: decisions.into_iter().last(),
        dispatches: units,
        intercurrences,
        response_times,
    };
    record(&state, &user, AccessRoute::FleetOccurrence, view, conn)
        .await?
        .with_etag(version)
}

/// What a regulating physician reads: the incident, its units, the prank calls of the
/// caller's phone and the intercurrences; four statements in one pipeline.
#[utoipa::path(get, path = "/incident/{id}/regulation", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = RegulationDetail, headers(("ETag" = String, description = "the incident's version, quoted: the `If-Match` its writes take")))))]
pub async fn regulation(
    state: web::Data<AppState>,
    user: Caller<Regulator>,
    id: Path<i64>,
) -> Reply {
    let (id, conn) = (id.0, state.pool.get().await?);
    let (incident, units, pranks, intercurrences) = try_join!(
        incidents::detail(&conn, id),
        dispatches::of_incident(&conn, id),
        incidents::prank_calls_of_incident(&conn, id),
        incidents::recorded_intercurrences(&conn, id),
    )?;
    let incident = incident.ok_or_else(|| Refusal::not_found("incident", id))?;
    let prank_calls = PrankCalls {
        phone: phone::key_of(&incident.basic_data.caller_phone),
        ..pranks
    };
    let version = incident.version;
    let view = RegulationDetail {
        incident,
        mobile_units: units,
        prank_calls,
        intercurrences,
    };
    record(&state, &user, AccessRoute::Regulation, view, conn)
        .await?
        .with_etag(version)
}

/// Every tab of the occurrence view, the intercurrences included: five statements in one
/// pipeline.
#[utoipa::path(get, path = "/incident/{id}/occurrence-view", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = OccurrenceView, headers(("ETag" = String, description = "the incident's version, quoted: the `If-Match` its writes take")))))]
pub async fn occurrence_view(
    state: web::Data<AppState>,
    user: Caller<RegulatorOrTarm>,
    id: Path<i64>,
) -> Reply {
    let (id, conn) = (id.0, state.pool.get().await?);
    let (incident, decisions, units, intercurrences, timeline) = try_join!(
        incidents::detail(&conn, id),
        incidents::decisions(&conn, id),
        dispatches::of_incident(&conn, id),
        incidents::recorded_intercurrences(&conn, id),
        times::timeline(&conn, id, state.clock.now()),
    )?;
    let (incident, response_times) = incident
        .zip(timeline)
        .ok_or_else(|| Refusal::not_found("incident", id))?;
    let version = incident.version;
    let view = OccurrenceView {
        incident,
        technical_decisions: decisions,
        dispatches: units,
        intercurrences,
        response_times,
    };
    record(&state, &user, AccessRoute::OccurrenceView, view, conn)
        .await?
        .with_etag(version)
}

/// Every phase of the incident and of each of its units, with their targets and what is
/// missing or out of order (docs/dispatch-routes.md, "Response times"): three statements in
/// one pipeline.
#[utoipa::path(get, path = "/incident/{id}/timeline", tag = "response times",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = IncidentTimeline)))]
pub async fn timeline(
    state: web::Data<AppState>,
    user: Caller<TimesReader>,
    id: Path<i64>,
) -> Reply {
    let conn = state.pool.get().await?;
    let timeline = times::timeline(&conn, id.0, state.clock.now())
        .await?
        .ok_or_else(|| Refusal::not_found("incident", id.0))?;
    record(&state, &user, AccessRoute::Timeline, timeline, conn)
        .await?
        .ok()
}
