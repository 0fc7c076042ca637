//! A unit on an incident: its dispatch and the time of each step.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::people::RefOption;
use super::reference::HealthUnitOption;
use crate::domain::dispatch::Status;

/// The time of each step of a unit on an incident; a skipped step stays null.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchTimes {
    pub assigned_at: DateTime<Utc>,
    #[schema(required = true)]
    pub en_route_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub on_scene_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub transporting_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub at_destination_at: Option<DateTime<Utc>>,
    /// The patient handed to the hospital's team: the end of the stretcher hold.
    #[schema(required = true)]
    pub handed_over_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub released_at: Option<DateTime<Utc>>,
}

/// The unit of a dispatch, with its type.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchedUnit {
    pub id: i64,
    pub name: String,
    pub vehicle_type: RefOption,
}

/// One unit on one incident: `/dispatch/incident/{id}`, `/mobile-unit/incident/{id}` and the
/// screens that show the incident's units.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchView {
    pub id: i64,
    /// `assigned`, `en_route`, `on_scene`, `transporting`, `at_destination`, `handed_over`
    /// or `released`.
    pub status: Status,
    pub mobile_unit: DispatchedUnit,
    pub times: DispatchTimes,
    #[schema(required = true)]
    pub destination: Option<HealthUnitOption>,
}
