//! Operators' routes, scoped to the admin token's tenant.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use common::extract::{Json, Path, Query};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::domain::status::ReceiptStatus;
use crate::error::Error;
use crate::flow::pause::{self, RESUME_MAX};
use crate::flow::preview::Effect;
use crate::flow::registration;
use crate::flow::replay::{
    REPLAY_DEFAULT, REPLAY_MAX, preview_matching, replay_matching, replay_one,
};
use crate::query::integrations::IntegrationView;
use crate::query::receipts::{self, ReceiptView};
use crate::routes::extract::TenantAdmin;
use crate::routes::{CallbackResult, callback_answer, limit};
use crate::state::AppState;
use crate::store::receipts::ReceiptFilter;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ReceiptQuery {
    /// The receipt's outcome: `received`, `deferred`, `processed`, `duplicate`, `unchanged`,
    /// `stale`, `ignored` or `failed`; all when absent.
    #[param(value_type = Option<ReceiptStatus>)]
    pub status: Option<String>,
    /// The error code of a failed receipt, e.g. `proposal_not_found`, `invalid_transition`,
    /// `missing_field`.
    #[param(example = "proposal_not_found")]
    pub code: Option<String>,
    /// `porto`, `tokio` or `too`.
    pub insurer: Option<String>,
    /// The proposal the receipt concerned (as the tenant knows it).
    #[param(example = "99121")]
    pub proposal_id: Option<String>,
    /// Only receipts received at or after this time (RFC 3339, e.g. `2026-11-20T00:00:00Z`).
    pub since: Option<DateTime<Utc>>,
    /// 1..=200, default 50.
    pub limit: Option<i64>,
    /// Paging: only receipts with a smaller id (pass the last page's `next_before_id`).
    pub before_id: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptPage {
    pub items: Vec<ReceiptView>,
    /// Pass as `before_id` for the next page; null on the last.
    pub next_before_id: Option<i64>,
}

/// The tenant's stored callbacks, newest first, filtered by outcome, error code, insurer,
/// proposal and time.
#[utoipa::path(
    get,
    path = "/admin/receipts",
    tag = "admin",
    security(("bearer" = [])),
    params(ReceiptQuery),
    responses(
        (status = 200, body = ReceiptPage),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn list_receipts(
    admin: TenantAdmin,
    Query(q): Query<ReceiptQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let filter = ReceiptFilter {
        status: receipts::status(q.status.as_deref())?,
        code: q.code,
        insurer: receipts::insurer(q.insurer)?,
        proposal_id: q.proposal_id,
        since: q.since,
        up_to_id: None,
    };
    let limit = limit(q.limit, 50, 200)?;
    let mut conn = state.pool.get().await?;
    let items = receipts::list(&mut conn, &admin.tenant, &filter, q.before_id, limit).await?;
    let next_before_id = (items.len() as i64 == limit)
        .then(|| items.last().map(|r| r.id))
        .flatten();
    Ok(HttpResponse::Ok().json(ReceiptPage {
        items,
        next_before_id,
    }))
}

/// Process a stored receipt again, with the same rules as a live callback (deferred again
/// while its integration is paused).
#[utoipa::path(
    post,
    path = "/admin/receipts/{id}/replay",
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "receipt id")),
    responses(
        (status = 200, body = CallbackResult),
        (status = 202, body = CallbackResult, description = "`deferred`: its integration is paused"),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_parameter`: the receipt id is not a positive integer"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found` (receipt) or `proposal_not_found`"),
        (status = 409, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_transition`, or `body_erased`: the receipt's raw body was erased past its tenant's retention, so nothing is left to process (the receipt keeps its outcome)"),
        (status = 422, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn replay(
    admin: TenantAdmin,
    Path(id): Path<i64>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let mut conn = state.pool.get().await?;
    callback_answer(replay_one(&mut conn, &state.clock, &admin.tenant, id).await)
}

/// The admin's tenant's integrations, by id.
#[utoipa::path(
    get,
    path = "/admin/integrations",
    tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, body = Vec<IntegrationView>),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn list_integrations(
    admin: TenantAdmin,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(IntegrationView::list(&mut conn, &admin.tenant).await?))
}

/// RegisterCallback: register this integration's callback endpoint with its insurer.
///
/// A new Basic token is sent in `tokenApi` to the insurer's registration route of the
/// integration's environment. Only the insurer's 200 activates it (replacing the previous
/// token) and sets `is_callback_active`; otherwise nothing changes and the answer is 502.
#[utoipa::path(
    post,
    path = "/admin/integrations/{id}/register-callback",
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "integration id")),
    responses(
        (status = 200, body = IntegrationView, description = "the insurer accepted the registration"),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "not an admin, or another tenant's integration"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: no such integration"),
        (status = 409, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`registration_in_progress` (see Retry-After) or `registration_superseded`"),
        (status = 502, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_configured`, `insurer_rejected` (the insurer's status in `detail`), `insurer_timeout`, `insurer_unreachable` or `insurer_error`; nothing was changed"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn register_callback(
    admin: TenantAdmin,
    Path(id): Path<i64>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let integration = registration::register_detached(
        state.pool.clone(),
        state.registrar.clone(),
        state.clock.clone(),
        admin.tenant,
        admin.sub,
        id,
    )
    .await?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(IntegrationView::load(&mut conn, integration).await?))
}

/// Which receipts a bulk replay processes again. Every field narrows the set; with none, every
/// receipt of the tenant, oldest first, `limit` at a time.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayRequest {
    /// The receipts' outcome, e.g. `failed`.
    pub status: Option<ReceiptStatus>,
    /// The error code of failed receipts, e.g. `proposal_not_found`.
    #[schema(example = "proposal_not_found")]
    pub code: Option<String>,
    /// `porto`, `tokio` or `too`.
    #[schema(example = "porto")]
    pub insurer: Option<String>,
    /// Receipts of one proposal.
    pub proposal_id: Option<String>,
    /// Receipts received at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Paging: only receipts with a larger id (the last answer's `next_after_id`).
    pub after_id: Option<i64>,
    /// 1..=500, default 100.
    pub limit: Option<i64>,
}

/// `?dry_run=true` on a repair: answer what it would do, and do nothing.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DryRunQuery {
    /// `true`: run it in a transaction that is rolled back and answer what it would do
    /// (nothing is written, no email queued, nothing counted). Default `false`.
    pub dry_run: Option<bool>,
}

/// What a bulk replay did (or, with `dry_run`, would do).
#[derive(Debug, Serialize, ToSchema)]
pub struct ReplayReport {
    /// True when nothing was done: a preview.
    pub dry_run: bool,
    /// Receipts processed again.
    pub replayed: usize,
    /// How many ended with each outcome: `processed`, `duplicate`, `unchanged`, `stale`,
    /// `ignored`, `deferred`, or the error code of one that failed again.
    #[schema(example = json!({"processed": 3, "duplicate": 1, "proposal_not_found": 2}))]
    pub outcomes: BTreeMap<String, usize>,
    /// More receipts match: send the same filter with this as `after_id`. Null when done.
    pub next_after_id: Option<i64>,
    /// Each receipt, oldest first: its proposal, the proposal's status before and after,
    /// how it ended and whether an email was (would be) queued.
    pub items: Vec<Effect>,
}

/// Replay every stored receipt of the tenant that matches a filter, oldest first, with the
/// live rules: each is applied at most once (one that was applied answers `duplicate`
/// again), in the order it arrived; a paused integration's are deferred. At most 500 per call.
/// With `dry_run=true`, the same run is rolled back: the answer says what it would do now.
#[utoipa::path(
    post,
    path = "/admin/receipts/replay",
    tag = "admin",
    security(("bearer" = [])),
    params(DryRunQuery),
    request_body(content = ReplayRequest, content_type = "application/json"),
    responses(
        (status = 200, body = ReplayReport),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_payload` or `invalid_parameter` naming the field"),
        (status = 415, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "database unavailable: the receipts replayed until then keep their new outcome; send it again"),
    )
)]
pub async fn replay_many(
    admin: TenantAdmin,
    Query(q): Query<DryRunQuery>,
    Json(body): Json<ReplayRequest>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let filter = ReceiptFilter {
        status: body.status,
        code: body.code,
        insurer: receipts::insurer(body.insurer)?,
        proposal_id: body.proposal_id,
        since: body.since,
        up_to_id: None,
    };
    let limit = limit(body.limit, REPLAY_DEFAULT, REPLAY_MAX)?;
    let dry_run = q.dry_run.unwrap_or(false);
    // On a task of its own: an operator who hangs up does not stop it half way.
    let report = actix_web::rt::spawn(async move {
        let mut conn = state.pool.get().await?;
        let (clock, tenant) = (&state.clock, &admin.tenant);
        if dry_run {
            preview_matching(&mut conn, clock, tenant, &filter, body.after_id, limit).await
        } else {
            replay_matching(&mut conn, clock, tenant, &filter, body.after_id, limit).await
        }
    })
    .await
    .map_err(|e| Error::Internal(format!("the replay task failed: {e}")))??;
    Ok(HttpResponse::Ok().json(ReplayReport {
        dry_run,
        replayed: report.replayed,
        outcomes: report.outcomes,
        next_after_id: report.next_after_id,
        items: report.effects,
    }))
}

/// Pause an integration: from now on its callbacks are stored and answered 202
/// `{"result": "deferred"}`, and applied in arrival order when it is resumed. Answers once no
/// callback of it is being applied. Pausing a paused integration changes nothing.
#[utoipa::path(
    post,
    path = "/admin/integrations/{id}/pause",
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "integration id")),
    responses(
        (status = 200, body = IntegrationView, description = "the integration, paused (`paused_at` set)"),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "not an admin, or another tenant's integration"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: no such integration"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn pause_integration(
    admin: TenantAdmin,
    Path(id): Path<i64>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let mut conn = state.pool.get().await?;
    let row = pause::pause(&mut conn, &state.clock, &admin.tenant, id).await?;
    tracing::info!(integration = id, admin = %admin.sub, "integration paused");
    Ok(HttpResponse::Ok().json(IntegrationView::load(&mut conn, row).await?))
}

/// What a resume did (or, with `dry_run`, would do).
#[derive(Debug, Serialize, ToSchema)]
pub struct ResumeReport {
    /// True when nothing was done: a preview.
    pub dry_run: bool,
    /// The integration afterwards: `paused_at` is null unless `remaining` > 0 (in a preview,
    /// the integration as it is, still paused).
    pub integration: IntegrationView,
    /// Deferred callbacks applied by this call.
    pub applied: usize,
    /// How many ended with each outcome (`processed`, `duplicate`, ..., or an error code).
    #[schema(example = json!({"processed": 50}))]
    pub outcomes: BTreeMap<String, usize>,
    /// Deferred callbacks still waiting (a call applies at most 1000): resume again.
    pub remaining: i64,
    /// Each deferred callback, in the order applied: its proposal, the proposal's status
    /// before and after, how it ended and whether an email was (would be) queued.
    pub items: Vec<Effect>,
}

/// Resume a paused integration: its deferred callbacks are applied in the order they arrived,
/// each exactly once, then the pause ends. Callbacks arriving meanwhile wait their turn.
/// Safe to call from several places at once; resuming an integration that is not paused
/// changes nothing. With `dry_run=true`, the deferred callbacks are applied in a transaction
/// that is rolled back: the answer says what the resume would do now, and the integration
/// stays paused.
#[utoipa::path(
    post,
    path = "/admin/integrations/{id}/resume",
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "integration id"), DryRunQuery),
    responses(
        (status = 200, body = ResumeReport),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "not an admin, or another tenant's integration"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: no such integration"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "database unavailable: the callbacks applied until then stay applied, the rest stay deferred; resume again"),
    )
)]
pub async fn resume_integration(
    admin: TenantAdmin,
    Path(id): Path<i64>,
    Query(q): Query<DryRunQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let sub = admin.sub.clone();
    let dry_run = q.dry_run.unwrap_or(false);
    // On a task of its own: an operator who hangs up does not stop it half way.
    let pool = state.pool.clone();
    let clock = state.clock.clone();
    let resumed = actix_web::rt::spawn(async move {
        let mut conn = pool.get().await?;
        if dry_run {
            pause::preview_resume(&mut conn, &clock, &admin.tenant, id, RESUME_MAX).await
        } else {
            pause::resume(&mut conn, &clock, &admin.tenant, id, RESUME_MAX).await
        }
    })
    .await
    .map_err(|e| Error::Internal(format!("the resume task failed: {e}")))??;
    let applied = resumed.outcomes.values().sum();
    if !dry_run {
        tracing::info!(integration = id, admin = %sub, applied, remaining = resumed.remaining, "integration resumed");
    }
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(ResumeReport {
        dry_run,
        integration: IntegrationView::load(&mut conn, resumed.integration).await?,
        applied,
        outcomes: resumed.outcomes,
        remaining: resumed.remaining,
        items: resumed.effects,
    }))
}
