//! HTTP only: extract, authorise, call the store, answer. A route's path finds its file:
//! the URL's first segment names the module (`/incident/...` is `incident/`, `/user/...`
//! is `user.rs`). Each module lists its routes once, in its `routes` function; that one
//! list registers them with actix and puts them in the OpenAPI document (`openapi.rs`).

pub mod access_log;
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
pub mod phone_credentials;
pub mod professional_type;
pub mod recorded;
pub mod reports;
pub mod response_targets;
pub mod shared;
pub mod team;
pub mod technical_decision;
pub mod technical_decision_action;
pub mod telephony;
pub mod unallocated;
pub mod user;
pub mod ws;

use actix_web::{HttpResponse, web};
pub use common::routes::Routes;
use diesel_async::AsyncPgConnection;

use crate::error::Error;
use crate::patient_data::NoPatientData;
use crate::search::{Search, SearchParams};
use crate::state::AppState;

pub type Reply = Result<HttpResponse, Error>;

/// 200 with a view that carries no patient data; a patient view is answered through
/// [`recorded::record`] instead.
pub fn ok<T: NoPatientData + ?Sized>(body: &T) -> Reply {
    #[allow(clippy::disallowed_methods)]
    let res = HttpResponse::Ok().json(body);
    Ok(res)
}

/// 200 with `ETag: "<version>"`, the incident's version: the `If-Match` value its writes
/// require (docs/dispatch-routes.md, "Caching and revalidation"). Every screen that carries
/// an incident's version answers with it (through [`recorded::Recorded::with_etag`]: every
/// such screen carries patient data).
fn with_etag(version: i32) -> actix_web::HttpResponseBuilder {
    let mut res = HttpResponse::Ok();
    res.insert_header((actix_web::http::header::ETAG, format!("\"{version}\"")));
    res
}

/// As [`ok`], for a body already serialised: the same `Content-Type`.
pub fn ok_json(body: Vec<u8>) -> Reply {
    Ok(HttpResponse::Ok()
        .insert_header((
            actix_web::http::header::CONTENT_TYPE,
            actix_web::http::header::HeaderValue::from_static("application/json"),
        ))
        .body(body))
}

/// A search route's answer: `params` checked (400 naming the parameter), then `run` on a
/// connection.
pub async fn searched<T: NoPatientData>(
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
    team::routes(r);
    response_targets::routes(r);
    reports::routes(r);
    access_log::routes(r);
    phone_credentials::routes(r);
    telephony::routes(r);
    // `/ws` upgrades to the socket that `realtime` runs.
    r.add(ws::__path_ws, ws::ws);
}

/// Registers every route with actix.
pub fn configure(cfg: &mut web::ServiceConfig) {
    routes(&mut Routes::app(cfg));
}
