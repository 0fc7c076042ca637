//! `GET /reports/response-times`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::times::GroupBy;
use crate::store::read::{ReportGroup, TargetView};

/// `GET /reports/response-times`: per group and phase, the phases measured in the range.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResponseTimesReport {
    /// Calls received at or after this moment ...
    pub from: DateTime<Utc>,
    /// ... and before this one.
    pub to: DateTime<Utc>,
    #[schema(required = true)]
    pub group_by: Option<GroupBy>,
    /// The centre's time zone: the hours and days of `group_by=hour|day`.
    pub time_zone: String,
    /// Calls received in the range (each counted once, whatever its phases).
    pub incidents: i64,
    pub groups: Vec<ReportGroup>,
    /// The targets the shares were judged against (as they are now).
    pub targets: Vec<TargetView>,
    /// The telephone: the calls that rang in the range (docs/dispatch-telephony.md).
    pub telephone: super::TelephoneReport,
}
