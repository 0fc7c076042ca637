//! Operators' routes, scoped to the admin token's tenant.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use common::Problem;
use common::extract::{Path, Query};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::extract::TenantAdmin;
use crate::error::Error;
use crate::proposal::apply::handle_receipt;
use crate::proposal::status::ReceiptStatus;
use crate::registration::config::Environment;
use crate::registration::flow::{self, Admin};
use crate::routes::{CallbackResult, callback_answer};
use crate::state::AppState;
use crate::store::integrations::{self, IntegrationRow};
use crate::store::receipts::{self, ReceiptRow};

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ReceiptQuery {
    /// `received`, `processed`, `duplicate`, `unchanged`, `stale`, `ignored` or `failed`; all
    /// when absent.
    #[param(value_type = Option<ReceiptStatus>)]
    pub status: Option<String>,
    /// 1..=200, default 50.
    pub limit: Option<i64>,
    /// Paging: only receipts with a smaller id (pass the last page's `next_before_id`).
    pub before_id: Option<i64>,
}

/// A stored callback as an operator sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptView {
    pub id: i64,
    pub insurer: String,
    pub received_at: DateTime<Utc>,
    pub status: ReceiptStatus,
    pub http_status: Option<i16>,
    pub error_code: Option<String>,
    pub error_detail: Option<String>,
    pub proposal_id: Option<String>,
    pub attempts: i32,
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
            http_status: r.http_status,
            error_code: r.error_code,
            error_detail: r.error_detail,
            proposal_id: r.proposal_id,
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

/// The tenant's stored callbacks, newest first.
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
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(ReceiptStatus::parse(s).ok_or_else(|| {
            let all: Vec<_> = ReceiptStatus::ALL.iter().map(|s| s.as_str()).collect();
            Problem::invalid_parameter("status", format!("must be one of {}", all.join(", ")))
        })?),
    };
    let limit = q.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(Problem::invalid_parameter("limit", "must be between 1 and 200").into());
    }
    let mut conn = state.pool.get().await?;
    let rows = receipts::list(&mut conn, &admin.tenant, status, q.before_id, limit).await?;
    let next_before_id = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    Ok(HttpResponse::Ok().json(ReceiptPage {
        items: rows.into_iter().map(ReceiptView::from).collect(),
        next_before_id,
    }))
}

/// Process a stored receipt again, with the same rules as a live callback.
#[utoipa::path(
    post,
    path = "/admin/receipts/{id}/replay",
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "receipt id")),
    responses(
        (status = 200, body = CallbackResult),
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
    let result = handle_receipt(&mut conn, &receipt).await;
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
}

impl From<IntegrationRow> for IntegrationView {
    fn from(r: IntegrationRow) -> Self {
        Self {
            id: r.id,
            insurer: r.insurer,
            environment: r.environment,
            is_callback_active: r.is_callback_active,
            callback_registered_at: r.callback_registered_at,
        }
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
    let rows = integrations::list(&mut conn, &admin.tenant).await?;
    Ok(HttpResponse::Ok().json(
        rows.into_iter()
            .map(IntegrationView::from)
            .collect::<Vec<_>>(),
    ))
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
    // On a task of its own: an admin who disconnects while the insurer is being called does
    // not cancel it, so the insurer's answer is always recorded (and the token never left
    // pending until its lease runs out).
    let task = actix_web::rt::spawn(async move {
        let admin = Admin {
            tenant: &admin.tenant,
            sub: &admin.sub,
        };
        flow::register(&state.pool, &state.registrar, &admin, id).await
    });
    let integration = task
        .await
        .map_err(|e| Error::Internal(format!("the registration task failed: {e}")))??;
    Ok(HttpResponse::Ok().json(IntegrationView::from(integration)))
}
