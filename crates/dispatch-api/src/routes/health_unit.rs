//! `GET /health-unit`: the patient destination field, from memory.

use actix_web::web;
use common::extract::Query;

use super::{Reply, Routes, ok, ok_json};
use crate::domain::user::CurrentUser;
use crate::search::HealthUnitParams;
use crate::state::AppState;
use crate::store::{self, times};
use crate::views::{HealthUnitOption, HoldStats, HospitalOffload, OffloadBoard};

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_health_units, health_units)
        .add(__path_offload, offload);
}

/// The stretcher holds, hospital by hospital (docs/dispatch-routes.md, "Hospital offload"):
/// the units at each door now with how long they have waited, and today's holds (units that
/// arrived since midnight, centre time, and were handed over) with their p50 and p90. Two
/// statements in one pipeline. Any profile.
#[utoipa::path(get, path = "/health-unit/offload", tag = "response times",
    responses((status = 200, body = OffloadBoard)))]
pub async fn offload(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    ok(&board(&state).await?)
}

/// The board, as `GET /health-unit/offload` answers it (and the manager's page shows it).
pub async fn board(state: &AppState) -> Result<OffloadBoard, crate::error::Error> {
    let now = state.clock.now();
    let conn = state.pool.get().await?;
    let today_from = times::day_start(&conn, now, state.time_zone.name()).await?;
    let (doors, holds) = store::offload::board(&conn, now, today_from).await?;
    let mut hospitals: Vec<HospitalOffload> = Vec::new();
    let key = |h: &Option<HealthUnitOption>| h.as_ref().map(|h| h.id);
    for (unit, at_door) in doors {
        match hospitals
            .iter_mut()
            .find(|x| key(&x.health_unit) == key(&unit))
        {
            Some(h) => h.at_door.push(at_door),
            None => hospitals.push(HospitalOffload {
                health_unit: unit,
                at_door: vec![at_door],
                today: HoldStats {
                    holds: 0,
                    p50_seconds: None,
                    p90_seconds: None,
                    max_seconds: None,
                },
            }),
        }
    }
    for (unit, stats) in holds {
        match hospitals
            .iter_mut()
            .find(|x| key(&x.health_unit) == key(&unit))
        {
            Some(h) => h.today = stats,
            None => hospitals.push(HospitalOffload {
                health_unit: unit,
                at_door: vec![],
                today: stats,
            }),
        }
    }
    // Longest hold at the door first; hospitals with none by today's p90, then by name.
    let longest = |h: &HospitalOffload| {
        h.at_door
            .iter()
            .map(|u| u.held_seconds)
            .fold(0.0_f64, f64::max)
    };
    hospitals.sort_by(|a, b| {
        longest(b)
            .total_cmp(&longest(a))
            .then(
                b.today
                    .p90_seconds
                    .unwrap_or(0.0)
                    .total_cmp(&a.today.p90_seconds.unwrap_or(0.0)),
            )
            .then_with(|| {
                let name = |h: &HospitalOffload| h.health_unit.as_ref().map(|u| u.name.clone());
                name(a).cmp(&name(b))
            })
    });
    for h in &mut hospitals {
        h.at_door
            .sort_by(|a, b| b.held_seconds.total_cmp(&a.held_seconds));
    }
    Ok(OffloadBoard {
        at: now,
        today_from,
        time_zone: state.time_zone.name().to_owned(),
        hospitals,
    })
}

/// Active health units matching every word of `q` in any order (names starting with the
/// whole term first, then those containing it, then those containing its words apart; each
/// in name order), at most 20, of one `city` when given; from memory. Without `q`, all of
/// them (of the city) in name order, 20 at a time.
#[utoipa::path(get, path = "/health-unit", tag = "reference",
    params(HealthUnitParams),
    responses((status = 200, body = Vec<HealthUnitOption>)))]
pub async fn health_units(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<HealthUnitParams>,
) -> Reply {
    let (search, city) = params.0.check()?;
    let catalog = state.catalog.get(&state.pool).await?;
    ok_json(catalog.search_health_units(&search, city.as_deref()))
}
