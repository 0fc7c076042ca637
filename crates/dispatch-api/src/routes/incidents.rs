//! `/incident/...`: the mask search, the detail, prank calls and the per-screen routes.

use actix_web::{HttpResponse, web};
use common::Problem;
use common::db::db_error;
use common::extract::{Path, Query};
use serde::Deserialize;
use tokio::try_join;
use utoipa::IntoParams;

use super::{FLEET, FLEET_OR_REGULATOR, REGULATOR, REGULATOR_OR_TARM, Reply, conn, not_found, ok};
use crate::auth::CurrentUser;
use crate::search::SearchParams;
use crate::startup::AppState;
use crate::store::{dispatches, incidents};
use crate::views::*;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/incident/mask", web::get().to(mask))
        .route(
            "/incident/prank-calls/{phone_number}",
            web::get().to(prank_calls),
        )
        .route("/incident/{id}", web::get().to(detail))
        .route(
            "/incident/{id}/unit-selection",
            web::get().to(unit_selection),
        )
        .route("/incident/{id}/fleet-summary", web::get().to(fleet_summary))
        .route(
            "/incident/{id}/fleet-occurrence",
            web::get().to(fleet_occurrence),
        )
        .route("/incident/{id}/regulation", web::get().to(regulation))
        .route(
            "/incident/{id}/occurrence-view",
            web::get().to(occurrence_view),
        );
}

/// Incidents to relate to: `q` matches the number, caller's or patient's name, phone or
/// address; word-prefix matches first, newest first among equals; at most 20.
#[utoipa::path(get, path = "/incident/mask", tag = "incidents",
    params(SearchParams),
    responses((status = 200, body = Vec<IncidentMaskItem>)))]
pub async fn mask(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<SearchParams>,
) -> Reply {
    let search = params.0.check()?;
    let conn = conn(&state).await?;
    ok(&incidents::mask(&conn, &search).await.map_err(db_error)?)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DetailParams {
    /// `true` adds the incident's history (oldest first); default `false`.
    pub include_history: Option<bool>,
}

/// The incident's forms, its `version` (also the `ETag`), and its history on request.
#[utoipa::path(get, path = "/incident/{id}", tag = "incidents",
    params(("id" = i64, Path, description = "incident id"), DetailParams),
    responses((status = 200, body = IncidentDetail,
        headers(("ETag" = String, description = "the incident's version, quoted")))))]
pub async fn detail(
    state: web::Data<AppState>,
    _user: CurrentUser,
    id: Path<i64>,
    params: Query<DetailParams>,
) -> Reply {
    let id = id.0;
    let conn = conn(&state).await?;
    let incident = if params.0.include_history == Some(true) {
        // Both statements in one pipeline: one round trip.
        let (incident, history) =
            try_join!(incidents::detail(&conn, id), incidents::history(&conn, id))
                .map_err(db_error)?;
        incident.map(|i| IncidentDetail {
            history: Some(history),
            ..i
        })
    } else {
        incidents::detail(&conn, id).await.map_err(db_error)?
    };
    let incident = incident.ok_or_else(|| not_found("incident", id))?;
    Ok(with_etag(incident.version).json(incident))
}

/// `ETag: "<version>"`: the `If-Match` value the writes will require.
fn with_etag(version: i32) -> actix_web::HttpResponseBuilder {
    let mut res = HttpResponse::Ok();
    res.insert_header((actix_web::http::header::ETAG, format!("\"{version}\"")));
    res
}

/// Longest phone accepted in the path, in characters.
const MAX_PHONE_CHARS: usize = 32;

/// A phone as the client may send it: digits and `+ - ( ) . space`, 8 to 15 digits.
fn phone_digits(raw: &str) -> Result<String, Problem> {
    let allowed = |c: char| c.is_ascii_digit() || " +-().".contains(c);
    let digits = incidents::phone_digits(raw);
    if raw.chars().count() > MAX_PHONE_CHARS
        || !raw.chars().all(allowed)
        || !(8..=15).contains(&digits.len())
    {
        return Err(Problem::invalid_parameter(
            "phone_number",
            "must be a phone number: 8 to 15 digits, optionally with + - ( ) . or spaces",
        ));
    }
    Ok(digits)
}

/// Prank calls recorded for a phone (URL-encoded, any formatting), newest first.
#[utoipa::path(get, path = "/incident/prank-calls/{phone_number}", tag = "incidents",
    params(("phone_number" = String, Path, description = "the caller's phone, URL-encoded")),
    responses((status = 200, body = PrankCalls)))]
pub async fn prank_calls(
    state: web::Data<AppState>,
    _user: CurrentUser,
    phone: Path<String>,
) -> Reply {
    let digits = phone_digits(&phone.0)?;
    let conn = conn(&state).await?;
    ok(&incidents::prank_calls(&conn, &digits)
        .await
        .map_err(db_error)?)
}

/// Unit selection screen: the patient and the vehicle of the incident.
#[utoipa::path(get, path = "/incident/{id}/unit-selection", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = UnitSelection)))]
pub async fn unit_selection(state: web::Data<AppState>, user: CurrentUser, id: Path<i64>) -> Reply {
    user.require(FLEET_OR_REGULATOR)?;
    let (id, conn) = (id.0, conn(&state).await?);
    let (row, units) = try_join!(
        incidents::fleet_row(&conn, id),
        dispatches::of_incident(&conn, id)
    )
    .map_err(db_error)?;
    let row = row.ok_or_else(|| not_found("incident", id))?;
    let s = row.summary;
    ok(&UnitSelection {
        id: s.id,
        number: s.number,
        state: s.state,
        version: s.version,
        patient: row.patient,
        requested_vehicle_type: s.requested_vehicle_type,
        active_dispatches: units
            .into_iter()
            .filter(|d| d.status != "released")
            .collect(),
    })
}

/// Fleet operator's incident selection: the basic data only.
#[utoipa::path(get, path = "/incident/{id}/fleet-summary", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = IncidentFleetSummary)))]
pub async fn fleet_summary(state: web::Data<AppState>, user: CurrentUser, id: Path<i64>) -> Reply {
    user.require(FLEET)?;
    let conn = conn(&state).await?;
    let row = incidents::fleet_row(&conn, id.0).await.map_err(db_error)?;
    ok(&row.ok_or_else(|| not_found("incident", id.0))?.summary)
}

/// The fleet occurrence screen, whole: four statements in one pipeline.
#[utoipa::path(get, path = "/incident/{id}/fleet-occurrence", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = FleetOccurrence)))]
pub async fn fleet_occurrence(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
) -> Reply {
    user.require(FLEET)?;
    let (id, conn) = (id.0, conn(&state).await?);
    let (row, decisions, units, intercurrences) = try_join!(
        incidents::fleet_row(&conn, id),
        incidents::decisions(&conn, id),
        dispatches::of_incident(&conn, id),
        incidents::recorded_intercurrences(&conn, id),
    )
    .map_err(db_error)?;
    let row = row.ok_or_else(|| not_found("incident", id))?;
    ok(&FleetOccurrence {
        incident: row.summary,
        patient: row.patient,
        technical_decision: decisions.into_iter().last(),
        dispatches: units,
        intercurrences,
    })
}

/// What a regulating physician reads: the incident, its units and the prank calls of the
/// caller's phone; three statements in one pipeline.
#[utoipa::path(get, path = "/incident/{id}/regulation", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = RegulationDetail,
        headers(("ETag" = String, description = "the incident's version, quoted")))))]
pub async fn regulation(state: web::Data<AppState>, user: CurrentUser, id: Path<i64>) -> Reply {
    user.require(REGULATOR)?;
    let (id, conn) = (id.0, conn(&state).await?);
    let (incident, units, pranks) = try_join!(
        incidents::detail(&conn, id),
        dispatches::of_incident(&conn, id),
        incidents::prank_calls_of_incident(&conn, id),
    )
    .map_err(db_error)?;
    let incident = incident.ok_or_else(|| not_found("incident", id))?;
    let prank_calls = PrankCalls {
        phone: incidents::phone_digits(&incident.basic_data.caller_phone),
        ..pranks
    };
    Ok(with_etag(incident.version).json(RegulationDetail {
        incident,
        mobile_units: units,
        prank_calls,
    }))
}

/// Every tab of the occurrence view: three statements in one pipeline.
#[utoipa::path(get, path = "/incident/{id}/occurrence-view", tag = "screens",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = OccurrenceView,
        headers(("ETag" = String, description = "the incident's version, quoted")))))]
pub async fn occurrence_view(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
) -> Reply {
    user.require(REGULATOR_OR_TARM)?;
    let (id, conn) = (id.0, conn(&state).await?);
    let (incident, decisions, units) = try_join!(
        incidents::detail(&conn, id),
        incidents::decisions(&conn, id),
        dispatches::of_incident(&conn, id),
    )
    .map_err(db_error)?;
    let incident = incident.ok_or_else(|| not_found("incident", id))?;
    Ok(with_etag(incident.version).json(OccurrenceView {
        incident,
        technical_decisions: decisions,
        dispatches: units,
    }))
}
