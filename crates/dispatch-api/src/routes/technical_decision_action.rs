//! `GET /technical-decision-action`, from memory.

use actix_web::web;

use super::{Reply, Routes, ok};
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::views::RefOption;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_decision_actions, decision_actions);
}

/// Technical decision actions, active and not deleted only.
#[utoipa::path(get, path = "/technical-decision-action", tag = "reference",
    responses((status = 200, body = Vec<RefOption>)))]
pub async fn decision_actions(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    ok(&state
        .catalog
        .get(&state.pool)
        .await?
        .technical_decision_actions)
}
