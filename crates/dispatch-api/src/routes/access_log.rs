//! The access log's two listings (docs/dispatch-access-log.md), for the administrator:
//! `GET /incident/{id}/access-log` (who read this incident) and
//! `GET /user/{id}/access-log?from=&to=` (what this person read), either narrowed to one
//! route (`route=`). Each first waits for this replica's writer to write what it holds, so
//! the reads answered before are listed. What is recorded is `patient_data::AccessRoute`,
//! recorded by `routes::recorded`.

use actix_web::web;
use chrono::{DateTime, TimeDelta, Utc};
use common::Problem;
use common::extract::{Path, Query};
use serde::Deserialize;
use utoipa::IntoParams;

use super::extract::{Admin, Caller};
use super::{Reply, Routes, ok};
use crate::domain::Refusal;
use crate::patient_data::AccessRoute;
use crate::state::AppState;
use crate::store::access_log;
use crate::views::AccessLogPage;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_incident_access_log, incident_access_log)
        .add(__path_user_access_log, user_access_log);
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RouteParams {
    /// Only the reads through this route, as the entries name it
    /// (`GET /incident/{id}/regulation`); default every route.
    #[param(value_type = Option<AccessRoute>)]
    pub route: Option<String>,
}

/// The `route` filter: an unknown route is a 400 naming `route` and the routes there are.
fn route_filter(route: Option<&str>) -> Result<Option<AccessRoute>, Problem> {
    route
        .map(|r| {
            AccessRoute::parse(r).ok_or_else(|| {
                let known: Vec<&str> = AccessRoute::ALL.iter().map(|r| r.as_str()).collect();
                Problem::invalid_parameter("route", format!("must be one of: {}", known.join(", ")))
            })
        })
        .transpose()
}

/// Who read incident `id`'s patient data, through which route and when, oldest first (at
/// most 1,000 entries; `truncated` says when there are more); `route` narrows it to one route.
#[utoipa::path(get, path = "/incident/{id}/access-log", tag = "access log",
    params(("id" = i64, Path, description = "incident id"), RouteParams),
    responses((status = 200, body = AccessLogPage)))]
pub async fn incident_access_log(
    state: web::Data<AppState>,
    _user: Caller<Admin>,
    id: Path<i64>,
    params: Query<RouteParams>,
) -> Reply {
    let route = route_filter(params.0.route.as_deref())?;
    state.access_log.flush().await;
    let conn = state.pool.get().await?;
    if !crate::store::incidents::exists(&conn, id.0).await? {
        return Err(Refusal::not_found("incident", id.0).into());
    }
    ok(&access_log::of_incident(&conn, id.0, route).await?)
}

/// The longest range `GET /user/{id}/access-log` answers at once.
const MAX_RANGE_DAYS: i64 = 31;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UserAccessParams {
    /// Start of the range (RFC 3339, inclusive); default `to` minus one day.
    pub from: Option<DateTime<Utc>>,
    /// End of the range (RFC 3339, exclusive); default now. At most 31 days after `from`.
    pub to: Option<DateTime<Utc>>,
    /// Only the reads through this route, as the entries name it; default every route.
    #[param(value_type = Option<AccessRoute>)]
    pub route: Option<String>,
}

/// What user `id` read in `[from, to)`: each incident, route and time, oldest first (at
/// most 1,000 entries; `truncated` says when there are more); `route` narrows it to one route.
#[utoipa::path(get, path = "/user/{id}/access-log", tag = "access log",
    params(("id" = i64, Path, description = "user id"), UserAccessParams),
    responses((status = 200, body = AccessLogPage)))]
pub async fn user_access_log(
    state: web::Data<AppState>,
    _user: Caller<Admin>,
    id: Path<i64>,
    params: Query<UserAccessParams>,
) -> Reply {
    let route = route_filter(params.0.route.as_deref())?;
    let to = params.0.to.unwrap_or_else(|| state.clock.now());
    let from = params.0.from.unwrap_or(to - TimeDelta::days(1));
    // Both ends named, as every range of the API (docs/dispatch-access-log.md).
    if from >= to {
        return Err(super::reports::range_problem("`from` must be before `to`").into());
    }
    if to - from > TimeDelta::days(MAX_RANGE_DAYS) {
        return Err(super::reports::range_problem(&format!(
            "the range from `from` (default: a day before `to`) to `to` (default: now) must be \
             at most {MAX_RANGE_DAYS} days"
        ))
        .into());
    }
    state.access_log.flush().await;
    let conn = state.pool.get().await?;
    if crate::store::users::caller(&conn, id.0).await?.is_none() {
        return Err(Refusal::not_found("user", id.0).into());
    }
    ok(&access_log::of_user(&conn, id.0, from, to, route).await?)
}
