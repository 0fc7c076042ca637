//! Positions and the fleet and team writes' results (docs/dispatch-routes.md, "Positions and a
//! recommendation", "Managing the fleet and the team").

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::people::{RefOption, UserOption};

/// A point of the map: WGS 84 degrees.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Location {
    /// Latitude, -90..=90.
    pub lat: f64,
    /// Longitude, -180..=180.
    pub lon: f64,
}

/// `POST /mobile-unit/{id}/position`'s answer: the unit's latest position now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PositionRecorded {
    pub mobile_unit_id: i64,
    pub location: Location,
    pub recorded_at: DateTime<Utc>,
    pub received_at: DateTime<Utc>,
    /// `false` when a newer position was already kept (this one was older and is ignored).
    pub latest: bool,
}

/// `PATCH /mobile-unit/{id}`'s answer: the unit as the manage-fleet screen shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ManagedUnit {
    pub id: i64,
    pub name: String,
    pub active: bool,
    pub base: String,
    #[schema(required = true)]
    pub team: Option<RefOption>,
    pub vehicle_type: RefOption,
}

/// A person's allocation: `POST /team/{id}/allocate`, `POST /team/{id}/release`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Allocation {
    pub user: UserOption,
    /// The team they are in now; null once released (they are on `GET /unallocated` then).
    #[schema(required = true)]
    pub team: Option<RefOption>,
}

/// One entry of `GET /mobile-unit/{id}/history`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FleetHistoryEntry {
    pub id: i64,
    /// `updated` (PATCH), `allocated`, `released`.
    pub action: String,
    pub changes: serde_json::Value,
    pub by: UserOption,
    pub at: DateTime<Utc>,
}
