//! What an operator reads without psql: a proposal's whole story and the tenant's emails
//! (docs/proposal-callback.md, "Operators"), read through `query::story`. A listing is newest
//! first (it pages backwards).

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use common::extract::{Json, Path, Query};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::Error;
use crate::flow::email_retry;
use crate::query::receipts;
use crate::query::story::{EmailView, ProposalStory};
use crate::routes::admin::DryRunQuery;
use crate::routes::extract::TenantAdmin;
use crate::routes::limit;
use crate::state::AppState;
use crate::store::outbox::{self, Delivery, FailedFilter, FailureKind};

/// A proposal's whole story: status, queue, integration history, events, emails with their
/// delivery state, and the callbacks that named it. Only the token's tenant's proposals.
#[utoipa::path(
    get,
    path = "/admin/proposals/{proposalId}",
    tag = "admin",
    security(("bearer" = [])),
    params(("proposalId" = String, Path, description = "the proposal's id as the tenant knows it")),
    responses(
        (status = 200, body = ProposalStory),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_parameter`: the id holds a NUL character (`%00`)"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`proposal_not_found`: the tenant has no such proposal (another tenant's is not found either)"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn proposal_story(
    admin: TenantAdmin,
    Path(proposal_id): Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(ProposalStory::load(&mut conn, &admin.tenant, proposal_id).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EmailQuery {
    /// `queued`, `failed` or `sent`; all when absent.
    #[param(value_type = Option<Delivery>)]
    pub status: Option<String>,
    /// Only the emails of this proposal.
    pub proposal_id: Option<String>,
    /// 1..=200, default 50.
    pub limit: Option<i64>,
    /// Paging: only emails with a smaller id (pass the last page's `next_before_id`).
    pub before_id: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EmailPage {
    pub items: Vec<EmailView>,
    /// Pass as `before_id` for the next page; null on the last.
    pub next_before_id: Option<i64>,
}

/// The tenant's emails, newest first: `?status=failed` lists the ones the relay refused or
/// never answered (with `last_error` and the next attempt).
#[utoipa::path(
    get,
    path = "/admin/emails",
    tag = "admin",
    security(("bearer" = [])),
    params(EmailQuery),
    responses(
        (status = 200, body = EmailPage),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn list_emails(
    admin: TenantAdmin,
    Query(q): Query<EmailQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let delivery = q
        .status
        .as_deref()
        .map(|s| {
            Delivery::parse(s).ok_or_else(|| {
                let all: Vec<_> = Delivery::ALL.iter().map(|s| s.as_str()).collect();
                common::Problem::invalid_parameter(
                    "status",
                    format!("must be one of {}", all.join(", ")),
                )
            })
        })
        .transpose()?;
    let limit = limit(q.limit, 50, 200)?;
    let mut conn = state.pool.get().await?;
    let rows = outbox::list(
        &mut conn,
        &admin.tenant,
        q.proposal_id.as_deref(),
        delivery,
        q.before_id,
        limit,
    )
    .await?;
    let next_before_id = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    Ok(HttpResponse::Ok().json(EmailPage {
        items: rows.into_iter().map(EmailView::from).collect(),
        next_before_id,
    }))
}

/// Send again an email the relay refused for good (`status` `failed`, with the relay's answer
/// in `last_error`): it goes back to the queue, due now, and keeps its attempts and
/// `Message-ID`; the worker sends it on its next round. Answers the email as it now stands
/// (`retrying`, due now).
#[utoipa::path(
    post,
    path = "/admin/emails/{id}/retry",
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "the email's id (`GET /admin/emails`)")),
    responses(
        (status = 200, body = EmailView),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_parameter`: the id is not an integer"),
        (status = 404, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`not_found`: the tenant has no such email (another tenant's is not found either)"),
        (status = 409, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`email_not_failed`: the email is sent, or still the worker's (`queued`, `retrying`)"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn retry_email(
    admin: TenantAdmin,
    Path(id): Path<i64>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let mut conn = state.pool.get().await?;
    let row = email_retry::retry(&mut conn, &state.clock, &admin.tenant, id).await?;
    Ok(HttpResponse::Ok().json(EmailView::from(row)))
}

/// Which `failed` emails a bulk retry sends again; every field narrows.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailRetryRequest {
    /// The insurer of the transition the email announces: `porto`, `tokio` or `too`.
    #[schema(example = "porto")]
    pub insurer: Option<String>,
    /// Refused at or after this time (RFC 3339).
    pub since: Option<DateTime<Utc>>,
    /// Refused before this time (RFC 3339).
    pub until: Option<DateTime<Utc>>,
    /// What the relay refused: `recipient` (RCPT), `content` (DATA, the message) or `other`.
    #[schema(value_type = Option<FailureKind>)]
    pub failure: Option<FailureKind>,
    /// 1..=500, default 500.
    pub limit: Option<i64>,
}

/// What a bulk retry did (or, with `dry_run`, would do).
#[derive(Debug, Serialize, ToSchema)]
pub struct EmailRetryReport {
    /// True when nothing was done: a preview.
    pub dry_run: bool,
    /// How many emails went back to the queue (would go).
    pub retried: usize,
    /// Their ids, oldest refusal first.
    pub ids: Vec<i64>,
    /// More failed emails match than one call takes: send it again.
    pub more: bool,
}

/// Send again every `failed` email of the tenant that matches a filter (insurer, when it was
/// refused, what was refused): each goes back to the queue, due now, with its attempts and
/// `Message-ID`, and the worker sends them on its next rounds. At most 500 per call. With
/// `dry_run=true` nothing changes: the answer says which it would send again.
#[utoipa::path(
    post,
    path = "/admin/emails/retry",
    tag = "admin",
    security(("bearer" = [])),
    params(DryRunQuery),
    request_body(content = EmailRetryRequest, content_type = "application/json"),
    responses(
        (status = 200, body = EmailRetryReport),
        (status = 400, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "`invalid_payload` or `invalid_parameter` naming the field"),
        (status = 415, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn retry_emails(
    admin: TenantAdmin,
    Query(q): Query<DryRunQuery>,
    Json(body): Json<EmailRetryRequest>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Error> {
    let filter = FailedFilter {
        insurer: receipts::insurer(body.insurer)?,
        since: body.since,
        until: body.until,
        kind: body.failure,
    };
    let limit = limit(body.limit, email_retry::RETRY_MAX, email_retry::RETRY_MAX)?;
    let dry_run = q.dry_run.unwrap_or(false);
    let mut conn = state.pool.get().await?;
    let done = email_retry::retry_many(
        &mut conn,
        &state.clock,
        &admin.tenant,
        &filter,
        limit,
        dry_run,
    )
    .await?;
    if !dry_run {
        tracing::info!(tenant = %admin.tenant, admin = %admin.sub, retried = done.ids.len(), "failed emails retried in bulk");
    }
    Ok(HttpResponse::Ok().json(EmailRetryReport {
        dry_run,
        retried: done.ids.len(),
        ids: done.ids,
        more: done.more,
    }))
}
