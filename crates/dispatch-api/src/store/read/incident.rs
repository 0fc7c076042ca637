//! An incident as its screens read it: the forms, the history, the mask search's rows,
//! prank calls, technical decisions, intercurrences.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::fleet::Location;
use super::instant::{rfc3339, rfc3339_opt};
use super::people::{RefOption, UserOption};
use super::reference::HealthUnitOption;
use crate::domain::history::HistoryAction;
use crate::domain::incident::{Priority, Sex, State};

/// `GET /incident/mask`: a row of the relate-to picker, of the work queues and of the fleet
/// operator's incident table: enough to recognise an incident and to choose which to work
/// next, without another request per row.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IncidentMaskItem {
    pub id: i64,
    pub number: String,
    pub state: State,
    pub caller_name: String,
    #[schema(required = true)]
    pub patient_name: Option<String>,
    pub address: String,
    pub created_at: DateTime<Utc>,
    /// `low`, `medium`, `high` or `critical`; null until the Occurrence form sets it.
    #[schema(required = true)]
    pub priority: Option<Priority>,
    pub complaint: String,
    /// When the incident entered its current state (`state`): how long it has waited there.
    pub waiting_since: DateTime<Utc>,
    /// The vehicle type of the latest technical decision; null before one, or when it asks
    /// for none.
    #[schema(required = true)]
    pub requested_vehicle_type: Option<RefOption>,
}

/// The "Basic data" form.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BasicData {
    pub caller_name: String,
    pub caller_phone: String,
    pub address: String,
    pub city: String,
    pub complaint: String,
    #[schema(required = true)]
    pub related_incident_id: Option<i64>,
    /// Where the call is, from the client's map (`PUT /incident/{id}/location`), or null.
    #[schema(required = true)]
    pub location: Option<Location>,
}

/// The "Occurrence" form.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Occurrence {
    #[serde(rename = "type")]
    #[schema(required = true)]
    pub occurrence_type: Option<String>,
    /// `low`, `medium`, `high` or `critical`.
    #[schema(required = true)]
    pub priority: Option<Priority>,
    #[schema(required = true)]
    pub notes: Option<String>,
}

/// The "Patient" form.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Patient {
    #[schema(required = true)]
    pub name: Option<String>,
    #[schema(required = true)]
    pub age: Option<i32>,
    /// `F`, `M` or `X`.
    #[schema(required = true)]
    pub sex: Option<Sex>,
    /// Where the patient is taken: the health unit chosen in the Patient form (set by
    /// `PATCH /incident/{id}` with `destination_health_unit_id`), or null.
    #[schema(required = true)]
    pub destination: Option<HealthUnitOption>,
}

/// The "Regulation" tab's header: who regulated and who holds the incident now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Regulation {
    #[schema(required = true)]
    pub regulator: Option<UserOption>,
    #[schema(required = true)]
    #[serde(serialize_with = "rfc3339_opt")]
    pub regulated_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub assigned_to: Option<UserOption>,
}

/// The "Conclusion" tab.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Conclusion {
    #[schema(required = true)]
    pub text: Option<String>,
    #[schema(required = true)]
    #[serde(serialize_with = "rfc3339_opt")]
    pub closed_at: Option<DateTime<Utc>>,
}

/// One append-only history entry: who, when, what changed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryEntry {
    /// The incident's version this change produced.
    pub version: i32,
    pub at: DateTime<Utc>,
    #[schema(value_type = String)]
    pub action: HistoryAction,
    pub user: UserOption,
    /// What changed, e.g. `{"state": {"from": "registering", "to": "awaiting_regulation"}}`.
    #[schema(value_type = Object)]
    pub changes: serde_json::Value,
}

/// `GET /incident/{id}`: the forms of an incident. `history` only with `include_history=true`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IncidentDetail {
    pub id: i64,
    pub number: String,
    /// `registering`, `awaiting_regulation`, `regulated`, `dispatched`, `closed`,
    /// `cancelled` or `prank`.
    pub state: State,
    /// Raised by every write; also sent as the `ETag` header.
    pub version: i32,
    /// The phone was answered (`POST /incident`'s `call_received_at`, else `created_at`).
    #[serde(serialize_with = "rfc3339")]
    pub call_received_at: DateTime<Utc>,
    #[serde(serialize_with = "rfc3339")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "rfc3339")]
    pub updated_at: DateTime<Utc>,
    pub created_by: UserOption,
    pub basic_data: BasicData,
    pub occurrence: Occurrence,
    pub patient: Patient,
    pub regulation: Regulation,
    pub conclusion: Conclusion,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<HistoryEntry>>,
}

/// `GET /incident/prank-calls/{phone_number}`: prank calls recorded for that phone.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PrankCalls {
    /// The phone's key: its national digits (`12991004321`) for a Brazilian number,
    /// `+<country code><digits>` for another.
    pub phone: String,
    /// Every prank call of that phone.
    pub total: i64,
    /// The 20 newest.
    pub calls: Vec<PrankCall>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PrankCall {
    pub incident_id: i64,
    pub number: String,
    pub recorded_at: DateTime<Utc>,
}

/// A regulator's technical decision on an incident.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TechnicalDecisionView {
    pub id: i64,
    /// The incident decided on (not sent: the access log records it).
    #[serde(skip)]
    pub incident_id: i64,
    pub action: RefOption,
    /// The vehicle type the decision asks for, when it sends one.
    #[schema(required = true)]
    pub vehicle_type: Option<RefOption>,
    pub regulator: UserOption,
    /// Null when the decision was recorded without notes.
    #[schema(required = true)]
    pub notes: Option<String>,
    pub decided_at: DateTime<Utc>,
}

/// An intercurrence recorded on an attendance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecordedIntercurrence {
    pub id: i64,
    pub intercurrence: RefOption,
    /// Null when recorded without notes.
    #[schema(required = true)]
    pub notes: Option<String>,
    pub recorded_by: UserOption,
    pub recorded_at: DateTime<Utc>,
}

/// `GET /incident/{id}/fleet-summary`: what a fleet operator needs to pick an incident.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IncidentFleetSummary {
    pub id: i64,
    pub number: String,
    pub state: State,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub address: String,
    pub city: String,
    pub complaint: String,
    #[schema(required = true)]
    pub priority: Option<Priority>,
    /// The vehicle type of the latest technical decision.
    #[schema(required = true)]
    pub requested_vehicle_type: Option<RefOption>,
}
