//! `/user`, `/user/search`, `/user/{id}`.

use actix_web::web;
use common::extract::{Path, Query};

use super::{Reply, conn, not_found, ok};
use crate::auth::CurrentUser;
use crate::search::SearchParams;
use crate::startup::AppState;
use crate::store::users;
use crate::views::{UserOption, UserRecord};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/user", web::get().to(list))
        .route("/user/search", web::get().to(search))
        .route("/user/{id}", web::get().to(get));
}

/// Every user, in name order. `name` (the login) only for ADMIN callers.
#[utoipa::path(get, path = "/user", tag = "users",
    responses((status = 200, body = Vec<UserRecord>)))]
pub async fn list(state: web::Data<AppState>, user: CurrentUser) -> Reply {
    let conn = conn(&state).await?;
    ok(&users::all(&conn, user.is_admin())
        .await
        .map_err(common::db::db_error)?)
}

/// One user. `name` (the login) only for ADMIN callers.
#[utoipa::path(get, path = "/user/{id}", tag = "users",
    params(("id" = i64, Path, description = "user id")),
    responses((status = 200, body = UserRecord)))]
pub async fn get(state: web::Data<AppState>, user: CurrentUser, id: Path<i64>) -> Reply {
    let conn = conn(&state).await?;
    let record = users::by_id(&conn, id.0, user.is_admin())
        .await
        .map_err(common::db::db_error)?;
    ok(&record.ok_or_else(|| not_found("user", id.0))?)
}

/// "Send to" candidates: active regulating physicians matching `q`, best match first.
#[utoipa::path(get, path = "/user/search", tag = "users",
    params(SearchParams),
    responses((status = 200, body = Vec<UserOption>)))]
pub async fn search(
    state: web::Data<AppState>,
    _user: CurrentUser,
    params: Query<SearchParams>,
) -> Reply {
    let search = params.0.check()?;
    let conn = conn(&state).await?;
    ok(&users::search_regulators(&conn, &search)
        .await
        .map_err(common::db::db_error)?)
}
