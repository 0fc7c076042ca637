//! `/mobile-unit...`: the fleet.

use actix_web::http::StatusCode;
use actix_web::web;
use chrono::{DateTime, Utc};
use common::extract::{Path, Query};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::{Reply, Routes, ok};
use crate::domain::Refusal;
use crate::domain::fleet::{Point, Whereabouts};
use crate::domain::refusal::FieldFault;
use crate::domain::user::CurrentUser;
use crate::routes::extract::{Caller, FleetOrAdmin, Judge, Post};
use crate::state::AppState;
use crate::store::dispatches;
use crate::store::fleet::{self, UnitChange};
use crate::store::reference::{self, UnitFilter};
use crate::views::*;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_list, list)
        .add(__path_options, options)
        .add(__path_board, board)
        .add(__path_of_incident, of_incident)
        .add(__path_position, position)
        .add(__path_patch, patch)
        .add(__path_history, history);
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
    pub vehicle_type_id: Option<i32>,
}

/// The "Select a mobile unit" field: active units, `{id, name}`, by name; `available=true`
/// for the free ones only, `vehicle_type_id` for one vehicle type.
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
        type_id: params.0.vehicle_type_id,
    };
    let conn = state.pool.get().await?;
    ok(&reference::mobile_unit_options(&conn, filter).await?)
}

/// The fleet board: every active unit with its type and base, and the dispatch it is on
/// (status, incident) or `null` when free, by name; where the unit is (`position`, as the
/// recommendation counts it) and how long it has been in its current step. Two statements,
/// pipelined. The queue `fleet` of the socket tells each unit's later steps
/// (docs/dispatch-realtime.md, "The fleet board").
#[utoipa::path(get, path = "/mobile-unit/board", tag = "fleet",
    responses((status = 200, body = Vec<BoardUnit>)))]
pub async fn board(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    let conn = state.pool.get().await?;
    let now = state.clock.now();
    let (units, places) = tokio::try_join!(
        reference::fleet_board(&conn),
        fleet::units_on_map(&conn, now, &state.fleet)
    )?;
    let places: std::collections::HashMap<i64, _> =
        places.into_iter().map(|u| (u.candidate.id, u)).collect();
    let board: Vec<BoardUnit> = units
        .into_iter()
        .map(|unit| {
            let position = places.get(&unit.id).map_or_else(
                || UnitWhereabouts::of(&Whereabouts::Unknown, None, now),
                |p| UnitWhereabouts::of(&p.candidate.whereabouts, p.fix, now),
            );
            BoardUnit {
                position,
                seconds_in_step: unit.step_since.map(|t| (now - t).num_seconds().max(0)),
                unit,
            }
        })
        .collect();
    ok(&board)
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

// --- Positions and managing the fleet (docs/dispatch-routes.md, "Positions and a
// recommendation", "Managing the fleet and the team") ------------------------------------

/// `POST /mobile-unit/{id}/position`'s body: where the unit is and when it was there.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionBody {
    /// Where the unit is (read back as the unit's `position.location`).
    pub location: Location,
    /// When the tracker (or the operator) recorded it; not in the future.
    pub recorded_at: DateTime<Utc>,
}

impl Judge for PositionBody {
    type Judged = Self;
    /// Nothing here: the location and the time are judged together where the request's
    /// time is known ([`PositionBody::faults`]), so both faults are named at once.
    fn judge(self) -> Result<Self, Refusal> {
        Ok(self)
    }
}

impl PositionBody {
    /// Every fault of the body at `now`: a location off the globe, a time in the future.
    fn faults(&self, now: DateTime<Utc>) -> Vec<FieldFault> {
        let mut faults = Vec::new();
        if let Some((field, message)) = (Point {
            lat: self.location.lat,
            lon: self.location.lon,
        })
        .fault()
        {
            faults.push(FieldFault {
                field: format!("location.{field}"),
                message: message.to_owned(),
            });
        }
        if self.recorded_at > now + chrono::Duration::minutes(1) {
            faults.push(FieldFault {
                field: "recorded_at".into(),
                message: "must not be in the future".into(),
            });
        }
        faults
    }
}

/// A unit's position, from its tracker or its operator: kept as the unit's latest. A report
/// older than the kept one (a tracker resending after a loss of signal) changes nothing and
/// is answered 200 with `outcome: "older_than_kept"` and the kept position. The
/// recommendation counts it while younger than `POSITION_MAX_AGE`, the base after that.
#[utoipa::path(post, path = "/mobile-unit/{id}/position", tag = "fleet", request_body = PositionBody,
    params(("id" = i64, Path, description = "mobile unit id"),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = PositionRecorded)))]
pub async fn position(
    state: web::Data<AppState>,
    w: Post<FleetOrAdmin, PositionBody>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, by, b| {
        let faults = b.faults(by.at);
        if !faults.is_empty() {
            return Err(Refusal::InvalidFields(faults).into());
        }
        Ok(fleet::record_position(c, by, id.0, b.location, b.recorded_at).await?)
    })
    .await
}

/// `PATCH /mobile-unit/{id}`'s body: any of the three.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchUnitBody {
    pub active: Option<bool>,
    /// A base's name (`GET /mobile-unit` shows each unit's).
    pub base: Option<String>,
    /// The crew's team id; `null` clears it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i32>)]
    pub team_id: Option<Option<i32>>,
}

/// A field sent as `null` is `Some(None)`; one left out is `None`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<i32>>, D::Error> {
    Option::<i32>::deserialize(d).map(Some)
}

impl Judge for PatchUnitBody {
    type Judged = UnitChange;
    fn judge(self) -> Result<UnitChange, Refusal> {
        if self.active.is_none() && self.base.is_none() && self.team_id.is_none() {
            return Err(Refusal::NothingToChange);
        }
        Ok(UnitChange {
            active: self.active,
            base: self.base,
            team_id: self.team_id,
        })
    }
}

/// Activate or deactivate a unit, change its base or its crew's team. 409 `unit_dispatched`
/// while it is on a dispatch that is not released. Recorded on `GET /mobile-unit/{id}/history`.
#[utoipa::path(patch, path = "/mobile-unit/{id}", tag = "fleet", request_body = PatchUnitBody,
    params(("id" = i64, Path, description = "mobile unit id")),
    responses((status = 200, body = ManagedUnit)))]
pub async fn patch(
    state: web::Data<AppState>,
    w: Post<FleetOrAdmin, PatchUnitBody>,
    id: Path<i64>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, by, change| {
        Ok(fleet::patch_unit(c, by, id.0, change).await?)
    })
    .await
}

/// Who changed the unit (active, base, team) and when, oldest first.
#[utoipa::path(get, path = "/mobile-unit/{id}/history", tag = "fleet",
    params(("id" = i64, Path, description = "mobile unit id")),
    responses((status = 200, body = Vec<FleetHistoryEntry>)))]
pub async fn history(
    state: web::Data<AppState>,
    _user: Caller<FleetOrAdmin>,
    id: Path<i64>,
) -> Reply {
    let conn = state.pool.get().await?;
    let entries = fleet::unit_history(&conn, id.0).await?;
    ok(&entries.ok_or_else(|| Refusal::not_found("mobile unit", id.0))?)
}
