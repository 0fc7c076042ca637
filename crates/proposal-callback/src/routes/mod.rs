//! HTTP only: extract, authorise, call the domain, map the answer.

pub mod admin;
pub mod auth;
pub mod callback;

use actix_web::{HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::Error;
use crate::metrics;
use crate::proposal::apply::Processed;
use crate::proposal::status::{Outcome, Status};

pub fn configure(cfg: &mut web::ServiceConfig) {
    // `/callback/auth` first: it would otherwise never match before the two-segment route.
    cfg.route("/callback/auth", web::post().to(auth::token))
        .route(
            "/callback/{dsTenantId}/{insuranceCompany}",
            web::post().to(callback::receive),
        )
        .route("/admin/receipts", web::get().to(admin::list_receipts))
        .route("/admin/receipts/{id}/replay", web::post().to(admin::replay))
        .route(
            "/admin/integrations",
            web::get().to(admin::list_integrations),
        )
        .route(
            "/admin/integrations/{id}/register-callback",
            web::post().to(admin::register_callback),
        );
}

/// The 200 answer to a callback (and to a replay).
#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackResult {
    pub result: Outcome,
    /// The proposal's id as the tenant knows it.
    #[schema(example = "POR-2026-000123")]
    pub proposal_id: String,
    /// The proposal's status after this callback.
    pub status: Status,
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
