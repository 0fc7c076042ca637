//! The access log as its route reads it (docs/dispatch-access-log.md).

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::access::AccessRoute;

use super::people::UserOption;

/// One read of an incident's patient data: who, which incident, through which route, when.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct AccessEntry {
    pub at: DateTime<Utc>,
    pub user: UserOption,
    pub incident_id: i64,
    pub incident_number: String,
    /// The route read, as its method and path pattern: `GET /incident/{id}/regulation`.
    pub route: AccessRoute,
}

/// A page of the access log, oldest first; `truncated` when more entries matched than the
/// page holds (narrow `from`/`to`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccessLogPage {
    pub entries: Vec<AccessEntry>,
    pub truncated: bool,
}
