//! `GET /technical-decision/incident/{id}`.

use actix_web::web;
use common::extract::Path;
use tokio::try_join;

use super::recorded::record;
use super::{Reply, Routes};
use crate::domain::Refusal;
use crate::domain::user::CurrentUser;
use crate::patient_data::AccessRoute;
use crate::state::AppState;
use crate::store::incidents;
use crate::views::TechnicalDecisionView;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_decisions_of_incident, decisions_of_incident);
}

/// The technical decisions of an incident, oldest first.
#[utoipa::path(get, path = "/technical-decision/incident/{id}", tag = "incidents",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = Vec<TechnicalDecisionView>)))]
pub async fn decisions_of_incident(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
) -> Reply {
    let (id, conn) = (id.0, state.pool.get().await?);
    let (exists, decisions) = try_join!(
        incidents::exists(&conn, id),
        incidents::decisions(&conn, id)
    )?;
    if !exists {
        return Err(Refusal::not_found("incident", id).into());
    }
    record(
        &state,
        &user,
        AccessRoute::TechnicalDecisions,
        decisions,
        conn,
    )
    .await?
    .ok()
}
