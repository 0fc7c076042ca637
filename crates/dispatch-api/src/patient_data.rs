//! What counts as a patient's data on the wire, and which views carry it
//! (docs/dispatch-access-log.md, "What is recorded").
//!
//! A view that carries patient data implements [`PatientData`] and is only answered through
//! `routes::recorded::record`, which records the read for every incident it shows before it
//! yields the response. Every other view implements [`NoPatientData`], the bound of the
//! generic answers (`routes::ok`, `IfNoneMatch::lookup`, `routes::searched`): a new view
//! implements neither until someone decides which it is, so it cannot be answered by
//! mistake, and a patient view handed to `ok` does not compile. The route walker
//! (`tests/it/patient_data.rs`) checks every GET route and WebSocket message against
//! [`PATIENT_FIELDS`] behind both.

use serde::Serialize;

use crate::views::*;

/// The JSON keys that carry a patient's (or the caller's) data, wherever a view puts them:
/// names, phones, the address, the complaint, age, sex, clinical notes, the location (and
/// `patient`, the Patient form as a whole). The route walker looks for these.
pub const PATIENT_FIELDS: &[&str] = &[
    "patient",
    "patient_name",
    "caller_name",
    "caller_phone",
    "phone",
    "address",
    "complaint",
    "age",
    "sex",
    "notes",
    "location",
];

/// The routes recorded: the enum lives in `domain` so that the views and the store name it
/// too.
pub use crate::domain::access::AccessRoute;

/// A view that carries incidents' patient data: answered only through
/// `routes::recorded::record`, which records one entry for each incident it shows. Never
/// implement [`NoPatientData`] for it too.
pub trait PatientData: Serialize {
    /// Pushes the id of every incident whose data the view shows.
    fn incidents(&self, out: &mut Vec<i64>);
}

/// A view that carries no patient data: what the generic answers accept.
pub trait NoPatientData: Serialize {}

impl<T: PatientData> PatientData for Vec<T> {
    fn incidents(&self, out: &mut Vec<i64>) {
        for v in self {
            v.incidents(out);
        }
    }
}
impl<T: NoPatientData> NoPatientData for Vec<T> {}
impl<T: NoPatientData> NoPatientData for [T] {}
impl<T: NoPatientData> NoPatientData for Option<T> {}
impl<T: NoPatientData + ?Sized> NoPatientData for &T {}
impl<T: NoPatientData> NoPatientData for Box<T> {}

/// `shows!(View => |v| incident id)`: a view of one incident.
macro_rules! shows {
    ($($view:ty => |$v:ident| $id:expr),+ $(,)?) => {
        $(impl PatientData for $view {
            fn incidents(&self, out: &mut Vec<i64>) {
                let $v = self;
                out.push($id);
            }
        })+
    };
}

shows!(
    IncidentDetail => |v| v.id,
    IncidentMaskItem => |v| v.id,
    IncidentFleetSummary => |v| v.id,
    UnitSelection => |v| v.id,
    FleetOccurrence => |v| v.incident.id,
    DispatchData => |v| v.incident.id,
    OccurrenceView => |v| v.incident.id,
    IncidentTimeline => |v| v.id,
    UnitRecommendation => |v| v.incident.id,
    TechnicalDecisionView => |v| v.incident_id,
    PrankCall => |v| v.incident_id,
);

/// The incident, and each incident its caller's phone made a prank call from.
impl PatientData for RegulationDetail {
    fn incidents(&self, out: &mut Vec<i64>) {
        self.incident.incidents(out);
        self.prank_calls.incidents(out);
    }
}

/// The incidents the phone made prank calls from (a phone with none shows nobody's).
impl PatientData for PrankCalls {
    fn incidents(&self, out: &mut Vec<i64>) {
        self.calls.incidents(out);
    }
}

macro_rules! carries_none {
    ($($view:ty),+ $(,)?) => {
        $(impl NoPatientData for $view {})+
    };
}

// Reference data, people, units, times and counts: nothing of a patient.
carries_none!(
    RefOption,
    UserOption,
    ProfileView,
    UserRecord,
    EmployeeOption,
    EmployeeRecord,
    ProfessionalTypeView,
    MobileUnitTypeView,
    MobileUnitView,
    MobileUnitOption,
    IncidentRef,
    FleetBoardUnit,
    BoardUnit,
    HealthUnitOption,
    DispatchView,
    UnallocatedPage,
    DefaultValues,
    PossibleValues,
    TargetView,
    ResponseTimesReport,
    OffloadBoard,
    AccessLogPage,
    FleetHistoryEntry,
    // The telephone: a softphone's account, and a call (a number and its times; the
    // incident it becomes is read through its own routes).
    PhoneCredentials,
    Call,
    CallRecorded,
    crate::routes::response_targets::Targets,
    // What the writes answer (`routes::commit::Answer`).
    crate::store::writes::Written,
    DispatchCreated,
    DispatchProgress,
    PositionRecorded,
    ManagedUnit,
    Allocation,
);
