//! Reference data and the fleet lists as the reads show them (docs/dispatch-routes.md).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
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
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct IncidentRef {
    pub id: i64,
    pub number: String,
}

/// The dispatch a unit is on now (not released).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct CurrentDispatch {
    /// The dispatch's id (for `POST /dispatch/{id}/status`).
    pub id: i64,
    /// `assigned`, `en_route`, `on_scene`, `transporting`, `at_destination` or
    /// `handed_over`.
    pub status: Status,
    pub assigned_at: DateTime<Utc>,
    pub incident: IncidentRef,
}

/// `GET /mobile-unit/board`: one active unit of the fleet board, as its row reads; the
/// `unit` of a `unit.step` message is this too (docs/dispatch-realtime.md, "The fleet
/// board").
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct FleetBoardUnit {
    pub id: i64,
    pub name: String,
    pub base: String,
    pub vehicle_type: RefOption,
    /// The dispatch the unit is on, or null when the unit is free.
    #[schema(required = true)]
    pub dispatch: Option<CurrentDispatch>,
    /// When the unit entered its dispatch's current step (the latest of its step times);
    /// null when free.
    #[schema(required = true)]
    pub step_since: Option<DateTime<Utc>>,
}

/// `unit.step` (WebSocket queue `fleet`): a unit took a step of its dispatch, and the
/// unit as the fleet board shows it after the step, so a board applies it without reading
/// itself again. No patient data: ids, names of units, types and bases, the incident's
/// number and times.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct UnitStep {
    /// The step: `assigned` (a dispatch), `en_route`, `on_scene`, `transporting`,
    /// `at_destination`, `handed_over` or `released` (the unit is free again).
    pub step: Status,
    /// When the unit took it: the dispatch's `<step>_at`.
    pub at: DateTime<Utc>,
    /// The dispatch that moved (also when `released`, where `unit.dispatch` is null).
    pub dispatch_id: i64,
    /// The unit's row of `GET /mobile-unit/board` after the step, but for `position` and
    /// `seconds_in_step` (a step moves neither the unit's reported position nor its base;
    /// the seconds count from `step_since` on the client's clock).
    pub unit: FleetBoardUnit,
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
