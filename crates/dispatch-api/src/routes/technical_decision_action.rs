//! `GET /technical-decision-action`, from memory.

use actix_web::web;

use super::cache::{IfNoneMatch, IfNoneMatchHeader};
use super::{Reply, Routes};
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::views::RefOption;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_decision_actions, decision_actions);
}

/// Technical decision actions, active and not deleted only.
#[utoipa::path(get, path = "/technical-decision-action", tag = "reference",
    params(IfNoneMatchHeader),
    responses((status = 200, body = Vec<RefOption>,
        headers(("ETag" = String, description = "a digest of the body"),
            ("Cache-Control" = String, description = "`private, max-age=43200`: keep it for the session"))),
        (status = 304, description = "`If-None-Match` names the current `ETag`: no body")))]
pub async fn decision_actions(
    state: web::Data<AppState>,
    _user: CurrentUser,
    cached: IfNoneMatch,
) -> Reply {
    cached.lookup(
        &state
            .catalog
            .get(&state.pool)
            .await?
            .technical_decision_actions,
    )
}
