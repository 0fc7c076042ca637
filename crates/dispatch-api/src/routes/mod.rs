//! HTTP only: extract, authorise, call the store, map to a response. One module per
//! resource; a route's path finds its file.

pub mod employees;
pub mod fleet;
pub mod incidents;
pub mod reference;
pub mod shared;
pub mod users;
pub mod writes;

use actix_web::{HttpResponse, web};
use common::Problem;
use common::db::{self, Conn};
use serde::Serialize;

use crate::auth::Profile;
use crate::startup::AppState;

pub type Reply = Result<HttpResponse, Problem>;

/// Every route of the dispatch API. Literal segments come before `{id}` ones.
pub fn configure(cfg: &mut web::ServiceConfig) {
    users::configure(cfg);
    employees::configure(cfg);
    shared::configure(cfg);
    incidents::configure(cfg);
    fleet::configure(cfg);
    reference::configure(cfg);
    writes::configure(cfg);
}

pub fn ok<T: Serialize>(body: &T) -> Reply {
    Ok(HttpResponse::Ok().json(body))
}

pub async fn conn(state: &AppState) -> Result<Conn, Problem> {
    db::conn(&state.pool).await
}

pub fn not_found(what: &str, id: i64) -> Problem {
    Problem::not_found(format!("{what} {id} does not exist"))
}

/// Who may call the screen routes of CONTRACT §1 ("who" column).
pub const FLEET: &[Profile] = &[Profile::OperadorFrota];
pub const REGULATOR: &[Profile] = &[Profile::MedicoRegulador];
pub const FLEET_OR_REGULATOR: &[Profile] = &[Profile::OperadorFrota, Profile::MedicoRegulador];
pub const REGULATOR_OR_TARM: &[Profile] = &[Profile::MedicoRegulador, Profile::Tarm];
