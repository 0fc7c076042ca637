//! Response times as the store reads them: timelines, targets, the report's groups
//! (docs/dispatch-routes.md, "Response times").

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::dispatch::{DispatchTimes, DispatchedUnit};
use super::people::UserOption;
use super::reference::HealthUnitOption;
use crate::domain::dispatch::Status;
use crate::domain::incident::{Priority, State};
use crate::domain::times::{Interval, Phase, TargetPriority};

/// `GET /incident/{id}/timeline`: every phase of the incident and of each of its units
/// (docs/dispatch-routes.md, "Response times"), judged against the targets of its priority.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IncidentTimeline {
    /// The incident's id (`id`, as every read of an incident names it).
    pub id: i64,
    pub number: String,
    pub state: State,
    #[schema(required = true)]
    pub priority: Option<Priority>,
    pub call_received_at: DateTime<Utc>,
    #[schema(required = true)]
    pub submitted_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub regulated_at: Option<DateTime<Utc>>,
    /// `call_taking`, `regulation`, `activation`, `response`, `total`.
    pub phases: Vec<Interval>,
    /// Each unit, oldest dispatch first.
    pub dispatches: Vec<DispatchTimeline>,
}

/// One unit's phases on the incident.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchTimeline {
    pub id: i64,
    pub status: Status,
    pub mobile_unit: DispatchedUnit,
    pub times: DispatchTimes,
    /// Where the unit takes the patient: the dispatch's own destination, else the patient's
    /// (as every dispatch read says); null: none.
    #[schema(required = true)]
    pub destination: Option<HealthUnitOption>,
    /// `turnout`, `travel`, `on_scene`, `transport`, `hospital_hold`, `return_to_service`.
    pub phases: Vec<Interval>,
}

/// One target of `GET /response-targets`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TargetView {
    pub phase: Phase,
    /// An incident priority, or `any`: every priority without a target of its own.
    pub priority: TargetPriority,
    pub seconds: i32,
    /// Where the value comes from (the default's published practice, or what the
    /// administrator said when setting it).
    pub source: String,
    pub updated_at: DateTime<Utc>,
    /// Who set it; null for the defaults.
    #[schema(required = true)]
    pub updated_by: Option<UserOption>,
}

/// One group of a report: every phase, in order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReportGroup {
    /// The group's value (`critical`, `USA`, a base, a health unit's id, `07`, `2026-11-25`);
    /// null: none (no priority, no unit, no destination) or no grouping.
    #[schema(required = true)]
    pub key: Option<String>,
    /// What the screen shows for it (a health unit's name); the key otherwise.
    #[schema(required = true)]
    pub label: Option<String>,
    pub phases: Vec<PhaseStats>,
}

/// One phase of one group. Only `complete` phases are measured; `missing` and
/// `out_of_order` ones are counted apart and in no percentile.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct PhaseStats {
    pub phase: Phase,
    /// Phases measured (both times recorded, in order).
    pub count: i64,
    /// Median, in seconds (PostgreSQL's `percentile_cont(0.5)`: interpolated).
    #[schema(required = true)]
    pub p50_seconds: Option<f64>,
    /// 90th percentile, in seconds (`percentile_cont(0.9)`).
    #[schema(required = true)]
    pub p90_seconds: Option<f64>,
    #[schema(required = true)]
    pub max_seconds: Option<f64>,
    /// Measured phases that have a target (by their incident's priority).
    pub with_target: i64,
    /// Of those, within it (at most the target).
    pub within_target: i64,
    /// `within_target / with_target`; null when none has a target.
    #[schema(required = true)]
    pub within_target_share: Option<f64>,
    /// A time it needs was not recorded.
    pub missing: i64,
    /// Its end was recorded before its start.
    pub out_of_order: i64,
}

/// `within / with`: a phase's share within its target, null when none has a target.
pub fn within_target_share(within: i64, with: i64) -> Option<f64> {
    (with > 0).then(|| within as f64 / with as f64)
}
