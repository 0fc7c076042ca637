//! `GET /incident/mask`, `GET /incident/prank-calls/{phone_number}`, `GET /incident/{id}`.

use actix_web::{HttpRequest, web};
use common::Problem;
use common::extract::{Path, Query};
use serde::Deserialize;
use tokio::try_join;
use utoipa::IntoParams;

use crate::domain::Refusal;
use crate::domain::phone::Phone;
use crate::domain::user::CurrentUser;
use crate::patient_data::AccessRoute;
use crate::routes::cache::{IfNoneMatch, IfNoneMatchHeader};
use crate::routes::recorded::record;
use crate::routes::{Reply, Routes};
use crate::search::MaskParams;
use crate::state::AppState;
use crate::store::incidents;
use crate::views::*;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_mask, mask)
        .add(__path_prank_calls, prank_calls)
        .add(__path_detail, detail);
}

/// Incidents to relate to, and the work queues: `q` matches the number, caller's or
/// patient's name, phone or address (word-prefix matches first), `state` and `mine` filter;
/// newest first, at most 20. Without `since`/`until` it looks at open incidents and those of
/// the last 7 days; a complete number or phone finds incidents of any age
/// (docs/dispatch-routes.md, "Incident search").
#[utoipa::path(get, path = "/incident/mask", tag = "incidents",
    params(MaskParams),
    responses((status = 200, body = Vec<IncidentMaskItem>),
        (status = 400, description = "A bad parameter (named in `errors`): an unknown state, a \
            `since`..`until` window longer than 31 days or reversed (both named), a bad `limit`...",
            body = common::problem::ProblemDocument, content_type = "application/problem+json")))]
pub async fn mask(state: web::Data<AppState>, user: CurrentUser, req: HttpRequest) -> Reply {
    let mask = mask_params(req.query_string())?.check(state.clock.now())?;
    let conn = state.pool.get().await?;
    let page = incidents::mask(&conn, &mask, user.id).await?;
    record(&state, &user, AccessRoute::Mask, page, conn)
        .await?
        .ok()
}

/// The mask's query string; a repeated `state` (`state=a&state=b`) counts as one
/// comma-separated list (`state=a,b`).
fn mask_params(query: &str) -> Result<MaskParams, Problem> {
    let pairs = Query::<Vec<(String, String)>>::parse(query)?;
    if pairs.iter().filter(|(name, _)| name == "state").count() < 2 {
        return Query::<MaskParams>::parse(query);
    }
    let states: Vec<&str> = pairs
        .iter()
        .filter(|(name, _)| name == "state")
        .map(|(_, value)| value.as_str())
        .collect();
    let mut merged: Vec<(&str, String)> = pairs
        .iter()
        .filter(|(name, _)| name != "state")
        .map(|(name, value)| (name.as_str(), value.clone()))
        .collect();
    merged.push(("state", states.join(",")));
    let query = serde_urlencoded::to_string(&merged)
        .map_err(|e| Problem::invalid_parameter("state", e.to_string()))?;
    Query::<MaskParams>::parse(&query)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DetailParams {
    /// `true` adds the incident's history (oldest first); default `false`.
    pub include_history: Option<bool>,
}

/// The incident's forms, its `version` (also the `ETag`), and its history on request.
///
/// `If-None-Match` with the `ETag` answers 304 until the incident is written again.
#[utoipa::path(get, path = "/incident/{id}", tag = "incidents",
    params(("id" = i64, Path, description = "incident id"), DetailParams, IfNoneMatchHeader),
    responses((status = 200, body = IncidentDetail,
        headers(("ETag" = String, description = "the incident's version, quoted"),
            ("Cache-Control" = String, description = "`private, no-cache`: revalidate on every use"))),
        (status = 304, description = "`If-None-Match` names the incident's current version: no body")))]
pub async fn detail(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    params: Query<DetailParams>,
    cached: IfNoneMatch,
) -> Reply {
    let id = id.0;
    let conn = state.pool.get().await?;
    let incident = if params.0.include_history == Some(true) {
        // Both statements in one pipeline: one round trip.
        let (incident, history) =
            try_join!(incidents::detail(&conn, id), incidents::history(&conn, id))?;
        incident.map(|i| IncidentDetail {
            history: Some(history),
            ..i
        })
    } else {
        incidents::detail(&conn, id).await?
    };
    let incident = incident.ok_or_else(|| Refusal::not_found("incident", id))?;
    let version = incident.version;
    record(&state, &user, AccessRoute::Detail, incident, conn)
        .await?
        .versioned(&cached, version)
}

/// Prank calls recorded for a phone (URL-encoded, any spelling: `+55 12 99100-4321`,
/// `(12) 99100-4321` and `12991004321` are one caller), newest first.
#[utoipa::path(get, path = "/incident/prank-calls/{phone_number}", tag = "incidents",
    params(("phone_number" = String, Path, description = "the caller's phone, URL-encoded")),
    responses((status = 200, body = PrankCalls)))]
pub async fn prank_calls(
    state: web::Data<AppState>,
    user: CurrentUser,
    phone: Path<String>,
) -> Reply {
    let phone = Phone::parse(&phone.0)
        .map_err(|e| Problem::invalid_parameter("phone_number", e.to_string()))?;
    let conn = state.pool.get().await?;
    let calls = incidents::prank_calls(&conn, &phone.key()).await?;
    record(&state, &user, AccessRoute::PrankCalls, calls, conn)
        .await?
        .ok()
}
