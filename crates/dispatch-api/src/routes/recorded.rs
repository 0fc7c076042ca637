//! The one way to answer patient data (docs/dispatch-access-log.md): [`record`] records
//! that the caller read each incident the view shows, through which route, and only then
//! yields the [`Recorded`] answer. A patient view ([`PatientData`]) is not accepted by the
//! generic answers (`ok`, `IfNoneMatch`), so a handler that forgets to record does not
//! compile.
//!
//! The answer waits for the entries' commit (group commit, docs/dispatch-access-log.md):
//! [`record`] takes the handler's pooled connection and hands it back before it waits, so the
//! reads waiting for one commit do not hold the pool's connections from the reads that will
//! fill the next.

use actix_web::HttpResponse;
use common::db::Conn;

use super::Reply;
use super::cache::IfNoneMatch;
use crate::domain::user::CurrentUser;
use crate::error::Error;
use crate::patient_data::{AccessRoute, PatientData};
use crate::state::AppState;

/// A patient view whose reads are recorded: only [`record`] makes one.
#[must_use = "a recorded read is answered"]
pub struct Recorded<T>(T);

/// Records that `reader` read, through `route`, every incident `view` shows (one entry
/// each, at the service clock's time), then yields the answer. A view that shows no
/// incident (an empty search) records nothing. `conn`, the connection the view was read on,
/// is handed back to the pool first.
pub async fn record<T: PatientData>(
    state: &AppState,
    reader: &CurrentUser,
    route: AccessRoute,
    view: T,
    conn: Conn,
) -> Result<Recorded<T>, Error> {
    // The read's pooled connection goes back before the wait: the reads waiting for one
    // commit never hold the pool from the reads that fill the next (taken here, so no
    // handler can forget it).
    drop(conn);
    let mut incidents = Vec::new();
    view.incidents(&mut incidents);
    if incidents.len() > 1 {
        // A listing may show an incident twice; one entry each, in the order shown. (A
        // detail, the hot path, shows one and needs no set.)
        let mut seen = std::collections::HashSet::with_capacity(incidents.len());
        incidents.retain(|id| seen.insert(*id));
    }
    let at = state.clock.now();
    // The one call of the writer (clippy.toml): every entry goes through here, and the
    // answer leaves only once they are committed (an error is a 503: nothing is answered).
    #[allow(clippy::disallowed_methods)]
    state
        .access_log
        .record_all(reader.id, &incidents, route.as_str(), at)
        .await?;
    Ok(Recorded(view))
}

impl<T: PatientData> Recorded<T> {
    /// 200 with the view.
    pub fn ok(self) -> Reply {
        #[allow(clippy::disallowed_methods)]
        let res = HttpResponse::Ok().json(self.0);
        Ok(res)
    }

    /// 200 with `ETag: "<version>"`, the incident's version (see `routes::with_etag`).
    pub fn with_etag(self, version: i32) -> Reply {
        #[allow(clippy::disallowed_methods)]
        let res = super::with_etag(version).json(self.0);
        Ok(res)
    }

    /// As `IfNoneMatch::versioned`: 304 while the client's copy is current (recorded all the
    /// same: the client shows it again).
    pub fn versioned(self, cached: &IfNoneMatch, version: i32) -> Reply {
        cached.versioned(version, &self.0)
    }
}
