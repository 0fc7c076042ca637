//! One list of routes per service, registered with actix and with the OpenAPI document at
//! once: each service's `routes::routes(&mut Routes)` calls [`Routes::add`] for every route
//! with the operation `#[utoipa::path]` generates (`__path_<handler>`) and the handler, so a
//! route is declared in one place (docs/architecture.md).

use actix_web::dev::Handler;
use actix_web::http::Method;
use actix_web::{FromRequest, Responder, web};
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::HttpMethod;
use utoipa_actix_web::OpenApiFactory;

/// Where each route goes: the `App` being configured, or the OpenAPI document.
pub struct Routes<'a> {
    cfg: Option<&'a mut web::ServiceConfig>,
    openapi: Option<&'a mut OpenApi>,
}

impl<'a> Routes<'a> {
    /// Routes for the `App`.
    pub fn app(cfg: &'a mut web::ServiceConfig) -> Self {
        Self {
            cfg: Some(cfg),
            openapi: None,
        }
    }

    /// Routes for the document: each operation is merged into `openapi`'s paths, and each
    /// schema it refers to is added unless the document already declares one of that name.
    pub fn document(openapi: &'a mut OpenApi) -> Self {
        Self {
            cfg: None,
            openapi: Some(openapi),
        }
    }

    /// One route: `operation` (`__path_<handler>`) gives its methods, path, OpenAPI operation
    /// and schemas; `handler` serves it.
    pub fn add<P, F, Args>(&mut self, operation: P, handler: F) -> &mut Self
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
            let components = openapi.components.get_or_insert_with(Default::default);
            for (name, schema) in schemas {
                components.schemas.entry(name).or_insert(schema);
            }
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
