//! `/mobile-unit...`: the fleet.

use actix_web::web;
use common::extract::{Path, Query};
use serde::Deserialize;
use utoipa::IntoParams;

use super::{Reply, Routes, ok};
use crate::domain::Refusal;
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::store::dispatches;
use crate::store::reference::{self, UnitFilter};
use crate::views::*;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_list, list)
        .add(__path_options, options)
        .add(__path_board, board)
        .add(__path_of_incident, of_incident);
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
    let conn = state.pool.get().await?;
    let active_only = params.0.active_only.unwrap_or(false);
    ok(&reference::mobile_units(&conn, active_only).await?)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OptionsParams {
    /// `true` lists only free units (no dispatch that is not released); default `false`:
    /// every active unit, free or not.
    pub available: Option<bool>,
    /// Only units of this vehicle type: the `id` of `GET /mobile-unit-type`.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub unit_type: Option<i32>,
}

/// The "Select a mobile unit" field: active units, `{id, name}`, by name; `available=true`
/// for the free ones only, `type` for one vehicle type.
#[utoipa::path(get, path = "/mobile-unit/options", tag = "fleet",
    params(OptionsParams),
    responses((status = 200, body = Vec<MobileUnitOption>)))]
pub async fn options(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<OptionsParams>,
) -> Reply {
    let filter = UnitFilter {
        available_only: params.0.available.unwrap_or(false),
        type_id: params.0.unit_type,
    };
    let conn = state.pool.get().await?;
    ok(&reference::mobile_unit_options(&conn, filter).await?)
}

/// The fleet board: every active unit with its type and base, and the dispatch it is on
/// (status, incident) or `null` when free, by name; one statement.
#[utoipa::path(get, path = "/mobile-unit/board", tag = "fleet",
    responses((status = 200, body = Vec<FleetBoardUnit>)))]
pub async fn board(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    let conn = state.pool.get().await?;
    ok(&reference::fleet_board(&conn).await?)
}

/// The mobile units on an incident, with their dispatch status and step times.
#[utoipa::path(get, path = "/mobile-unit/incident/{id}", tag = "fleet",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = Vec<DispatchView>)))]
pub async fn of_incident(state: web::Data<AppState>, _user: CurrentUser, id: Path<i64>) -> Reply {
    let conn = state.pool.get().await?;
    let units = dispatches::of_existing_incident(&conn, id.0).await?;
    ok(&units.ok_or_else(|| Refusal::not_found("incident", id.0))?)
}
