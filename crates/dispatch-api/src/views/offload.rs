//! `GET /health-unit/offload` and the `offload` queue's WebSocket messages
//! (docs/dispatch-realtime.md, "Hospital offload").

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::dispatch::Status;
use crate::store::read::{HealthUnitOption, HoldStats, IncidentRef, UnitAtDoor};

/// One hospital of `GET /health-unit/offload`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HospitalOffload {
    /// Null: units at a door whose incident names no destination.
    #[schema(required = true)]
    pub health_unit: Option<HealthUnitOption>,
    /// Longest held first.
    pub at_door: Vec<UnitAtDoor>,
    pub today: HoldStats,
}

/// `GET /health-unit/offload`: the stretcher holds, hospital by hospital.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OffloadBoard {
    pub at: DateTime<Utc>,
    /// Midnight of today in the centre's time zone: where "today" begins.
    pub today_from: DateTime<Utc>,
    pub time_zone: String,
    /// Hospitals with a unit at the door (longest hold first), then those with holds today.
    pub hospitals: Vec<HospitalOffload>,
}

/// A unit at a hospital's door, as both offload messages name it (and as the board's
/// `at_door` does: `dispatch_id`, `incident {id, number}`, `mobile_unit {id, name}`,
/// `at_destination_at`).
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema, PartialEq)]
pub struct OffloadHold {
    pub dispatch_id: i64,
    pub incident: IncidentRef,
    pub mobile_unit: OffloadUnit,
    /// Where it waits (the dispatch's own destination, else the patient's); null: none.
    #[schema(required = true)]
    pub health_unit: Option<OffloadUnit>,
    pub at_destination_at: DateTime<Utc>,
}

/// `offload.alert` (WebSocket queue `offload`): a unit held at a hospital's door past the
/// `hospital_hold` target.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema, PartialEq)]
pub struct OffloadAlert {
    #[serde(flatten)]
    pub hold: OffloadHold,
    pub target_seconds: i32,
    pub alerted_at: DateTime<Utc>,
}

/// `offload.cleared`: the unit alerted for is off the door.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema, PartialEq)]
pub struct OffloadCleared {
    #[serde(flatten)]
    pub hold: OffloadHold,
    /// `handed_over` (the hospital took the patient) or `released` (without a recorded
    /// hand-over).
    pub by: Status,
    pub cleared_at: DateTime<Utc>,
    /// At the door from arrival to `cleared_at`.
    pub held_seconds: f64,
}

/// A unit or a hospital as an offload message names it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema, PartialEq)]
pub struct OffloadUnit {
    pub id: i64,
    pub name: String,
}
