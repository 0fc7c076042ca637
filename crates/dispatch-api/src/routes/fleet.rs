//! `/mobile-unit...`, `/mobile-unit-type`, `/dispatch/...`: the fleet and units on incidents.

use actix_web::web;
use common::db::db_error;
use common::extract::{Path, Query};
use diesel_async::AsyncPgConnection;
use serde::Deserialize;
use tokio::try_join;
use utoipa::IntoParams;

use super::{Reply, conn, not_found, ok};
use crate::auth::CurrentUser;
use crate::startup::AppState;
use crate::store::{dispatches, incidents, reference};
use crate::views::*;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/mobile-unit", web::get().to(list))
        .route("/mobile-unit/options", web::get().to(options))
        .route("/mobile-unit/incident/{id}", web::get().to(of_incident))
        .route("/mobile-unit-type", web::get().to(types))
        .route(
            "/dispatch/incident/{id}",
            web::get().to(dispatches_of_incident),
        )
        .route(
            "/dispatch/bff/dispatch-data/{id}",
            web::get().to(dispatch_data),
        );
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ActiveOnlyParams {
    /// `true` lists active records only; default `false` (all, for admin screens).
    pub active_only: Option<bool>,
}

/// The fleet, with each unit's type; `active_only=true` for the operational screens.
#[utoipa::path(get, path = "/mobile-unit", tag = "fleet",
    params(ActiveOnlyParams),
    responses((status = 200, body = Vec<MobileUnitView>)))]
pub async fn list(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<ActiveOnlyParams>,
) -> Reply {
    let conn = conn(&state).await?;
    let active_only = params.0.active_only.unwrap_or(false);
    ok(&reference::mobile_units(&conn, active_only)
        .await
        .map_err(db_error)?)
}

/// The "Select a mobile unit" field: active units, `{id, name}`, by name.
#[utoipa::path(get, path = "/mobile-unit/options", tag = "fleet",
    responses((status = 200, body = Vec<MobileUnitOption>)))]
pub async fn options(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    let conn = conn(&state).await?;
    ok(&reference::mobile_unit_options(&conn)
        .await
        .map_err(db_error)?)
}

/// The units of an incident; 404 when the incident does not exist. The existence check
/// runs in the same pipeline as the list.
async fn units_of(conn: &AsyncPgConnection, id: i64) -> Result<Vec<DispatchView>, common::Problem> {
    let (exists, units) = try_join!(
        incidents::exists(conn, id),
        dispatches::of_incident(conn, id)
    )
    .map_err(db_error)?;
    if exists {
        Ok(units)
    } else {
        Err(not_found("incident", id))
    }
}

/// The mobile units on an incident, with their dispatch status and step times.
#[utoipa::path(get, path = "/mobile-unit/incident/{id}", tag = "fleet",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = Vec<DispatchView>)))]
pub async fn of_incident(state: web::Data<AppState>, _user: CurrentUser, id: Path<i64>) -> Reply {
    let conn = conn(&state).await?;
    ok(&units_of(&conn, id.0).await?)
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
    let conn = conn(&state).await?;
    ok(&units_of(&conn, id.0).await?)
}

/// The incident's fleet summary and its dispatches, in one pipeline.
#[utoipa::path(get, path = "/dispatch/bff/dispatch-data/{id}", tag = "fleet",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = DispatchData)))]
pub async fn dispatch_data(state: web::Data<AppState>, _user: CurrentUser, id: Path<i64>) -> Reply {
    let (id, conn) = (id.0, conn(&state).await?);
    let (row, units) = try_join!(
        incidents::fleet_row(&conn, id),
        dispatches::of_incident(&conn, id)
    )
    .map_err(db_error)?;
    let row = row.ok_or_else(|| not_found("incident", id))?;
    ok(&DispatchData {
        incident: row.summary,
        dispatches: units,
    })
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ActiveParams {
    /// `true`: active types only. Absent: every type, for the admin screens.
    pub active: Option<bool>,
}

/// Mobile unit types, from memory. Without `active` every type (admin screens).
#[utoipa::path(get, path = "/mobile-unit-type", tag = "fleet",
    params(ActiveParams),
    responses((status = 200, body = Vec<MobileUnitTypeView>)))]
pub async fn types(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<ActiveParams>,
) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    let only_active = params.0.active == Some(true);
    let types: Vec<&MobileUnitTypeView> = catalog
        .mobile_unit_types
        .iter()
        .filter(|t| !only_active || t.active)
        .collect();
    ok(&types)
}
