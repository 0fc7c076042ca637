//! Response times (docs/dispatch-routes.md, "Response times"): the phases an incident and each
//! of its units go through, each one an interval between two recorded times (NEMSIS v3
//! eTimes), judged against the centre's targets. This is the one place the phases are
//! defined; the reports' SQL (`store::times`) follows these rules, and a test holds the two
//! alike on every incident of the demo data.
//!
//! A phase is never guessed: a time that was not recorded, or that lies before the time it
//! should follow, makes the phase `missing` or `out_of_order`, with the reason, and it counts
//! in no percentile.

use chrono::{DateTime, Utc};
use common::text_enum;
use serde::Serialize;

use super::incident::{Priority, State};

text_enum! {
    /// One interval of a response, in the order of an incident's life. `call_taking`,
    /// `regulation`, `activation`, `response` and `total` are the incident's; `turnout`,
    /// `travel`, `on_scene`, `transport`, `hospital_hold` and `return_to_service` each unit's.
    pub enum Phase {
        /// The phone rang -> someone answered it (the switch's times: docs/dispatch-telephony.md).
        /// Judged from the calls, not from an incident: an abandoned call has none.
        RingToAnswer = "ring_to_answer",
        /// The call received -> submitted to regulation.
        CallTaking = "call_taking",
        /// Submitted -> regulated (the regulator's decision).
        Regulation = "regulation",
        /// Regulated -> the first unit assigned.
        Activation = "activation",
        /// A unit assigned (eTimes.03) -> en route (eTimes.05).
        Turnout = "turnout",
        /// En route -> on scene (eTimes.06).
        Travel = "travel",
        /// The call received -> the first unit on scene.
        Response = "response",
        /// On scene -> transporting (left the scene, eTimes.09).
        OnScene = "on_scene",
        /// Transporting -> at the destination (eTimes.11).
        Transport = "transport",
        /// At the destination -> handed over to the hospital's team (eTimes.12): the
        /// stretcher hold.
        HospitalHold = "hospital_hold",
        /// Handed over (or at the destination, when the hand-over is not recorded) ->
        /// released, back in service (eTimes.13).
        ReturnToService = "return_to_service",
        /// The call received -> the last unit released.
        Total = "total",
    }
}

impl Phase {
    /// The incident's own phases, in order.
    pub const OF_INCIDENT: [Phase; 5] = [
        Phase::CallTaking,
        Phase::Regulation,
        Phase::Activation,
        Phase::Response,
        Phase::Total,
    ];
    /// Each unit's phases, in order.
    pub const OF_UNIT: [Phase; 6] = [
        Phase::Turnout,
        Phase::Travel,
        Phase::OnScene,
        Phase::Transport,
        Phase::HospitalHold,
        Phase::ReturnToService,
    ];

    /// The phases kept for each incident and unit (`store::phases`): all but the telephone's
    /// [`Phase::RingToAnswer`], which the report reads from the calls.
    pub const KEPT: [Phase; 11] = [
        Phase::CallTaking,
        Phase::Regulation,
        Phase::Activation,
        Phase::Turnout,
        Phase::Travel,
        Phase::Response,
        Phase::OnScene,
        Phase::Transport,
        Phase::HospitalHold,
        Phase::ReturnToService,
        Phase::Total,
    ];

    /// Whether the phase is a unit's (else the incident's).
    pub fn is_units(self) -> bool {
        Self::OF_UNIT.contains(&self)
    }
}

text_enum! {
    /// How a phase stands.
    pub enum PhaseStatus {
        /// Both times recorded, in order: `seconds` is the interval.
        Complete = "complete",
        /// Started, not ended yet, and it still may.
        Running = "running",
        /// Not started yet, and it still may.
        Pending = "pending",
        /// The incident or the unit ended without this phase (no unit sent, no transport,
        /// a unit called off): nothing is wrong.
        NotReached = "not_reached",
        /// A time the phase needs was not recorded although what follows it was: untimed.
        Missing = "missing",
        /// The end was recorded before the start (clocks of two machines disagreeing, a
        /// time entered by hand): untimed.
        OutOfOrder = "out_of_order",
    }
}

text_enum! {
    /// The priority a target applies to: one of the incident's, or `any` (every priority
    /// without a target of its own).
    pub enum TargetPriority {
        Any = "any",
        Low = "low",
        Medium = "medium",
        High = "high",
        Critical = "critical",
    }
}

impl From<Priority> for TargetPriority {
    fn from(p: Priority) -> Self {
        match p {
            Priority::Low => TargetPriority::Low,
            Priority::Medium => TargetPriority::Medium,
            Priority::High => TargetPriority::High,
            Priority::Critical => TargetPriority::Critical,
        }
    }
}

text_enum! {
    /// How a report groups its phases (`GET /reports/response-times?group_by=`): by the
    /// incident's priority, by the unit's vehicle type, base or destination (a unit's phases
    /// by its own unit; an incident's by the unit that ended it: the first assigned for
    /// `activation`, the first on scene for `response`, the last released for `total`;
    /// `call_taking` and `regulation` involve no unit), or by the hour of the day or the day
    /// the call was received (centre time).
    pub enum GroupBy {
        Priority = "priority",
        VehicleType = "vehicle_type",
        Base = "base",
        HealthUnit = "health_unit",
        Hour = "hour",
        Day = "day",
    }
}

/// One target: the longest a phase should take for a priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub phase: Phase,
    pub priority: TargetPriority,
    pub seconds: i32,
}

/// The centre's targets (`response_targets`).
#[derive(Debug, Clone, Default)]
pub struct Targets(pub Vec<Target>);

impl Targets {
    /// The target of `phase` for an incident of `priority`: the priority's own, else the
    /// `any` one, else none (an incident without a priority has only the `any` targets).
    pub fn seconds(&self, phase: Phase, priority: Option<Priority>) -> Option<i32> {
        let find = |p: TargetPriority| {
            self.0
                .iter()
                .find(|t| t.phase == phase && t.priority == p)
                .map(|t| t.seconds)
        };
        priority
            .and_then(|p| find(p.into()))
            .or_else(|| find(TargetPriority::Any))
    }
}

/// Longest a target may be: a week (a hold or a response longer than that is no target).
pub const TARGET_MAX_SECONDS: i32 = 7 * 24 * 3600;

/// How far back a call may have been answered: a call taker registers it at once or from a
/// note written during a busy hour, never a day later.
pub const CALL_RECEIVED_MAX_AGE: chrono::Duration = chrono::Duration::hours(24);

/// `POST /incident`'s `call_received_at`, judged against the write's instant `now`: not in
/// the future, not older than [`CALL_RECEIVED_MAX_AGE`]; without one, the call was received
/// when the incident is created.
pub fn call_received_at(
    given: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, super::Refusal> {
    let Some(at) = given else { return Ok(now) };
    let fault = |message: &str| {
        super::Refusal::InvalidFields(vec![super::refusal::FieldFault {
            field: "call_received_at".into(),
            message: message.into(),
        }])
    };
    if at > now {
        Err(fault("must not be in the future"))
    } else if now - at > CALL_RECEIVED_MAX_AGE {
        Err(fault("must be within the last 24 hours"))
    } else {
        Ok(at)
    }
}

/// The incident's own times, as the writes recorded them.
#[derive(Debug, Clone)]
pub struct IncidentTimes {
    pub state: State,
    pub priority: Option<Priority>,
    pub call_received_at: DateTime<Utc>,
    pub submitted_at: Option<DateTime<Utc>>,
    pub regulated_at: Option<DateTime<Utc>>,
}

/// One unit's step times on the incident (a skipped step stays `None`).
#[derive(Debug, Clone)]
pub struct UnitTimes {
    pub dispatch_id: i64,
    pub assigned_at: DateTime<Utc>,
    pub en_route_at: Option<DateTime<Utc>>,
    pub on_scene_at: Option<DateTime<Utc>>,
    pub transporting_at: Option<DateTime<Utc>>,
    pub at_destination_at: Option<DateTime<Utc>>,
    pub handed_over_at: Option<DateTime<Utc>>,
    pub released_at: Option<DateTime<Utc>>,
}

/// One phase, judged.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Interval {
    pub phase: Phase,
    pub status: PhaseStatus,
    #[schema(required = true)]
    pub started_at: Option<DateTime<Utc>>,
    #[schema(required = true)]
    pub ended_at: Option<DateTime<Utc>>,
    /// The interval, to the microsecond; only when `complete`.
    #[schema(required = true)]
    pub seconds: Option<f64>,
    /// The target for the incident's priority, when there is one.
    #[schema(required = true)]
    pub target_seconds: Option<i32>,
    /// `complete`: whether it took longer than the target. `running`: `true` once it has
    /// already; `null` otherwise (or without a target).
    #[schema(required = true)]
    pub over_target: Option<bool>,
    /// Why the phase is not `complete` (null when it is).
    #[schema(required = true)]
    pub reason: Option<String>,
}

/// A phase's two ends, each with the name of its time, and what says how a missing end
/// reads.
struct Span {
    phase: Phase,
    start: (&'static str, Option<DateTime<Utc>>),
    end: (&'static str, Option<DateTime<Utc>>),
    /// A later time was recorded, so the end should have been too.
    evidence: bool,
    /// An end recorded without a start means the start is missing (not so for the return
    /// to service: a unit released without transporting never reached a door).
    needs_start: bool,
    /// The incident (or unit) may still record the end.
    open: bool,
    /// Who ends without the phase: "the incident" or "the unit".
    subject: &'static str,
}

fn seconds(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_microseconds().unwrap_or(i64::MAX) as f64 / 1e6
}

fn judge(s: Span, target: Option<i32>, now: DateTime<Utc>) -> Interval {
    let (start_name, start) = s.start;
    let (end_name, end) = s.end;
    let interval = |status, seconds: Option<f64>, over, reason: Option<String>| Interval {
        phase: s.phase,
        status,
        started_at: start,
        ended_at: end,
        seconds,
        target_seconds: target,
        over_target: over,
        reason,
    };
    match (start, end) {
        (Some(a), Some(b)) if b >= a => {
            let secs = seconds(a, b);
            let over = target.map(|t| secs > f64::from(t));
            interval(PhaseStatus::Complete, Some(secs), over, None)
        }
        (Some(a), Some(b)) => interval(
            PhaseStatus::OutOfOrder,
            None,
            None,
            Some(format!(
                "{end_name} ({}) is before {start_name} ({})",
                b.to_rfc3339(),
                a.to_rfc3339()
            )),
        ),
        (Some(_), None) if s.evidence => interval(
            PhaseStatus::Missing,
            None,
            None,
            Some(format!(
                "{end_name} was not recorded, though what follows it was"
            )),
        ),
        (Some(a), None) if s.open => {
            let over = target.and_then(|t| (seconds(a, now) > f64::from(t)).then_some(true));
            interval(PhaseStatus::Running, None, over, Some("in progress".into()))
        }
        (Some(_), None) => interval(
            PhaseStatus::NotReached,
            None,
            None,
            Some(format!("{} ended without {end_name}", s.subject)),
        ),
        (None, Some(_)) if s.needs_start => interval(
            PhaseStatus::Missing,
            None,
            None,
            Some(format!("{start_name} was not recorded")),
        ),
        (None, _) if s.open => interval(
            PhaseStatus::Pending,
            None,
            None,
            Some(format!("{start_name} is not recorded yet")),
        ),
        (None, _) => interval(
            PhaseStatus::NotReached,
            None,
            None,
            Some(format!("{} ended without {start_name}", s.subject)),
        ),
    }
}

/// What the incident's phases read of its units: the first assignment, the first unit on
/// scene, and the last release once every unit is released and the incident is final; and
/// which dispatch each of those times is (of two at the same instant, the lower id): the unit
/// a report files the incident's phase under (docs/dispatch-routes.md, "The report").
pub struct UnitMarks {
    pub first_assigned: Option<DateTime<Utc>>,
    pub first_on_scene: Option<DateTime<Utc>>,
    pub last_released: Option<DateTime<Utc>>,
    pub any_unreleased: bool,
    pub any: bool,
    pub first_assigned_by: Option<i64>,
    pub first_on_scene_by: Option<i64>,
    pub last_released_by: Option<i64>,
}

impl UnitMarks {
    pub fn of(incident: &IncidentTimes, units: &[UnitTimes]) -> Self {
        let any_unreleased = units.iter().any(|u| u.released_at.is_none());
        let done = !units.is_empty() && !any_unreleased && incident.state.is_final();
        let first_assigned = units.iter().min_by_key(|u| (u.assigned_at, u.dispatch_id));
        let first_on_scene = units
            .iter()
            .filter_map(|u| Some((u.on_scene_at?, u.dispatch_id)))
            .min();
        // The latest release; of two at the same instant, the lower id.
        let last_released = units
            .iter()
            .filter_map(|u| Some((u.released_at?, std::cmp::Reverse(u.dispatch_id))))
            .max()
            .filter(|_| done);
        UnitMarks {
            first_assigned: first_assigned.map(|u| u.assigned_at),
            first_on_scene: first_on_scene.map(|(at, _)| at),
            last_released: last_released.map(|(at, _)| at),
            any_unreleased,
            any: !units.is_empty(),
            first_assigned_by: first_assigned.map(|u| u.dispatch_id),
            first_on_scene_by: first_on_scene.map(|(_, id)| id),
            last_released_by: last_released.map(|(_, id)| id.0),
        }
    }

    /// The dispatch whose time ended one of the incident's phases: the first assigned for
    /// `activation`, the first on scene for `response`, the last released for `total`; none
    /// for the others (no unit takes part in `call_taking` and `regulation`).
    pub fn ended_by(&self, phase: Phase) -> Option<i64> {
        match phase {
            Phase::Activation => self.first_assigned_by,
            Phase::Response => self.first_on_scene_by,
            Phase::Total => self.last_released_by,
            _ => None,
        }
    }
}

/// The incident's own phases ([`Phase::OF_INCIDENT`]), judged at `now`.
pub fn incident_phases(
    incident: &IncidentTimes,
    units: &[UnitTimes],
    targets: &Targets,
    now: DateTime<Utc>,
) -> Vec<Interval> {
    use State::*;
    let m = UnitMarks::of(incident, units);
    let i = incident;
    let open = !i.state.is_final();
    let received = ("call_received_at", Some(i.call_received_at));
    let spans = [
        Span {
            phase: Phase::CallTaking,
            start: received,
            end: ("submitted_at", i.submitted_at),
            evidence: i.regulated_at.is_some()
                || m.any
                || matches!(
                    i.state,
                    AwaitingRegulation | Regulated | Dispatched | Closed
                ),
            needs_start: true,
            open,
            subject: "the incident",
        },
        Span {
            phase: Phase::Regulation,
            start: ("submitted_at", i.submitted_at),
            end: ("regulated_at", i.regulated_at),
            evidence: m.any || matches!(i.state, Regulated | Dispatched | Closed),
            needs_start: true,
            open,
            subject: "the incident",
        },
        Span {
            phase: Phase::Activation,
            start: ("regulated_at", i.regulated_at),
            end: ("the first unit's assigned_at", m.first_assigned),
            evidence: false,
            needs_start: true,
            open,
            subject: "the incident",
        },
        Span {
            phase: Phase::Response,
            start: received,
            end: ("the first unit's on_scene_at", m.first_on_scene),
            evidence: false,
            needs_start: true,
            open: open || m.any_unreleased,
            subject: "the incident",
        },
        Span {
            phase: Phase::Total,
            start: received,
            end: ("the last unit's released_at", m.last_released),
            evidence: false,
            needs_start: true,
            open: open || m.any_unreleased,
            subject: "the incident",
        },
    ];
    spans
        .into_iter()
        .map(|s| {
            let target = targets.seconds(s.phase, i.priority);
            judge(s, target, now)
        })
        .collect()
}

/// One unit's phases ([`Phase::OF_UNIT`]), judged at `now` against the incident's
/// priority's targets.
pub fn unit_phases(
    incident: &IncidentTimes,
    u: &UnitTimes,
    targets: &Targets,
    now: DateTime<Utc>,
) -> Vec<Interval> {
    let open = u.released_at.is_none();
    let (s, t, d, h) = (
        u.on_scene_at,
        u.transporting_at,
        u.at_destination_at,
        u.handed_over_at,
    );
    let after = |times: &[Option<DateTime<Utc>>]| times.iter().any(Option::is_some);
    let returned = match (h, d) {
        (Some(h), _) => ("handed_over_at", Some(h)),
        (None, d) => ("at_destination_at", d),
    };
    let span = |phase, start, end, evidence| Span {
        phase,
        start,
        end,
        evidence,
        needs_start: phase != Phase::ReturnToService,
        open,
        subject: "the unit",
    };
    let spans = [
        span(
            Phase::Turnout,
            ("assigned_at", Some(u.assigned_at)),
            ("en_route_at", u.en_route_at),
            after(&[s, t, d, h]),
        ),
        span(
            Phase::Travel,
            ("en_route_at", u.en_route_at),
            ("on_scene_at", s),
            after(&[t, d, h]),
        ),
        span(
            Phase::OnScene,
            ("on_scene_at", s),
            ("transporting_at", t),
            after(&[d, h]),
        ),
        span(
            Phase::Transport,
            ("transporting_at", t),
            ("at_destination_at", d),
            after(&[h]),
        ),
        span(
            Phase::HospitalHold,
            ("at_destination_at", d),
            ("handed_over_at", h),
            after(&[u.released_at]),
        ),
        span(
            Phase::ReturnToService,
            returned,
            ("released_at", u.released_at),
            false,
        ),
    ];
    spans
        .into_iter()
        .map(|s| {
            let target = targets.seconds(s.phase, incident.priority);
            judge(s, target, now)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn t(min: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_900_000_000, 0).unwrap() + Duration::minutes(min)
    }

    fn defaults() -> Targets {
        Targets(vec![
            Target {
                phase: Phase::Response,
                priority: TargetPriority::Critical,
                seconds: 600,
            },
            Target {
                phase: Phase::HospitalHold,
                priority: TargetPriority::Any,
                seconds: 1200,
            },
            Target {
                phase: Phase::Regulation,
                priority: TargetPriority::Any,
                seconds: 180,
            },
            Target {
                phase: Phase::Regulation,
                priority: TargetPriority::Critical,
                seconds: 60,
            },
        ])
    }

    fn incident(state: State) -> IncidentTimes {
        IncidentTimes {
            state,
            priority: Some(Priority::Critical),
            call_received_at: t(0),
            submitted_at: Some(t(1)),
            regulated_at: Some(t(3)),
        }
    }

    fn unit() -> UnitTimes {
        UnitTimes {
            dispatch_id: 1,
            assigned_at: t(4),
            en_route_at: Some(t(5)),
            on_scene_at: Some(t(12)),
            transporting_at: Some(t(30)),
            at_destination_at: Some(t(45)),
            handed_over_at: Some(t(70)),
            released_at: Some(t(80)),
        }
    }

    fn by_phase(list: &[Interval], p: Phase) -> &Interval {
        list.iter().find(|i| i.phase == p).unwrap()
    }

    #[test]
    fn a_whole_response_is_timed_phase_by_phase_against_its_priority() {
        let (i, u) = (incident(State::Closed), unit());
        let phases = incident_phases(&i, std::slice::from_ref(&u), &defaults(), t(100));
        let secs: Vec<Option<f64>> = phases.iter().map(|p| p.seconds).collect();
        assert_eq!(
            secs,
            [
                Some(60.0),
                Some(120.0),
                Some(60.0),
                Some(720.0),
                Some(4800.0)
            ]
        );
        let reg = by_phase(&phases, Phase::Regulation);
        assert_eq!(
            (reg.target_seconds, reg.over_target),
            (Some(60), Some(true))
        );
        let resp = by_phase(&phases, Phase::Response);
        assert_eq!(
            (resp.target_seconds, resp.over_target),
            (Some(600), Some(true))
        );
        let units = unit_phases(&i, &u, &defaults(), t(100));
        let secs: Vec<Option<f64>> = units.iter().map(|p| p.seconds).collect();
        assert_eq!(
            secs,
            [
                Some(60.0),
                Some(420.0),
                Some(1080.0),
                Some(900.0),
                Some(1500.0),
                Some(600.0)
            ]
        );
        let hold = by_phase(&units, Phase::HospitalHold);
        assert_eq!(
            (hold.target_seconds, hold.over_target),
            (Some(1200), Some(true))
        );
        assert!(units.iter().all(|p| p.status == PhaseStatus::Complete));
    }

    #[test]
    fn a_hand_over_not_recorded_is_flagged_and_the_return_counts_from_the_door() {
        let i = incident(State::Closed);
        let u = UnitTimes {
            handed_over_at: None,
            ..unit()
        };
        let units = unit_phases(&i, &u, &defaults(), t(100));
        let hold = by_phase(&units, Phase::HospitalHold);
        assert_eq!(hold.status, PhaseStatus::Missing);
        assert_eq!(hold.seconds, None);
        assert!(hold.reason.as_deref().unwrap().contains("handed_over_at"));
        let back = by_phase(&units, Phase::ReturnToService);
        assert_eq!(
            (back.status, back.seconds),
            (PhaseStatus::Complete, Some(2100.0))
        );
    }

    #[test]
    fn times_out_of_order_are_flagged_never_timed() {
        let mut i = incident(State::Closed);
        i.regulated_at = Some(t(0) - Duration::seconds(30));
        let phases = incident_phases(&i, &[unit()], &defaults(), t(100));
        let reg = by_phase(&phases, Phase::Regulation);
        assert_eq!(reg.status, PhaseStatus::OutOfOrder);
        assert_eq!((reg.seconds, reg.over_target), (None, None));
        assert!(reg.reason.as_deref().unwrap().starts_with("regulated_at ("));
    }

    #[test]
    fn a_phase_under_way_runs_and_is_over_once_past_its_target() {
        let i = incident(State::Dispatched);
        let u = UnitTimes {
            handed_over_at: None,
            released_at: None,
            ..unit()
        };
        let at = |now| unit_phases(&i, &u, &defaults(), now);
        let hold = |now| by_phase(&at(now), Phase::HospitalHold).clone();
        assert_eq!(hold(t(50)).status, PhaseStatus::Running);
        assert_eq!(hold(t(50)).over_target, None);
        assert_eq!(hold(t(66)).over_target, Some(true));
        let total = by_phase(
            &incident_phases(&i, std::slice::from_ref(&u), &defaults(), t(50)),
            Phase::Total,
        )
        .clone();
        assert_eq!(total.status, PhaseStatus::Running);
    }

    #[test]
    fn what_an_incident_never_reached_is_said_so() {
        // Closed without a unit: no activation, response or total.
        let i = incident(State::Closed);
        let phases = incident_phases(&i, &[], &defaults(), t(100));
        for p in [Phase::Activation, Phase::Response, Phase::Total] {
            assert_eq!(by_phase(&phases, p).status, PhaseStatus::NotReached, "{p}");
        }
        // A prank call ended in registration; an incident being registered has all to come.
        let mut prank = incident(State::Prank);
        (prank.submitted_at, prank.regulated_at) = (None, None);
        let phases = incident_phases(&prank, &[], &defaults(), t(100));
        assert_eq!(phases[0].status, PhaseStatus::NotReached);
        let mut new = prank.clone();
        new.state = State::Registering;
        let phases = incident_phases(&new, &[], &defaults(), t(100));
        assert_eq!(phases[0].status, PhaseStatus::Running);
        assert_eq!(phases[1].status, PhaseStatus::Pending);
        // No transport: the unit's transport phases were not reached, nothing is missing.
        let u = UnitTimes {
            transporting_at: None,
            at_destination_at: None,
            handed_over_at: None,
            ..unit()
        };
        let units = unit_phases(&incident(State::Closed), &u, &defaults(), t(100));
        for p in [
            Phase::OnScene,
            Phase::Transport,
            Phase::HospitalHold,
            Phase::ReturnToService,
        ] {
            assert_eq!(by_phase(&units, p).status, PhaseStatus::NotReached, "{p}");
        }
    }

    #[test]
    fn an_incidents_phases_are_filed_under_the_unit_whose_time_ended_them() {
        // Two units assigned at the same instant (the lower id is first), the second on
        // scene first, both released at the same instant (the lower id is last released).
        let one = UnitTimes {
            dispatch_id: 7,
            on_scene_at: Some(t(14)),
            ..unit()
        };
        let two = UnitTimes {
            dispatch_id: 5,
            ..unit()
        };
        let closed = incident(State::Closed);
        let marks = UnitMarks::of(&closed, &[one.clone(), two.clone()]);
        assert_eq!(marks.ended_by(Phase::Activation), Some(5));
        assert_eq!(marks.ended_by(Phase::Response), Some(5));
        assert_eq!(marks.ended_by(Phase::Total), Some(5));
        assert_eq!(marks.ended_by(Phase::CallTaking), None);
        let later = UnitTimes {
            released_at: Some(t(90)),
            ..one.clone()
        };
        let marks = UnitMarks::of(&closed, &[later, two.clone()]);
        assert_eq!(marks.ended_by(Phase::Total), Some(7));
        // Not over until every unit is released and the incident is final.
        let open = incident(State::Dispatched);
        assert_eq!(
            UnitMarks::of(&open, &[one, two]).ended_by(Phase::Total),
            None
        );
    }

    #[test]
    fn a_call_is_received_before_it_is_registered_within_a_day() {
        let now = t(0);
        assert_eq!(call_received_at(None, now), Ok(now));
        assert_eq!(call_received_at(Some(t(-5)), now), Ok(t(-5)));
        assert_eq!(call_received_at(Some(now), now), Ok(now));
        assert_eq!(call_received_at(Some(t(-24 * 60)), now), Ok(t(-24 * 60)));
        for bad in [t(1), t(-24 * 60 - 1)] {
            let Err(super::super::Refusal::InvalidFields(f)) = call_received_at(Some(bad), now)
            else {
                panic!("{bad} accepted")
            };
            assert_eq!(f[0].field, "call_received_at");
        }
    }

    #[test]
    fn a_priority_without_a_target_of_its_own_takes_the_any_one() {
        let targets = defaults();
        assert_eq!(
            targets.seconds(Phase::Regulation, Some(Priority::Critical)),
            Some(60)
        );
        assert_eq!(
            targets.seconds(Phase::Regulation, Some(Priority::Low)),
            Some(180)
        );
        assert_eq!(targets.seconds(Phase::Regulation, None), Some(180));
        assert_eq!(targets.seconds(Phase::Response, Some(Priority::Low)), None);
        assert_eq!(targets.seconds(Phase::Response, None), None);
    }
}
