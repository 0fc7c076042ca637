//! The incident screens' answers, composed by the routes from the store's read models.

use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::incident::State;
use crate::store::read::{
    DispatchView, IncidentDetail, IncidentFleetSummary, IncidentTimeline, Patient, PrankCalls,
    RecordedIntercurrence, RefOption, TechnicalDecisionView, UserOption,
};

/// `GET /incident/{id}/unit-selection`: the patient and the vehicle of the incident.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnitSelection {
    pub id: i64,
    pub number: String,
    pub state: State,
    pub version: i32,
    pub patient: Patient,
    /// The vehicle type of the latest technical decision.
    #[schema(required = true)]
    pub requested_vehicle_type: Option<RefOption>,
    /// The units on the incident that are not released yet.
    pub active_dispatches: Vec<DispatchView>,
}

/// `GET /incident/{id}/fleet-occurrence`: the whole fleet occurrence screen.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FleetOccurrence {
    pub incident: IncidentFleetSummary,
    /// The caller, to call back (the Basic data form's `caller_name` and `caller_phone`).
    pub caller_name: String,
    pub caller_phone: String,
    /// Who holds the attendance now: the person of the latest "Transfer to"
    /// (`POST /incident/{id}/transfer`), or null.
    #[schema(required = true)]
    pub assigned_to: Option<UserOption>,
    pub patient: Patient,
    #[schema(required = true)]
    pub technical_decision: Option<TechnicalDecisionView>,
    pub dispatches: Vec<DispatchView>,
    pub intercurrences: Vec<RecordedIntercurrence>,
    /// Every phase of the incident and of each unit (as `GET /incident/{id}/timeline`).
    pub response_times: IncidentTimeline,
}

/// `GET /dispatch/bff/dispatch-data/{id}`: the incident and its units.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchData {
    pub incident: IncidentFleetSummary,
    pub dispatches: Vec<DispatchView>,
}

/// `GET /incident/{id}/regulation`: what a regulating physician reads, in one response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegulationDetail {
    pub incident: IncidentDetail,
    pub mobile_units: Vec<DispatchView>,
    pub prank_calls: PrankCalls,
    /// What happened during the attendance, oldest first (as on the fleet occurrence).
    pub intercurrences: Vec<RecordedIntercurrence>,
}

/// `GET /incident/{id}/occurrence-view`: every tab of the occurrence view.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OccurrenceView {
    pub incident: IncidentDetail,
    pub technical_decisions: Vec<TechnicalDecisionView>,
    pub dispatches: Vec<DispatchView>,
    /// What happened during the attendance, oldest first (as on the fleet occurrence).
    pub intercurrences: Vec<RecordedIntercurrence>,
    /// Every phase of the incident and of each unit (as `GET /incident/{id}/timeline`).
    pub response_times: IncidentTimeline,
}
