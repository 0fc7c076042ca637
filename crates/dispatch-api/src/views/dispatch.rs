//! What the dispatch writes answer.

use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::dispatch::Status;

/// What `POST /incident/{id}/dispatch` answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchCreated {
    pub id: i64,
    pub status: Status,
    /// The incident's new version (also the `ETag`).
    pub version: i32,
}

/// What `POST /dispatch/{id}/status` answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchProgress {
    pub id: i64,
    pub status: Status,
    pub incident_id: i64,
    /// The incident's new version (also the `ETag`): a dispatch has none of its own.
    pub version: i32,
}
