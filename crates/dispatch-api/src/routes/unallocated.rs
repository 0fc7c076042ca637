//! `GET /unallocated`: active staff not allocated to a post.

use actix_web::web;
use common::Problem;
use common::extract::Query;
use serde::Deserialize;
use utoipa::IntoParams;

use super::{Reply, Routes, ok};
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::store::reference;
use crate::views::UnallocatedPage;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_unallocated, unallocated);
}

/// Largest `page_size` of `/unallocated` (docs/dispatch-routes.md, "Routes") and deepest page accepted.
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
        )
        .into());
    }
    let page_size = p.page_size.unwrap_or(20);
    if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(Problem::invalid_parameter(
            "page_size",
            format!("must be between 1 and {MAX_PAGE_SIZE}"),
        )
        .into());
    }
    let exclude = (p.include_self == Some(false)).then_some(user.id);
    let conn = state.pool.get().await?;
    let (items, total) = reference::unallocated_page(&conn, exclude, page, page_size).await?;
    ok(&UnallocatedPage {
        items,
        page,
        page_size,
        total,
    })
}
