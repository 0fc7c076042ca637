//! `/shared/default-values` and its deprecated predecessor `/shared/possible-values`.

use actix_web::{HttpResponse, web};

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
#[utoipa::path(get, path = "/shared/default-values", tag = "shared",
    responses((status = 200, body = DefaultValues)))]
pub async fn default_values(state: web::Data<AppState>, user: CurrentUser) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    Ok(HttpResponse::Ok().json(DefaultValues {
        user: me(&user),
        profile: user.profile,
        lookups: catalog.lookups(),
    }))
}

/// Deprecated alias kept during the client's migration: the default values plus
/// `employee` (every active employee); `open_incident` is gone.
#[utoipa::path(get, path = "/shared/possible-values", tag = "shared",
    responses((status = 200, body = PossibleValues,
        headers(("Deprecation" = String, description = "`true`"),
                ("Link" = String, description = "`</shared/default-values>; rel=\"successor-version\"`")))))]
#[deprecated = "use /shared/default-values"]
pub async fn possible_values(state: web::Data<AppState>, user: CurrentUser) -> Reply {
    let catalog = state.catalog.get(&state.pool).await?;
    let conn = state.pool.get().await?;
    let employee = users::all_active_employees(&conn).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Deprecation", "true"))
        .insert_header((
            "Link",
            "</shared/default-values>; rel=\"successor-version\"",
        ))
        .json(PossibleValues {
            user: me(&user),
            profile: user.profile,
            lookups: catalog.lookups(),
            employee,
        }))
}
