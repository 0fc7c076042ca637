//! `GET /mobile-unit-type`.

use actix_web::web;
use common::extract::Query;
use serde::Deserialize;
use utoipa::IntoParams;

use super::cache::{IfNoneMatch, IfNoneMatchHeader};
use super::{Reply, Routes};
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
    params(ActiveParams, IfNoneMatchHeader),
    responses((status = 200, body = Vec<MobileUnitTypeView>,
        headers(("ETag" = String, description = "a digest of the body"),
            ("Cache-Control" = String, description = "`private, max-age=43200`: keep it for the session"))),
        (status = 304, description = "`If-None-Match` names the current `ETag`: no body")))]
pub async fn types(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<ActiveParams>,
    cached: IfNoneMatch,
) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    let only_active = params.0.active == Some(true);
    let types: Vec<&MobileUnitTypeView> = catalog
        .mobile_unit_types
        .iter()
        .filter(|t| !only_active || t.active)
        .collect();
    cached.lookup(&types)
}
