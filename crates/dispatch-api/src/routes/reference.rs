//! Reference lists and staff: `/health-unit`, `/technical-decision-action`,
//! `/technical-decision/incident/{id}`, `/intercurrence`, `/professional-type`, `/unallocated`.

use actix_web::web;
use common::Problem;
use common::db::db_error;
use common::extract::{Path, Query};
use serde::Deserialize;
use tokio::try_join;
use utoipa::IntoParams;

use super::{Reply, conn, not_found, ok};
use crate::auth::CurrentUser;
use crate::routes::fleet::ActiveOnlyParams;
use crate::search::SearchParams;
use crate::startup::AppState;
use crate::store::{incidents, reference};
use crate::views::*;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/health-unit", web::get().to(health_units))
        .route(
            "/technical-decision-action",
            web::get().to(decision_actions),
        )
        .route(
            "/technical-decision/incident/{id}",
            web::get().to(decisions_of_incident),
        )
        .route("/intercurrence", web::get().to(intercurrences))
        .route("/professional-type", web::get().to(professional_types))
        .route("/unallocated", web::get().to(unallocated));
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
    ok(&catalog.search_health_units(&search))
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

/// Intercurrences, active and not deleted only.
#[utoipa::path(get, path = "/intercurrence", tag = "reference",
    responses((status = 200, body = Vec<RefOption>)))]
pub async fn intercurrences(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    ok(&state.catalog.get(&state.pool).await?.intercurrences)
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

/// The technical decisions of an incident, oldest first.
#[utoipa::path(get, path = "/technical-decision/incident/{id}", tag = "incidents",
    params(("id" = i64, Path, description = "incident id")),
    responses((status = 200, body = Vec<TechnicalDecisionView>)))]
pub async fn decisions_of_incident(
    state: web::Data<AppState>,
    _user: CurrentUser,
    id: Path<i64>,
) -> Reply {
    let (id, conn) = (id.0, conn(&state).await?);
    let (exists, decisions) = try_join!(
        incidents::exists(&conn, id),
        incidents::decisions(&conn, id)
    )
    .map_err(db_error)?;
    if !exists {
        return Err(not_found("incident", id));
    }
    ok(&decisions)
}

/// Largest `page_size` of `/unallocated` (CONTRACT) and deepest page accepted.
const MAX_PAGE_SIZE: i64 = 100;
const MAX_PAGE: i64 = 10_000;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UnallocatedParams {
    /// 1..=10000, default 1.
    pub page: Option<i64>,
    /// 1..=100, default 20.
    pub page_size: Option<i64>,
    /// `false` leaves the caller's own entry out; default `true`.
    pub include_self: Option<bool>,
}

/// Active staff not allocated to a post, in name order, one page with the total.
#[utoipa::path(get, path = "/unallocated", tag = "reference",
    params(UnallocatedParams),
    responses((status = 200, body = UnallocatedPage)))]
pub async fn unallocated(
    state: web::Data<AppState>,
    user: CurrentUser,
    params: Query<UnallocatedParams>,
) -> Reply {
    let p = params.0;
    let page = p.page.unwrap_or(1);
    if !(1..=MAX_PAGE).contains(&page) {
        return Err(Problem::invalid_parameter(
            "page",
            format!("must be between 1 and {MAX_PAGE}"),
        ));
    }
    let page_size = p.page_size.unwrap_or(20);
    if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(Problem::invalid_parameter(
            "page_size",
            format!("must be between 1 and {MAX_PAGE_SIZE}"),
        ));
    }
    let exclude = (p.include_self == Some(false)).then_some(user.id);
    let conn = conn(&state).await?;
    let (items, total) = reference::unallocated_page(&conn, exclude, page, page_size)
        .await
        .map_err(db_error)?;
    ok(&UnallocatedPage {
        items,
        page,
        page_size,
        total,
    })
}
