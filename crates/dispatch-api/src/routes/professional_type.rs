//! `GET /professional-type`, from memory.

use actix_web::web;
use common::extract::Query;

use super::mobile_unit::ActiveOnlyParams;
use super::{Reply, Routes, ok};
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::views::ProfessionalTypeView;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_professional_types, professional_types);
}

/// Professional types; `active_only=true` for active ones only.
#[utoipa::path(get, path = "/professional-type", tag = "reference",
    params(ActiveOnlyParams),
    responses((status = 200, body = Vec<ProfessionalTypeView>)))]
pub async fn professional_types(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<ActiveOnlyParams>,
) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    let only_active = params.0.active_only == Some(true);
    let types: Vec<&ProfessionalTypeView> = catalog
        .professional_types
        .iter()
        .filter(|t| !only_active || t.active)
        .collect();
    ok(&types)
}
