//! `/mobile-unit...`: the fleet.

use actix_web::web;
use common::extract::{Path, Query};
use serde::Deserialize;
use utoipa::IntoParams;

use super::{Reply, Routes, ok};
use crate::domain::Refusal;
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::store::{dispatches, reference};
use crate::views::*;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_list, list)
        .add(__path_options, options)
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

/// The "Select a mobile unit" field: active units, `{id, name}`, by name.
#[utoipa::path(get, path = "/mobile-unit/options", tag = "fleet",
    responses((status = 200, body = Vec<MobileUnitOption>)))]
pub async fn options(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    let conn = state.pool.get().await?;
    ok(&reference::mobile_unit_options(&conn).await?)
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
