//! The phases the reports read (docs/dispatch-routes.md, "How the report is kept"): every
//! incident's and every unit's phases as `domain::times` judges them, kept in
//! `incident_phases` (one row per incident) and `unit_phases` (one per dispatch) by the
//! writes themselves. [`refresh`] runs in the transaction of every write that changes an
//! incident (`writes::commit`, `incident_writes::create`): it judges the incident again with
//! the same functions the timeline uses and writes the rows that changed, so a report reads
//! phases already judged and the stored rows, the timeline and the report cannot disagree
//! (tests/it/times.rs holds them alike on a driven shift and on every incident of the demo).
//!
//! Only each phase's status and seconds are kept, never its target: reports apply the targets
//! as they are when read. Neither depends on the moment of judging (only a running phase's
//! `over_target` does, and that is not kept).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::incident::{Priority, State};
use crate::domain::times::{
    self, IncidentTimes, Interval, Phase, PhaseStatus, Targets, UnitMarks, UnitTimes,
};
use crate::schema::dispatch::*;
use crate::store::dispatches::DispatchRow;

/// An incident's own phases ([`Phase::OF_INCIDENT`]) as kept; `*_dispatch_id` is the unit
/// whose time ended the phase ([`UnitMarks::ended_by`]).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = incident_phases, primary_key(incident_id), treat_none_as_null = true)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct IncidentPhasesRow {
    pub incident_id: i64,
    pub call_received_at: DateTime<Utc>,
    pub priority: Option<Priority>,
    pub call_taking_status: PhaseStatus,
    pub call_taking_seconds: Option<f64>,
    pub regulation_status: PhaseStatus,
    pub regulation_seconds: Option<f64>,
    pub activation_status: PhaseStatus,
    pub activation_seconds: Option<f64>,
    pub activation_dispatch_id: Option<i64>,
    pub response_status: PhaseStatus,
    pub response_seconds: Option<f64>,
    pub response_dispatch_id: Option<i64>,
    pub total_status: PhaseStatus,
    pub total_seconds: Option<f64>,
    pub total_dispatch_id: Option<i64>,
}

/// One unit's phases ([`Phase::OF_UNIT`]) as kept, with the unit, its destination (the
/// dispatch's own, else the incident's) and the incident's call time and priority.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = unit_phases, primary_key(dispatch_id), treat_none_as_null = true)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub struct UnitPhasesRow {
    pub dispatch_id: i64,
    pub incident_id: i64,
    pub call_received_at: DateTime<Utc>,
    pub priority: Option<Priority>,
    pub mobile_unit_id: i64,
    pub health_unit_id: Option<i64>,
    pub turnout_status: PhaseStatus,
    pub turnout_seconds: Option<f64>,
    pub travel_status: PhaseStatus,
    pub travel_seconds: Option<f64>,
    pub on_scene_status: PhaseStatus,
    pub on_scene_seconds: Option<f64>,
    pub transport_status: PhaseStatus,
    pub transport_seconds: Option<f64>,
    pub hospital_hold_status: PhaseStatus,
    pub hospital_hold_seconds: Option<f64>,
    pub return_to_service_status: PhaseStatus,
    pub return_to_service_seconds: Option<f64>,
}

/// The incident's times as the domain reads them, and where its patient goes.
#[derive(Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
struct IncidentRow {
    id: i64,
    state: State,
    priority: Option<Priority>,
    call_received_at: DateTime<Utc>,
    submitted_at: Option<DateTime<Utc>>,
    regulated_at: Option<DateTime<Utc>>,
    destination_health_unit_id: Option<i64>,
}

/// A unit on the incident: its times, the unit and its own destination.
#[derive(Queryable, Selectable)]
#[diesel(table_name = dispatches, check_for_backend(diesel::pg::Pg))]
struct UnitRow {
    #[diesel(embed)]
    dispatch: DispatchRow,
    mobile_unit_id: i64,
    destination_id: Option<i64>,
}

/// A phase's status and seconds, from the domain's judgement of it.
fn kept(judged: &[Interval], phase: Phase) -> (PhaseStatus, Option<f64>) {
    let p = judged
        .iter()
        .find(|p| p.phase == phase)
        .expect("the domain judges every phase");
    (p.status, p.seconds)
}

/// The rows of one incident and its units, judged by `domain::times` at `at` (status and
/// seconds do not depend on the moment, nor on the targets: none are given).
fn judge(
    incident: &IncidentRow,
    units: &[UnitRow],
    at: DateTime<Utc>,
) -> (IncidentPhasesRow, Vec<UnitPhasesRow>) {
    let none = Targets::default();
    let times = IncidentTimes {
        state: incident.state,
        priority: incident.priority,
        call_received_at: incident.call_received_at,
        submitted_at: incident.submitted_at,
        regulated_at: incident.regulated_at,
    };
    let unit_times: Vec<UnitTimes> = units.iter().map(|u| u.dispatch.times()).collect();
    let marks = UnitMarks::of(&times, &unit_times);
    let own = times::incident_phases(&times, &unit_times, &none, at);
    let k = |phase| kept(&own, phase);
    let ((call_taking_status, call_taking_seconds), (regulation_status, regulation_seconds)) =
        (k(Phase::CallTaking), k(Phase::Regulation));
    let (activation_status, activation_seconds) = k(Phase::Activation);
    let (response_status, response_seconds) = k(Phase::Response);
    let (total_status, total_seconds) = k(Phase::Total);
    let row = IncidentPhasesRow {
        incident_id: incident.id,
        call_received_at: incident.call_received_at,
        priority: incident.priority,
        call_taking_status,
        call_taking_seconds,
        regulation_status,
        regulation_seconds,
        activation_status,
        activation_seconds,
        activation_dispatch_id: marks.ended_by(Phase::Activation),
        response_status,
        response_seconds,
        response_dispatch_id: marks.ended_by(Phase::Response),
        total_status,
        total_seconds,
        total_dispatch_id: marks.ended_by(Phase::Total),
    };
    let unit_rows = units
        .iter()
        .zip(&unit_times)
        .map(|(u, t)| {
            let judged = times::unit_phases(&times, t, &none, at);
            let k = |phase| kept(&judged, phase);
            let (turnout_status, turnout_seconds) = k(Phase::Turnout);
            let (travel_status, travel_seconds) = k(Phase::Travel);
            let (on_scene_status, on_scene_seconds) = k(Phase::OnScene);
            let (transport_status, transport_seconds) = k(Phase::Transport);
            let (hospital_hold_status, hospital_hold_seconds) = k(Phase::HospitalHold);
            let (return_to_service_status, return_to_service_seconds) = k(Phase::ReturnToService);
            UnitPhasesRow {
                dispatch_id: u.dispatch.id,
                incident_id: incident.id,
                call_received_at: incident.call_received_at,
                priority: incident.priority,
                mobile_unit_id: u.mobile_unit_id,
                health_unit_id: u.destination_id.or(incident.destination_health_unit_id),
                turnout_status,
                turnout_seconds,
                travel_status,
                travel_seconds,
                on_scene_status,
                on_scene_seconds,
                transport_status,
                transport_seconds,
                hospital_hold_status,
                hospital_hold_seconds,
                return_to_service_status,
                return_to_service_seconds,
            }
        })
        .collect();
    (row, unit_rows)
}

/// Judges incident `id` and its units again and writes the rows that changed (none when the
/// write moved no time, state, priority or destination). Inside the write's transaction, with
/// the incident locked: the rows commit or roll back with the write. One round trip reads
/// (the incident, its units and their kept rows, pipelined), one writes what differs.
pub async fn refresh(
    conn: &mut AsyncPgConnection,
    id: i64,
    at: DateTime<Utc>,
) -> Result<(), diesel::result::Error> {
    let c: &AsyncPgConnection = conn;
    let incident = async {
        let mut c = c;
        incidents::table
            .find(id)
            .select(IncidentRow::as_select())
            .first::<IncidentRow>(&mut c)
            .await
    };
    let units = async {
        let mut c = c;
        dispatches::table
            .filter(dispatches::incident_id.eq(id))
            .order_by(dispatches::id)
            .select(UnitRow::as_select())
            .load::<UnitRow>(&mut c)
            .await
    };
    let (incident, units, (kept_incident, kept_units)) =
        tokio::try_join!(incident, units, stored(c, id))?;
    let (row, unit_rows) = judge(&incident, &units, at);
    let write_incident = async {
        if kept_incident.as_ref() == Some(&row) {
            return Ok(0);
        }
        let mut c = c;
        diesel::insert_into(incident_phases::table)
            .values(&row)
            .on_conflict(incident_phases::incident_id)
            .do_update()
            .set(&row)
            .execute(&mut c)
            .await
    };
    let changed: Vec<&UnitPhasesRow> = unit_rows
        .iter()
        .filter(|r| !kept_units.contains(r))
        .collect();
    let write_units = futures_util::future::try_join_all(changed.into_iter().map(|r| async move {
        let mut c = c;
        diesel::insert_into(unit_phases::table)
            .values(r)
            .on_conflict(unit_phases::dispatch_id)
            .do_update()
            .set(r)
            .execute(&mut c)
            .await
    }));
    tokio::try_join!(write_incident, write_units)?;
    Ok(())
}

/// The kept rows of incident `id` and of its units (by dispatch id): what a report reads of
/// it. Two statements, pipelined.
pub async fn stored(
    conn: &AsyncPgConnection,
    id: i64,
) -> Result<(Option<IncidentPhasesRow>, Vec<UnitPhasesRow>), diesel::result::Error> {
    let incident = async {
        let mut c = conn;
        incident_phases::table
            .find(id)
            .select(IncidentPhasesRow::as_select())
            .first::<IncidentPhasesRow>(&mut c)
            .await
            .optional()
    };
    // Along `dispatches_incident`: the kept rows have no index of their own on the incident.
    let units = async {
        let mut c = conn;
        unit_phases::table
            .inner_join(dispatches::table)
            .filter(dispatches::incident_id.eq(id))
            .order_by(unit_phases::dispatch_id)
            .select(UnitPhasesRow::as_select())
            .load::<UnitPhasesRow>(&mut c)
            .await
    };
    tokio::try_join!(incident, units)
}
