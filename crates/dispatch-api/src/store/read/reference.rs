//! Reference data and the fleet lists as the reads show them (docs/dispatch-routes.md).

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::people::{RefOption, UserOption};
use crate::domain::dispatch::Status;

/// `GET /professional-type`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProfessionalTypeView {
    pub id: i32,
    pub name: String,
    pub active: bool,
}

/// `GET /mobile-unit-type`: admin screens need inactive types and the flag.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MobileUnitTypeView {
    pub id: i32,
    pub name: String,
    pub description: String,
    pub active: bool,
}

/// `GET /mobile-unit`: the fleet list of the manage-fleet screen.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MobileUnitView {
    pub id: i64,
    pub name: String,
    pub plate: String,
    pub base: String,
    pub active: bool,
    pub vehicle_type: RefOption,
}

/// `GET /mobile-unit/options`: one option of the "Select a mobile unit" field, as the spec
/// plans it. Whether the unit is free is a filter (`available=true`), not a field; the fleet
/// board (`GET /mobile-unit/board`) shows each unit's dispatch.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MobileUnitOption {
    pub id: i64,
    pub name: String,
}

/// An incident as another record names it: id and number.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IncidentRef {
    pub id: i64,
    pub number: String,
}

/// The dispatch a unit is on now (not released).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CurrentDispatch {
    /// The dispatch's id (for `POST /dispatch/{id}/status`).
    pub id: i64,
    /// `assigned`, `en_route`, `on_scene`, `transporting`, `at_destination` or
    /// `handed_over`.
    pub status: Status,
    pub assigned_at: DateTime<Utc>,
    pub incident: IncidentRef,
}

/// `GET /mobile-unit/board`: one active unit of the fleet board.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FleetBoardUnit {
    pub id: i64,
    pub name: String,
    pub base: String,
    pub vehicle_type: RefOption,
    /// The dispatch the unit is on, or null when the unit is free.
    #[schema(required = true)]
    pub dispatch: Option<CurrentDispatch>,
}

/// `GET /health-unit`: the patient destination field.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HealthUnitOption {
    pub id: i64,
    pub name: String,
    pub city: String,
    pub uf: String,
}

/// One entry of `GET /unallocated`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnallocatedEntry {
    pub id: i64,
    pub user: UserOption,
    #[schema(required = true)]
    pub professional_type: Option<RefOption>,
    pub reason: String,
    pub since: DateTime<Utc>,
}

/// The small lists the screens load once, at start.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Lookups {
    /// Active vehicle types only (`GET /mobile-unit-type?active=true`, the spec's path).
    pub vehicle_types: Vec<RefOption>,
    /// Active, not deleted.
    pub technical_decision_actions: Vec<RefOption>,
    /// Active, not deleted.
    pub intercurrences: Vec<RefOption>,
    /// Active types only, name order: the Occurrence form's `occurrence_type` takes one's
    /// `name`, and any other value is refused (400 naming the field and the allowed values).
    pub occurrence_types: Vec<RefOption>,
    /// Active types only.
    pub professional_types: Vec<RefOption>,
}
