//! `GET /professional-type`, from memory.

use actix_web::web;
use common::extract::Query;

use super::cache::{IfNoneMatch, IfNoneMatchHeader};
use super::mobile_unit::ActiveOnlyParams;
use super::{Reply, Routes};
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::views::ProfessionalTypeView;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_professional_types, professional_types);
}

/// Professional types; `active_only=true` for active ones only.
#[utoipa::path(get, path = "/professional-type", tag = "reference",
    params(ActiveOnlyParams, IfNoneMatchHeader),
    responses((status = 200, body = Vec<ProfessionalTypeView>,
        headers(("ETag" = String, description = "a digest of the body"),
            ("Cache-Control" = String, description = "`private, max-age=43200`: keep it for the session"))),
        (status = 304, description = "`If-None-Match` names the current `ETag`: no body")))]
pub async fn professional_types(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<ActiveOnlyParams>,
    cached: IfNoneMatch,
) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    let only_active = params.0.active_only == Some(true);
    let types: Vec<&ProfessionalTypeView> = catalog
        .professional_types
        .iter()
        .filter(|t| !only_active || t.active)
        .collect();
    cached.lookup(&types)
}
