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

/// What became of a position sent (docs/dispatch-routes.md, "Positions and a
/// recommendation").
#[derive(Debug, Clone, Copy, Serialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PositionOutcome {
    /// The position sent is the unit's latest now.
    Recorded,
    /// A position recorded later was already kept: the one sent changed nothing, and the
    /// answer is the kept one.
    OlderThanKept,
}

/// `POST /mobile-unit/{id}/position`'s answer: the unit's latest position now (the one sent,
/// or the one kept when it is newer), and what became of the one sent.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PositionRecorded {
    pub mobile_unit_id: i64,
    /// `recorded`, or `older_than_kept` (ignored: `location`, `recorded_at` and
    /// `received_at` are the kept position's).
    pub outcome: PositionOutcome,
    /// The `recorded_at` of the position sent.
    pub sent_recorded_at: DateTime<Utc>,
    pub location: Location,
    pub recorded_at: DateTime<Utc>,
    pub received_at: DateTime<Utc>,
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
