//! `/employee/user_id/{id}`, `/employee/search`.

use actix_web::web;
use common::extract::{Path, Query};
use serde::Deserialize;
use utoipa::IntoParams;

use super::{Reply, Routes, ok};
use crate::domain::Refusal;
use crate::domain::user::CurrentUser;
use crate::search::Search;
use crate::state::AppState;
use crate::store::users;
use crate::views::{EmployeeOption, EmployeeRecord};

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_search, search).add(__path_of_user, of_user);
}

/// The employee record of a user.
#[utoipa::path(get, path = "/employee/user_id/{id}", tag = "employees",
    params(("id" = i64, Path, description = "user id")),
    responses((status = 200, body = EmployeeRecord)))]
pub async fn of_user(state: web::Data<AppState>, _user: CurrentUser, id: Path<i64>) -> Reply {
    let conn = state.pool.get().await?;
    let employee = users::employee_of(&conn, id.0).await?;
    ok(&employee
        .ok_or_else(|| Refusal::NotFound(format!("user {} has no employee record", id.0)))?)
}

/// `/employee/search` keeps the spec's parameter name `query`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EmployeeSearchParams {
    /// Part of the name, any case, accents optional; at most 100 characters.
    pub query: Option<String>,
    /// 1..20, default 20.
    pub limit: Option<i64>,
    /// >= 0, default 0.
    pub offset: Option<i64>,
}

/// "Transfer to" candidates: active employees matching `query`, as `{id: user id,
/// descriptive_name, team, professional_type}`, best match first, at most 20; never the
/// caller.
#[utoipa::path(get, path = "/employee/search", tag = "employees",
    params(EmployeeSearchParams),
    responses((status = 200, body = Vec<EmployeeOption>)))]
pub async fn search(
    state: web::Data<AppState>,
    user: CurrentUser,
    params: Query<EmployeeSearchParams>,
) -> Reply {
    let p = params.0;
    let search = Search::new("query", p.query, p.limit, p.offset)?;
    let conn = state.pool.get().await?;
    ok(&users::search_employees(&conn, &search, user.id).await?)
}
