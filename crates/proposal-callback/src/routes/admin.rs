//! Operators' routes, scoped to the admin token's tenant.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use common::Problem;
use common::extract::{Json, Path, Query};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::extract::TenantAdmin;
use crate::error::Error;
use crate::proposal::pause::{self, RESUME_MAX, process};
use crate::proposal::replay::{REPLAY_DEFAULT, REPLAY_MAX, replay_matching};
use crate::proposal::status::ReceiptStatus;
use crate::registration::config::Environment;
use crate::registration::flow;
use crate::routes::{CallbackResult, callback_answer};
use crate::state::AppState;
use crate::store::integrations::{self, IntegrationRow};
use crate::store::receipts::{self, ReceiptFilter, ReceiptRow};
use crate::store::registration_attempts::{self, AttemptRow};

#[derive(Debug, Deserialize, IntoParams)]
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

/// The receipt status a query names, or 400 listing the ones there are.
fn receipt_status(raw: Option<&str>) -> Result<Option<ReceiptStatus>, Error> {
    raw.map(|s| {
        ReceiptStatus::parse(s).ok_or_else(|| {
            let all: Vec<_> = ReceiptStatus::ALL.iter().map(|s| s.as_str()).collect();
            Problem::invalid_parameter("status", format!("must be one of {}", all.join(", ")))
                .into()
        })
    })
    .transpose()
}

/// An insurer a filter names, or 400 listing the ones there are.
fn known_insurer(field: &str, raw: Option<String>) -> Result<Option<String>, Error> {
    match raw {
        Some(i) if !crate::insurer::INSURERS.contains(&i.as_str()) => {
            Err(Problem::invalid_parameter(
                field,
                format!("must be one of {}", crate::insurer::INSURERS.join(", ")),
            )
            .into())
        }
        other => Ok(other),
    }
}

/// `limit` within `1..=max`, `default` when absent, or 400 naming it.
pub(crate) fn limit(raw: Option<i64>, default: i64, max: i64) -> Result<i64, Error> {
    let limit = raw.unwrap_or(default);
    if (1..=max).contains(&limit) {
        Ok(limit)
    } else {
        Err(Problem::invalid_parameter("limit", format!("must be between 1 and {max}")).into())
    }
}

/// A stored callback as an operator sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptView {
    pub id: i64,
    pub insurer: String,
    pub received_at: DateTime<Utc>,
    pub status: ReceiptStatus,
    /// What to show in one column: the error code of a failed receipt (`proposal_not_found`,
    /// `invalid_transition`, ...), its status otherwise.
    #[schema(example = "proposal_not_found")]
    pub outcome: String,
    /// The answer's HTTP status (202 for `deferred`); null while `received`.
    pub http_status: Option<i16>,
    pub error_code: Option<String>,
    /// Why it failed, as the insurer was told.
    pub error_detail: Option<String>,
    /// The proposal it concerned, when the body names one (also for a body that failed).
    pub proposal_id: Option<String>,
    /// The insurer's event time, once the body was read.
    pub event_at: Option<DateTime<Utc>>,
    /// How many times it was processed (live, swept, replayed).
    pub attempts: i32,
    /// When its last outcome was recorded.
    pub processed_at: Option<DateTime<Utc>>,
    /// The headers kept (never `Authorization`).
    pub headers: serde_json::Value,
    /// The body exactly as received (invalid UTF-8 replaced).
    pub body: String,
}

impl From<ReceiptRow> for ReceiptView {
    fn from(r: ReceiptRow) -> Self {
        Self {
            id: r.id,
            insurer: r.insurer,
            received_at: r.received_at,
            status: r.status,
            outcome: match (&r.error_code, r.status) {
                (Some(code), ReceiptStatus::Failed) => code.clone(),
                _ => r.status.as_str().to_owned(),
            },
            http_status: r.http_status,
            error_code: r.error_code,
            error_detail: r.error_detail,
            proposal_id: r.proposal_id,
            event_at: r.event_at,
            attempts: r.attempts,
            processed_at: r.processed_at,
            headers: r.headers,
            body: String::from_utf8_lossy(&r.body).into_owned(),
        }
    }
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
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn list_receipts(
    admin: TenantAdmin,
    Query(q): Query<ReceiptQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let filter = ReceiptFilter {
        status: receipt_status(q.status.as_deref())?,
        code: q.code,
        insurer: known_insurer("insurer", q.insurer)?,
        proposal_id: q.proposal_id,
        since: q.since,
    };
    let limit = limit(q.limit, 50, 200)?;
    let mut conn = state.pool.get().await?;
    let rows = receipts::list(&mut conn, &admin.tenant, &filter, q.before_id, limit).await?;
    let next_before_id = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    Ok(HttpResponse::Ok().json(ReceiptPage {
        items: rows.into_iter().map(ReceiptView::from).collect(),
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
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found` (receipt) or `proposal_not_found`"),
        (status = 409, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
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
    let receipt = receipts::find(&mut conn, &admin.tenant, id)
        .await?
        .ok_or(Error::ReceiptNotFound(id))?;
    let result = process(&mut conn, &state.clock, &receipt).await;
    callback_answer(&receipt.tenant_id, &receipt.insurer, result)
}

/// An integration as its tenant's admin sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct IntegrationView {
    pub id: i64,
    /// `porto`, `tokio` or `too`.
    #[schema(example = "porto")]
    pub insurer: String,
    /// `homologation` or `production`: which of the insurer's URLs registration uses.
    #[schema(example = "homologation")]
    pub environment: Environment,
    /// True once the insurer accepted our callback registration (HTTP 200).
    pub is_callback_active: bool,
    /// When the insurer last accepted it.
    pub callback_registered_at: Option<DateTime<Utc>>,
    /// Since when it is paused (its callbacks are stored and answered 202 `deferred`); null
    /// when it is not.
    pub paused_at: Option<DateTime<Utc>>,
    /// The last RegisterCallback attempt and how it ended; null before the first.
    pub last_registration: Option<RegistrationAttemptView>,
}

/// One RegisterCallback attempt and how it ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegistrationAttemptView {
    /// When it was asked for.
    pub started_at: DateTime<Utc>,
    /// When its outcome was recorded.
    pub finished_at: DateTime<Utc>,
    /// `registered`, or the error code: `insurer_rejected`, `insurer_timeout`,
    /// `insurer_unreachable`, `insurer_error`, `not_configured`, `registration_superseded`.
    #[schema(example = "insurer_rejected")]
    pub outcome: String,
    /// The insurer's HTTP status when it answered (200 when registered); null when it did
    /// not answer or was not called.
    #[schema(example = 503)]
    pub insurer_status: Option<i16>,
    /// Why it failed, as the operator was told; null when registered.
    pub detail: Option<String>,
    /// Who asked for it (the admin token's `sub`).
    #[schema(example = "operator")]
    pub requested_by: String,
}

impl From<AttemptRow> for RegistrationAttemptView {
    fn from(a: AttemptRow) -> Self {
        Self {
            started_at: a.started_at,
            finished_at: a.finished_at,
            outcome: a.outcome,
            insurer_status: a.insurer_status,
            detail: a.detail,
            requested_by: a.admin,
        }
    }
}

impl IntegrationView {
    pub fn new(r: IntegrationRow, last_registration: Option<AttemptRow>) -> Self {
        Self {
            id: r.id,
            insurer: r.insurer,
            environment: r.environment,
            is_callback_active: r.is_callback_active,
            callback_registered_at: r.callback_registered_at,
            paused_at: r.paused_at,
            last_registration: last_registration.map(RegistrationAttemptView::from),
        }
    }

    /// The integration with its last registration attempt read from the database.
    pub async fn load(
        conn: &mut diesel_async::AsyncPgConnection,
        r: IntegrationRow,
    ) -> Result<Self, Error> {
        let last = registration_attempts::latest(conn, r.id).await?;
        Ok(Self::new(r, last))
    }

    /// The tenant's integrations, by id, each with its last registration attempt.
    pub async fn list(
        conn: &mut diesel_async::AsyncPgConnection,
        tenant: &str,
    ) -> Result<Vec<Self>, Error> {
        let rows = integrations::list(conn, tenant).await?;
        let mut last = registration_attempts::latest_of_tenant(conn, tenant).await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let attempt = last.remove(&r.id);
                Self::new(r, attempt)
            })
            .collect())
    }
}

/// The admin's tenant's integrations, by id.
#[utoipa::path(
    get,
    path = "/admin/integrations",
    tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, body = Vec<IntegrationView>),
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
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
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
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
    let integration = flow::register_detached(
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

/// What a bulk replay did.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReplayReport {
    /// Receipts processed again.
    pub replayed: usize,
    /// How many ended with each outcome: `processed`, `duplicate`, `unchanged`, `stale`,
    /// `ignored`, `deferred`, or the error code of one that failed again.
    #[schema(example = json!({"processed": 3, "duplicate": 1, "proposal_not_found": 2}))]
    pub outcomes: BTreeMap<String, usize>,
    /// More receipts match: send the same filter with this as `after_id`. Null when done.
    pub next_after_id: Option<i64>,
}

/// Replay every stored receipt of the tenant that matches a filter, oldest first, with the
/// live rules: each is applied at most once (one that was applied answers `duplicate`
/// again), in the order it arrived; a paused integration's are deferred. At most 500 per call.
#[utoipa::path(
    post,
    path = "/admin/receipts/replay",
    tag = "admin",
    security(("bearer" = [])),
    request_body(content = ReplayRequest, content_type = "application/json"),
    responses(
        (status = 200, body = ReplayReport),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_payload` or `invalid_parameter` naming the field"),
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 415, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "database unavailable: the receipts replayed until then keep their new outcome; send it again"),
    )
)]
pub async fn replay_many(
    admin: TenantAdmin,
    Json(body): Json<ReplayRequest>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let filter = ReceiptFilter {
        status: body.status,
        code: body.code,
        insurer: known_insurer("insurer", body.insurer)?,
        proposal_id: body.proposal_id,
        since: body.since,
    };
    let limit = limit(body.limit, REPLAY_DEFAULT, REPLAY_MAX)?;
    // On a task of its own: an operator who hangs up does not stop it half way.
    let report = actix_web::rt::spawn(async move {
        let mut conn = state.pool.get().await?;
        replay_matching(
            &mut conn,
            &state.clock,
            &admin.tenant,
            &filter,
            body.after_id,
            limit,
        )
        .await
    })
    .await
    .map_err(|e| Error::Internal(format!("the replay task failed: {e}")))??;
    Ok(HttpResponse::Ok().json(ReplayReport {
        replayed: report.replayed,
        outcomes: report.outcomes,
        next_after_id: report.next_after_id,
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
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
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

/// What a resume did.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResumeReport {
    /// The integration afterwards: `paused_at` is null unless `remaining` > 0.
    pub integration: IntegrationView,
    /// Deferred callbacks applied by this call.
    pub applied: usize,
    /// How many ended with each outcome (`processed`, `duplicate`, ..., or an error code).
    #[schema(example = json!({"processed": 50}))]
    pub outcomes: BTreeMap<String, usize>,
    /// Deferred callbacks still waiting (a call applies at most 1000): resume again.
    pub remaining: i64,
}

/// Resume a paused integration: its deferred callbacks are applied in the order they arrived,
/// each exactly once, then the pause ends. Callbacks arriving meanwhile wait their turn.
/// Safe to call from several places at once; resuming an integration that is not paused
/// changes nothing.
#[utoipa::path(
    post,
    path = "/admin/integrations/{id}/resume",
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "integration id")),
    responses(
        (status = 200, body = ResumeReport),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 403, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "not an admin, or another tenant's integration"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: no such integration"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "database unavailable: the callbacks applied until then stay applied, the rest stay deferred; resume again"),
    )
)]
pub async fn resume_integration(
    admin: TenantAdmin,
    Path(id): Path<i64>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let sub = admin.sub.clone();
    // On a task of its own: an operator who hangs up does not stop it half way.
    let pool = state.pool.clone();
    let clock = state.clock.clone();
    let resumed = actix_web::rt::spawn(async move {
        let mut conn = pool.get().await?;
        pause::resume(&mut conn, &clock, &admin.tenant, id, RESUME_MAX).await
    })
    .await
    .map_err(|e| Error::Internal(format!("the resume task failed: {e}")))??;
    let applied = resumed.outcomes.values().sum();
    tracing::info!(integration = id, admin = %sub, applied, remaining = resumed.remaining, "integration resumed");
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(ResumeReport {
        integration: IntegrationView::load(&mut conn, resumed.integration).await?,
        applied,
        outcomes: resumed.outcomes,
        remaining: resumed.remaining,
    }))
}
