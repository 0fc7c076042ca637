//! HTTP only: extract, authorise, call the domain, map the answer. [`routes`] lists every
//! route once, for both the `App` and the OpenAPI document.

pub mod admin;
pub mod auth;
pub mod callback;

use actix_web::{HttpResponse, web};
use common::routes::Routes;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::OpenApi;

use crate::error::Error;
use crate::metrics;
use crate::proposal::apply::Processed;
use crate::proposal::status::{Outcome, Status};

/// Every route of the service, each listed once: registered at the method and path its
/// `#[utoipa::path]` declares, with that operation in the OpenAPI document. (`__path_<fn>` is
/// the operation `#[utoipa::path]` generates for the handler `<fn>`.)
fn routes(r: &mut Routes<'_>) {
    r.add(auth::__path_token, auth::token)
        .add(callback::__path_receive, callback::receive)
        .add(admin::__path_list_receipts, admin::list_receipts)
        .add(admin::__path_replay, admin::replay)
        .add(admin::__path_list_integrations, admin::list_integrations)
        .add(admin::__path_register_callback, admin::register_callback);
}

/// Registers the routes on the service's `App`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    routes(&mut Routes::app(cfg));
}

/// Adds the routes' operations, and the schemas they refer to, to `openapi`.
pub fn document(openapi: &mut OpenApi) {
    routes(&mut Routes::document(openapi));
}

/// The 200 answer to a callback (and to a replay).
#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackResult {
    pub result: Outcome,
    /// The proposal's id as the tenant knows it; absent for `ignored`.
    #[schema(example = "POR-2026-000123", nullable = false)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
    /// The proposal's status after this callback; absent for `ignored`.
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

/// The answer to a callback or a replay, counted under `tenant` and `insurer`: its `result`,
/// or the error's code.
fn callback_answer(
    tenant: &str,
    insurer: &str,
    result: Result<Processed, Error>,
) -> Result<HttpResponse, Error> {
    let outcome = match &result {
        Ok(p) => p.outcome.as_str(),
        Err(e) => e.code(),
    };
    metrics::count_callback(tenant, insurer, outcome);
    Ok(HttpResponse::Ok().json(CallbackResult::from(result?)))
}
