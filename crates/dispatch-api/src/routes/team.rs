//! `/team/...`: allocating people to teams and releasing them (docs/dispatch-routes.md,
//! "Managing the fleet and the team"). A released person is listed on `GET /unallocated`.

use actix_web::http::StatusCode;
use actix_web::web;
use common::extract::Path;
use serde::Deserialize;
use utoipa::ToSchema;

use super::{Reply, Routes};
use crate::domain::Refusal;
use crate::domain::form::{Check, NOTES_MAX};
use crate::routes::extract::{FleetOrAdmin, Judge, Post};
use crate::state::AppState;
use crate::store::fleet;
use crate::views::Allocation;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_allocate, allocate)
        .add(__path_release, release);
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocateBody {
    /// The person: a user's `id` (`GET /unallocated` lists who has no team).
    pub user_id: i64,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseBody {
    pub user_id: i64,
    /// Why they leave the team (shown on `GET /unallocated`), 4,000 characters at most, not
    /// blank.
    pub reason: String,
}

impl Judge for AllocateBody {
    type Judged = Self;
    fn judge(self) -> Result<Self, Refusal> {
        Ok(self)
    }
}

impl Judge for ReleaseBody {
    type Judged = Self;
    fn judge(self) -> Result<Self, Refusal> {
        let mut check = Check::default();
        check.text("reason", &self.reason, true, NOTES_MAX);
        check.done()?;
        Ok(self)
    }
}

/// Allocate a person to the team: they leave `GET /unallocated`. 409 `already_allocated`
/// when they are in a team; release them first.
#[utoipa::path(post, path = "/team/{id}/allocate", tag = "fleet", request_body = AllocateBody,
    params(("id" = i32, Path, description = "team id"),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Allocation)))]
pub async fn allocate(
    state: web::Data<AppState>,
    w: Post<FleetOrAdmin, AllocateBody>,
    id: Path<i32>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, by, b| {
        Ok(fleet::allocate(c, by, id.0, b.user_id).await?)
    })
    .await
}

/// Release a person from the team: they are listed on `GET /unallocated` with `reason`
/// from now. 409 `not_allocated` when they are not in this team.
#[utoipa::path(post, path = "/team/{id}/release", tag = "fleet", request_body = ReleaseBody,
    params(("id" = i32, Path, description = "team id"),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Allocation)))]
pub async fn release(
    state: web::Data<AppState>,
    w: Post<FleetOrAdmin, ReleaseBody>,
    id: Path<i32>,
) -> Reply {
    w.commit(&state, StatusCode::OK, async |c, by, b| {
        Ok(fleet::release(c, by, id.0, b.user_id, b.reason).await?)
    })
    .await
}
