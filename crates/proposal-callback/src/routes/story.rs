//! What an operator reads without psql: a proposal's whole story and the tenant's emails
//! (docs/proposal-callback.md, "Operators"), read through `query::story`. A listing is newest
//! first (it pages backwards).

use actix_web::{HttpResponse, web};
use common::extract::{Path, Query};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::Error;
use crate::flow::email_worker;
use crate::query::story::{EmailView, ProposalStory};
use crate::routes::extract::TenantAdmin;
use crate::routes::limit;
use crate::state::AppState;
use crate::store::outbox::{self, Delivery};

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
    let row = email_worker::retry(&mut conn, &state.clock, &admin.tenant, id).await?;
    Ok(HttpResponse::Ok().json(EmailView::from(row)))
}
