//! `/user`, `/user/search`, `/user/{id}`.

use actix_web::web;
use common::extract::{Path, Query};

use super::{Reply, Routes, ok, searched};
use crate::domain::Refusal;
use crate::domain::user::CurrentUser;
use crate::search::SearchParams;
use crate::state::AppState;
use crate::store::users;
use crate::views::{UserOption, UserRecord};

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_list, list)
        .add(__path_search, search)
        .add(__path_get, get);
}

/// Every user, in name order. `name` (the login) only for ADMIN callers.
#[utoipa::path(get, path = "/user", tag = "users",
    responses((status = 200, body = Vec<UserRecord>)))]
pub async fn list(state: web::Data<AppState>, user: CurrentUser) -> Reply {
    let conn = state.pool.get().await?;
    ok(&users::all(&conn, user.is_admin()).await?)
}

/// One user. `name` (the login) only for ADMIN callers.
#[utoipa::path(get, path = "/user/{id}", tag = "users",
    params(("id" = i64, Path, description = "user id")),
    responses((status = 200, body = UserRecord)))]
pub async fn get(state: web::Data<AppState>, user: CurrentUser, id: Path<i64>) -> Reply {
    let conn = state.pool.get().await?;
    let record = users::by_id(&conn, id.0, user.is_admin()).await?;
    ok(&record.ok_or_else(|| Refusal::not_found("user", id.0))?)
}

/// "Send to" candidates: active regulating physicians matching `q`, best match first; never
/// the caller.
#[utoipa::path(get, path = "/user/search", tag = "users",
    params(SearchParams),
    responses((status = 200, body = Vec<UserOption>)))]
pub async fn search(
    state: web::Data<AppState>,
    user: CurrentUser,
    params: Query<SearchParams>,
) -> Reply {
    searched(&state, params.0, async |c, s| {
        users::search_regulators(c, s, user.id).await
    })
    .await
}
