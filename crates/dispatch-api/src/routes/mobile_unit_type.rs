//! `GET /mobile-unit-type`.

use actix_web::web;
use common::extract::Query;
use serde::Deserialize;
use utoipa::IntoParams;

use super::{Reply, Routes, ok};
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::views::MobileUnitTypeView;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_types, types);
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
