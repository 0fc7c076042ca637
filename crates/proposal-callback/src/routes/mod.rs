//! HTTP only: extract, authorise, call a flow or a query, map the answer. [`routes`] lists
//! every route once, for both the `App` and the OpenAPI document.

pub mod admin;
pub mod auth;
pub mod callback;
pub mod extract;
pub mod story;
pub mod tenant;

use actix_web::{HttpResponse, web};
use common::Problem;
use common::routes::Routes;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, ResponseBuilder};

use crate::domain::status::{Outcome, Status};
use crate::error::Error;
use crate::flow::apply::Processed;

/// Every route of the service, each listed once: registered at the method and path its
/// `#[utoipa::path]` declares, with that operation in the OpenAPI document. (`__path_<fn>` is
/// the operation `#[utoipa::path]` generates for the handler `<fn>`.)
fn routes(r: &mut Routes<'_>) {
    r.add(auth::__path_token, auth::token)
        .add(callback::__path_receive, callback::receive)
        .add(admin::__path_list_receipts, admin::list_receipts)
        .add(admin::__path_replay_many, admin::replay_many)
        .add(admin::__path_replay, admin::replay)
        .add(admin::__path_list_integrations, admin::list_integrations)
        .add(admin::__path_register_callback, admin::register_callback)
        .add(admin::__path_pause_integration, admin::pause_integration)
        .add(admin::__path_resume_integration, admin::resume_integration)
        .add(story::__path_proposal_story, story::proposal_story)
        .add(story::__path_list_emails, story::list_emails)
        .add(story::__path_retry_email, story::retry_email)
        .add(story::__path_retry_emails, story::retry_emails)
        .add(tenant::__path_get_tenant, tenant::get_tenant)
        .add(tenant::__path_patch_tenant, tenant::patch_tenant)
        .add(tenant::__path_get_sender, tenant::get_sender)
        .add(tenant::__path_put_sender, tenant::put_sender);
}

/// Registers the routes on the service's `App`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    routes(&mut Routes::app(cfg));
}

/// Adds the routes' operations, and the schemas they refer to, to `openapi`.
pub fn document(openapi: &mut OpenApi) {
    routes(&mut Routes::document(openapi));
    admin_errors(openapi);
}

/// What every admin route may answer (the `TenantAdmin` extractor's refusals), added once
/// here to each `/admin/` operation that does not describe it itself.
const ADMIN_ERRORS: [&str; 2] = ["401", "403"];

fn admin_errors(openapi: &mut OpenApi) {
    let problem = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("ProblemDocument")))
        .build();
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.starts_with("/admin/") {
            continue;
        }
        let ops = [
            item.get.as_mut(),
            item.post.as_mut(),
            item.put.as_mut(),
            item.patch.as_mut(),
            item.delete.as_mut(),
        ];
        for op in ops.into_iter().flatten() {
            for status in ADMIN_ERRORS {
                op.responses
                    .responses
                    .entry(status.to_owned())
                    .or_insert_with(|| {
                        ResponseBuilder::new()
                            .content("application/problem+json", problem.clone())
                            .build()
                            .into()
                    });
            }
        }
    }
}

/// The answer to a callback (and to a replay): 200, or 202 for `deferred`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackResult {
    pub result: Outcome,
    /// The proposal's id as the tenant knows it; absent for `ignored` and `deferred`.
    #[schema(example = "POR-2026-000123", nullable = false)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
    /// The proposal's status after this callback; absent for `ignored` and `deferred`.
    #[schema(nullable = false)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

impl From<Processed> for CallbackResult {
    fn from(p: Processed) -> Self {
        Self {
            result: p.outcome,
            proposal_id: p.proposal_id,
            status: p.status,
        }
    }
}

/// The answer to a callback or a replay: 200, or 202 for `deferred` (counted by the caller,
/// `flow::apply::count`).
fn callback_answer(result: Result<Processed, Error>) -> Result<HttpResponse, Error> {
    let processed = result?;
    let mut answer = if processed.outcome == Outcome::Deferred {
        HttpResponse::Accepted()
    } else {
        HttpResponse::Ok()
    };
    Ok(answer.json(CallbackResult::from(processed)))
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
