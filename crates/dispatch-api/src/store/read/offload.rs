//! The hospitals' stretcher holds as the store reads them (docs/dispatch-routes.md,
//! "Hospital offload").

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::reference::{IncidentRef, MobileUnitOption};

/// A unit at a hospital's door now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnitAtDoor {
    pub dispatch_id: i64,
    pub incident: IncidentRef,
    pub mobile_unit: MobileUnitOption,
    pub at_destination_at: DateTime<Utc>,
    /// From its arrival until now.
    pub held_seconds: f64,
    pub held_minutes: i64,
    /// The `hospital_hold` target of its incident's priority.
    #[schema(required = true)]
    pub target_seconds: Option<i32>,
    pub over_target: bool,
}

/// Today's completed holds at one hospital (arrived since midnight, centre time, and handed
/// over).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct HoldStats {
    pub holds: i64,
    #[schema(required = true)]
    pub p50_seconds: Option<f64>,
    #[schema(required = true)]
    pub p90_seconds: Option<f64>,
    #[schema(required = true)]
    pub max_seconds: Option<f64>,
}
