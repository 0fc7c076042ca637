//! HTTP only: extract, authorise, call the store, answer. A route's path finds its file:
//! the URL's first segment names the module (`/incident/...` is `incident/`, `/user/...`
//! is `user.rs`). Each module lists its routes once, in its `routes` function; that one
//! list registers them with actix and puts them in the OpenAPI document (`openapi.rs`).

pub mod cache;
pub mod commit;
pub mod dispatch;
pub mod employee;
pub mod extract;
pub mod health_unit;
pub mod incident;
pub mod intercurrence;
pub mod mobile_unit;
pub mod mobile_unit_type;
pub mod professional_type;
pub mod shared;
pub mod technical_decision;
pub mod technical_decision_action;
pub mod unallocated;
pub mod user;

use actix_web::dev::Handler;
use actix_web::http::Method;
use actix_web::{FromRequest, HttpResponse, Responder, web};
use diesel_async::AsyncPgConnection;
use serde::Serialize;
use utoipa::openapi::path::{HttpMethod, PathItem, Paths};
use utoipa::openapi::{RefOr, Schema};

use crate::error::Error;
use crate::search::{Search, SearchParams};
use crate::state::AppState;

pub type Reply = Result<HttpResponse, Error>;

pub fn ok<T: Serialize>(body: &T) -> Reply {
    Ok(HttpResponse::Ok().json(body))
}

/// A search route's answer: `params` checked (400 naming the parameter), then `run` on a
/// connection.
pub async fn searched<T: Serialize>(
    state: &AppState,
    params: SearchParams,
    run: impl AsyncFnOnce(&AsyncPgConnection, &Search) -> Result<T, diesel::result::Error>,
) -> Reply {
    let search = params.check()?;
    let conn = state.pool.get().await?;
    ok(&run(&conn, &search).await?)
}

/// Every route of the dispatch API, in registration order: literal segments come before
/// `{id}` ones.
pub fn routes(r: &mut Routes<'_>) {
    user::routes(r);
    employee::routes(r);
    shared::routes(r);
    incident::routes(r);
    mobile_unit::routes(r);
    mobile_unit_type::routes(r);
    dispatch::routes(r);
    health_unit::routes(r);
    technical_decision_action::routes(r);
    technical_decision::routes(r);
    intercurrence::routes(r);
    professional_type::routes(r);
    unallocated::routes(r);
    // `/ws` upgrades to the socket that `realtime` runs.
    r.add(crate::realtime::ws::__path_ws, crate::realtime::ws::ws);
}

/// Registers every route with actix.
pub fn configure(cfg: &mut web::ServiceConfig) {
    routes(&mut Routes::app(cfg));
}

/// Where a route goes: the app (when there is one) and the OpenAPI paths and schemas.
pub struct Routes<'a> {
    cfg: Option<&'a mut web::ServiceConfig>,
    pub paths: Paths,
    pub schemas: Vec<(String, RefOr<Schema>)>,
}

impl<'a> Routes<'a> {
    pub fn app(cfg: &'a mut web::ServiceConfig) -> Self {
        Self {
            cfg: Some(cfg),
            paths: Paths::new(),
            schemas: Vec::new(),
        }
    }

    /// No app: only the document.
    pub fn document() -> Routes<'static> {
        Routes {
            cfg: None,
            paths: Paths::new(),
            schemas: Vec::new(),
        }
    }

    /// One route: its `#[utoipa::path]` (`__path_<handler>`) gives its method, path and
    /// OpenAPI operation; `handler` serves it.
    pub fn add<'t, P, H, Args>(&mut self, _doc: P, handler: H) -> &mut Self
    where
        P: utoipa::Path + utoipa::__dev::SchemaReferences + utoipa::__dev::Tags<'t>,
        H: Handler<Args>,
        Args: FromRequest + 'static,
        H::Output: Responder + 'static,
    {
        let path = P::path();
        for method in P::methods() {
            if let Some(cfg) = self.cfg.as_deref_mut() {
                cfg.route(
                    &path,
                    web::method(actix_method(&method)).to(handler.clone()),
                );
            }
            let mut operation = P::operation();
            let tags = P::tags();
            if !tags.is_empty() {
                operation
                    .tags
                    .get_or_insert_with(Vec::new)
                    .extend(tags.into_iter().map(str::to_owned));
            }
            self.paths.merge(
                Paths::builder()
                    .path(&path, PathItem::new(method, operation))
                    .build(),
            );
        }
        P::schemas(&mut self.schemas);
        self
    }
}

fn actix_method(m: &HttpMethod) -> Method {
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
