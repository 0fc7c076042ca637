//! HTTP only: extract, authorise, call the domain, map the answer. [`routes`] lists every
//! route once, for both the `App` and the OpenAPI document.

pub mod admin;
pub mod auth;
pub mod callback;

use actix_web::http::Method;
use actix_web::{FromRequest, Handler, HttpResponse, Responder, web};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::HttpMethod;
use utoipa_actix_web::OpenApiFactory;

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
    routes(&mut Routes {
        cfg: Some(cfg),
        openapi: None,
    });
}

/// Adds the routes' operations, and the schemas they refer to, to `openapi`.
pub fn document(openapi: &mut OpenApi) {
    routes(&mut Routes {
        cfg: None,
        openapi: Some(openapi),
    });
}

/// Where [`routes`] puts each route: the `App`, or the document.
struct Routes<'a> {
    cfg: Option<&'a mut web::ServiceConfig>,
    openapi: Option<&'a mut OpenApi>,
}

impl Routes<'_> {
    fn add<P, F, Args>(&mut self, operation: P, handler: F) -> &mut Self
    where
        P: utoipa::Path + OpenApiFactory,
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        if let Some(cfg) = self.cfg.as_deref_mut() {
            for method in P::methods() {
                cfg.route(
                    &P::path(),
                    web::method(http_method(method)).to(handler.clone()),
                );
            }
        }
        if let Some(openapi) = self.openapi.as_deref_mut() {
            openapi.paths.merge(operation.paths());
            let mut schemas = Vec::new();
            operation.schemas(&mut schemas);
            openapi
                .components
                .get_or_insert_with(Default::default)
                .schemas
                .extend(schemas);
        }
        self
    }
}

fn http_method(m: HttpMethod) -> Method {
    match m {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
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
