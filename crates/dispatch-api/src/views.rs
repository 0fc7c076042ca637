//! What goes on the wire: one type per response shape, named for what it shows, with only
//! the fields its screen uses. Rows never reach a response directly (that is how logins leak).

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::dispatch::Status;
use crate::domain::fleet::{Fix, Point, Whereabouts};
use crate::domain::history::HistoryAction;
use crate::domain::incident::{Priority, Sex, State};
use crate::domain::times::{GroupBy, Interval, Phase, TargetPriority};
use crate::domain::user::Profile;

/// An entry of a small reference list: `{id, name}`.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct RefOption {
    pub id: i32,
    pub name: String,
}

/// A person in a select field: the "Send to" and "Transfer to" options, authors of records.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct UserOption {
    pub id: i64,
    pub descriptive_name: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProfileView {
    pub id: i32,
    pub title: String,
    pub text: String,
}

/// `GET /user`, `GET /user/{id}`. `name` (the login) is present only for ADMIN callers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserRecord {
    pub id: i64,
    pub descriptive_name: String,
    /// `ativo` means active.
    pub status: String,
    /// The login. Only ADMIN callers get this key; for everyone else it is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub profile: ProfileView,
    #[schema(required = true)]
    pub professional_type: Option<RefOption>,
    #[schema(required = true)]
    pub team: Option<RefOption>,
}

/// `GET /employee/search`: one option of the "Transfer to" picker, with what a person
/// picker shows beside the name. `id` is the user id (what the transfer takes).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct EmployeeOption {
    pub id: i64,
    pub descriptive_name: String,
    #[schema(required = true)]
    pub team: Option<RefOption>,
    #[schema(required = true)]
    pub professional_type: Option<RefOption>,
}

/// `GET /employee/user_id/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EmployeeRecord {
    pub id: i64,
    pub user_id: i64,
    pub descriptive_name: String,
    pub registration: String,
    #[schema(required = true)]
    pub phone: Option<String>,
    pub active: bool,
    #[schema(required = true)]
    pub professional_type: Option<RefOption>,
    #[schema(required = true)]
    pub team: Option<RefOption>,
}

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

/// A value and its JSON, serialised once: the reference data's snapshot keeps its health
/// units so (see `catalog`), and a search answers by copying the JSON of the page it found.
#[derive(Debug, Clone)]
pub struct Serialised<T> {
    pub value: T,
    json: Box<[u8]>,
}

impl<T: Serialize> Serialised<T> {
    pub fn new(value: T) -> Self {
        let json = serde_json::to_vec(&value)
            .expect("a view has string keys only, so it always serialises")
            .into_boxed_slice();
        Self { value, json }
    }
}

/// `[a,b,...]` of the items' JSON: the bytes `serde_json` writes for the list of their values.
pub fn json_array<T>(items: &[&Serialised<T>]) -> Vec<u8> {
    let commas = items.len().saturating_sub(1);
    let len = items.iter().map(|i| i.json.len()).sum::<usize>() + commas + 2;
    let mut out = Vec::with_capacity(len);
    out.push(b'[');
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&item.json);
    }
    out.push(b']');
    out
}

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
    pub call_received_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
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

/// What `POST /incident/{id}/dispatch` answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchCreated {
    pub id: i64,
    pub status: Status,
    /// The incident's new version (also the `ETag`).
    pub version: i32,
}

/// What `POST /dispatch/{id}/status` answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DispatchProgress {
    pub id: i64,
    pub status: Status,
    pub incident_id: i64,
    /// The incident's new version (also the `ETag`): a dispatch has none of its own.
    pub version: i32,
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
    pub notes: String,
    pub decided_at: DateTime<Utc>,
}

/// An intercurrence recorded on an attendance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecordedIntercurrence {
    pub id: i64,
    pub intercurrence: RefOption,
    pub notes: String,
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

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnallocatedPage {
    pub items: Vec<UnallocatedEntry>,
    pub page: i64,
    pub page_size: i64,
    pub total: i64,
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

/// `GET /shared/default-values`: the caller and the lookup lists.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DefaultValues {
    pub user: UserOption,
    /// The caller's profile title.
    pub profile: Profile,
    #[serde(flatten)]
    pub lookups: Lookups,
}

/// `GET /shared/possible-values` (deprecated): the default values plus `employee`, every
/// active employee, kept until the client stops reading it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PossibleValues {
    pub user: UserOption,
    pub profile: Profile,
    #[serde(flatten)]
    pub lookups: Lookups,
    pub employee: Vec<UserOption>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(id: i64, name: &str) -> HealthUnitOption {
        HealthUnitOption {
            id,
            name: name.to_owned(),
            city: "São José dos Campos".to_owned(),
            uf: "SP".to_owned(),
        }
    }

    #[test]
    fn a_list_of_serialised_values_is_what_serde_writes_for_the_values() {
        let units = [
            unit(1, "Hospital São José"),
            // Quotes, a backslash and control characters (escaped); DEL, a ligature and an
            // emoji (written as they are).
            unit(-2, "UBS \"Jardim\" \\ Norte\t\u{1}\u{7f} 🚑 ﬁm"),
            unit(i64::MAX, ""),
        ];
        let serialised: Vec<Serialised<HealthUnitOption>> =
            units.iter().cloned().map(Serialised::new).collect();
        for n in 0..=units.len() {
            let page: Vec<&Serialised<HealthUnitOption>> = serialised[..n].iter().collect();
            let bytes = json_array(&page);
            assert_eq!(bytes, serde_json::to_vec(&units[..n]).unwrap(), "{n} items");
            assert_eq!(
                bytes.len(),
                bytes.capacity(),
                "one allocation of the exact size"
            );
        }
    }
}

/// `GET /incident/{id}/timeline`: every phase of the incident and of each of its units
/// (docs/dispatch-routes.md, "Response times"), judged against the targets of its priority.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IncidentTimeline {
    pub incident_id: i64,
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

/// `GET /reports/response-times`: per group and phase, the phases measured in the range.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResponseTimesReport {
    /// Calls received at or after this moment ...
    pub from: DateTime<Utc>,
    /// ... and before this one.
    pub to: DateTime<Utc>,
    #[schema(required = true)]
    pub group_by: Option<GroupBy>,
    /// The centre's time zone: the hours and days of `group_by=hour|day`.
    pub time_zone: String,
    /// Calls received in the range (each counted once, whatever its phases).
    pub incidents: i64,
    pub groups: Vec<ReportGroup>,
    /// The targets the shares were judged against (as they are now).
    pub targets: Vec<TargetView>,
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

/// `offload.alert` (WebSocket queue `offload`): a unit held at a hospital's door past the
/// `hospital_hold` target.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema, PartialEq)]
pub struct OffloadAlert {
    pub dispatch_id: i64,
    pub incident_id: i64,
    pub incident_number: String,
    pub mobile_unit: OffloadUnit,
    #[schema(required = true)]
    pub health_unit: Option<OffloadUnit>,
    pub at_destination_at: DateTime<Utc>,
    pub target_seconds: i32,
    pub alerted_at: DateTime<Utc>,
}

/// `offload.cleared`: the unit alerted for is off the door.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema, PartialEq)]
pub struct OffloadCleared {
    pub dispatch_id: i64,
    pub incident_id: i64,
    pub incident_number: String,
    pub mobile_unit: OffloadUnit,
    #[schema(required = true)]
    pub health_unit: Option<OffloadUnit>,
    /// `handed_over` (the hospital took the patient) or `released` (without a recorded
    /// hand-over).
    pub by: Status,
    pub at_destination_at: DateTime<Utc>,
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

/// What the `dispatch_offload` channel carries (the JSON a watcher's alert or a unit's
/// hand-over sends), read by every replica's listener.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
#[serde(tag = "type")]
pub enum OffloadNotice {
    #[serde(rename = "offload.alert")]
    Alert(OffloadAlert),
    #[serde(rename = "offload.cleared")]
    Cleared(OffloadCleared),
}

impl OffloadNotice {
    pub fn dispatch_id(&self) -> i64 {
        match self {
            OffloadNotice::Alert(a) => a.dispatch_id,
            OffloadNotice::Cleared(c) => c.dispatch_id,
        }
    }
}

// Access log (docs/dispatch-access-log.md).

/// One read of an incident's patient data: who, which incident, through which route, when.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct AccessEntry {
    pub at: DateTime<Utc>,
    pub user: UserOption,
    pub incident_id: i64,
    pub incident_number: String,
    /// The route read, as its method and path pattern: `GET /incident/{id}/regulation`.
    pub route: crate::domain::access::AccessRoute,
}

/// A page of the access log, oldest first; `truncated` when more entries matched than the
/// page holds (narrow `from`/`to`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccessLogPage {
    pub entries: Vec<AccessEntry>,
    pub truncated: bool,
}

// --- Positions, the recommendation, managing the fleet and the team ----------------------
// (docs/dispatch-routes.md, "Positions and a recommendation", "Managing the fleet and the team")

/// A point of the map: WGS 84 degrees.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, ToSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Location {
    /// Latitude, -90..=90.
    pub lat: f64,
    /// Longitude, -180..=180.
    pub lon: f64,
}

/// Where a unit counts as being.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnitWhereabouts {
    /// `reported` (its latest position, fresh), `base` (its base's: no position, or a stale
    /// one) or `unknown`.
    pub source: String,
    #[schema(required = true)]
    pub location: Option<Location>,
    /// When the latest reported position was recorded (also when it is stale), or null.
    #[schema(required = true)]
    pub recorded_at: Option<DateTime<Utc>>,
    /// Seconds since `recorded_at`, or null.
    #[schema(required = true)]
    pub age_seconds: Option<i64>,
    /// `true` when a reported position exists but is older than the configured age.
    pub stale: bool,
}

impl UnitWhereabouts {
    /// Where the unit counts as being, as the recommendation and the board show it.
    pub fn of(
        w: &Whereabouts,
        fix: Option<Fix>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> UnitWhereabouts {
        let age = fix.map(|f| (now - f.recorded_at).num_seconds().max(0));
        let loc = |p: Point| Location {
            lat: p.lat,
            lon: p.lon,
        };
        match *w {
            Whereabouts::Reported { at, .. } => UnitWhereabouts {
                source: "reported".into(),
                location: Some(loc(at)),
                recorded_at: fix.map(|f| f.recorded_at),
                age_seconds: age,
                stale: false,
            },
            Whereabouts::Base { at, stale } => UnitWhereabouts {
                source: "base".into(),
                location: Some(loc(at)),
                recorded_at: fix.map(|f| f.recorded_at),
                age_seconds: age,
                stale: stale.is_some(),
            },
            Whereabouts::Unknown => UnitWhereabouts {
                source: "unknown".into(),
                location: None,
                recorded_at: fix.map(|f| f.recorded_at),
                age_seconds: age,
                stale: fix.is_some(),
            },
        }
    }
}

/// A free unit of the requested type, with how far it is.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecommendedUnit {
    pub id: i64,
    pub name: String,
    pub base: String,
    pub vehicle_type: RefOption,
    pub position: UnitWhereabouts,
    /// Straight-line distance to the incident's location, km (3 decimals); null when the
    /// incident has no location.
    #[schema(required = true)]
    pub distance_km: Option<f64>,
    /// Estimated seconds to arrive at the configured speed; null without a location.
    #[schema(required = true)]
    pub eta_seconds: Option<i64>,
}

/// A unit the recommendation left out, and why.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LeftOutUnit {
    pub id: i64,
    pub name: String,
    pub vehicle_type: RefOption,
    /// `busy` (on a dispatch not released), `other_type`, `inactive` or `no_position`.
    pub reason: String,
}

/// `GET /incident/{id}/unit-recommendation`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnitRecommendation {
    pub incident: IncidentRef,
    /// The incident's location (`PUT /incident/{id}/location`), or null: then the units are
    /// listed by id with no distance.
    #[schema(required = true)]
    pub location: Option<Location>,
    /// What the latest technical decision asks for; null: any type.
    #[schema(required = true)]
    pub requested_vehicle_type: Option<RefOption>,
    /// The speed of the estimate (`UNIT_SPEED_KMH`).
    pub speed_kmh: f64,
    /// After how long a reported position is stale (`POSITION_MAX_AGE`).
    pub position_max_age_seconds: i64,
    /// Nearest first.
    pub units: Vec<RecommendedUnit>,
    pub left_out: Vec<LeftOutUnit>,
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

/// `GET /mobile-unit/board`: one active unit of the fleet board, with where it is and how
/// long it has been in its current step.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BoardUnit {
    #[serde(flatten)]
    pub unit: FleetBoardUnit,
    /// Its reported position while fresh, its base after that (as the recommendation counts).
    pub position: UnitWhereabouts,
    /// When the unit entered its dispatch's current step; null when free.
    #[schema(required = true)]
    pub step_since: Option<DateTime<Utc>>,
    /// Seconds in the current step (from the service's clock); null when free.
    #[schema(required = true)]
    pub seconds_in_step: Option<i64>,
}
