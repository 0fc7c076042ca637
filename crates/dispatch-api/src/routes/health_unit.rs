//! `GET /health-unit`: the patient destination field, from memory.

use actix_web::web;
use common::extract::Query;

use super::{Reply, Routes, ok_json};
use crate::domain::user::CurrentUser;
use crate::search::SearchParams;
use crate::state::AppState;
use crate::views::HealthUnitOption;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_health_units, health_units);
}

/// Active health units matching `q` (prefix first, then name order), at most 20; from
/// memory. Without `q`, all of them in name order, 20 at a time.
#[utoipa::path(get, path = "/health-unit", tag = "reference",
    params(SearchParams),
    responses((status = 200, body = Vec<HealthUnitOption>)))]
pub async fn health_units(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<SearchParams>,
) -> Reply {
    let search = params.0.check()?;
    let catalog = state.catalog.get(&state.pool).await?;
    ok_json(catalog.search_health_units(&search))
}
