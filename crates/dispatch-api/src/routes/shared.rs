//! `/shared/default-values` and its deprecated predecessor `/shared/possible-values`.

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::web;

use super::cache::IfNoneMatch;
use super::{Reply, Routes};
use crate::domain::user::CurrentUser;
use crate::state::AppState;
use crate::store::users;
use crate::views::{DefaultValues, PossibleValues, UserOption};

// The alias is deprecated on purpose and still served.
#[allow(deprecated)]
pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_default_values, default_values)
        .add(__path_possible_values, possible_values);
}

fn me(user: &CurrentUser) -> UserOption {
    UserOption {
        id: user.id,
        descriptive_name: user.descriptive_name.clone(),
    }
}

/// The caller (from the token) and the small lookup lists the screens load once. Served
/// from memory: no database work beyond authenticating the caller.
///
/// Kept by the client for its session; `If-None-Match` with the `ETag` answers 304.
#[utoipa::path(get, path = "/shared/default-values", tag = "shared",
    params(super::cache::IfNoneMatchHeader),
    responses((status = 200, body = DefaultValues, headers(
            ("ETag" = String, description = "a digest of the body"),
            ("Cache-Control" = String, description = "`private, max-age=43200`: keep it for the session"))),
        (status = 304, description = "`If-None-Match` names the current `ETag`: no body")))]
pub async fn default_values(
    state: web::Data<AppState>,
    user: CurrentUser,
    cached: IfNoneMatch,
) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    cached.lookup(&DefaultValues {
        user: me(&user),
        profile: user.profile,
        lookups: catalog.lookups(),
    })
}

/// Deprecated alias kept during the client's migration: the default values plus
/// `employee` (every active employee); `open_incident` is gone.
#[utoipa::path(get, path = "/shared/possible-values", tag = "shared",
    params(super::cache::IfNoneMatchHeader),
    responses((status = 200, body = PossibleValues,
        headers(("Deprecation" = String, description = "`true`"),
                ("Link" = String, description = "`</shared/default-values>; rel=\"successor-version\"`"),
                ("ETag" = String, description = "a digest of the body"),
                ("Cache-Control" = String, description = "`private, max-age=43200`: keep it for the session"))),
        (status = 304, description = "`If-None-Match` names the current `ETag`: no body")))]
#[deprecated = "use /shared/default-values"]
pub async fn possible_values(
    state: web::Data<AppState>,
    user: CurrentUser,
    cached: IfNoneMatch,
) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    let conn = state.pool.get().await?;
    let employee = users::all_active_employees(&conn).await?;
    let mut res = cached.lookup(&PossibleValues {
        user: me(&user),
        profile: user.profile,
        lookups: catalog.lookups(),
        employee,
    })?;
    let headers = res.headers_mut();
    headers.insert(
        HeaderName::from_static("deprecation"),
        HeaderValue::from_static("true"),
    );
    headers.insert(
        HeaderName::from_static("link"),
        HeaderValue::from_static("</shared/default-values>; rel=\"successor-version\""),
    );
    Ok(res)
}
