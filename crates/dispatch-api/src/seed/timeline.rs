//! The demo's incidents as a script of the writes a shift makes (docs/dispatch-routes.md,
//! "Demo data"): who does what, and when, within a window that ends at the moment of seeding.
//! `seed` replays the script through the same store functions as the API, on a clock it sets
//! to each action's time, so every row and history entry has the real writes' shape.
//!
//! The window's older incidents are final (closed, cancelled, prank), each lived within a
//! few hours; its last hours hold the open ones: calls being taken, waiting for regulation,
//! regulated, and units on their way minutes ago. A unit serves one incident at a time, and
//! every active vehicle type keeps a free unit at the window's end.

use chrono::{DateTime, Duration, Utc};

use super::plan::{Plan, Rng, Scale, UnitSpec, UserSpec, person_name};
use super::words::*;
use crate::domain::dispatch::Status;
use crate::domain::form::IncidentForm;
use crate::domain::incident::{Priority, Sex, State};
use crate::domain::user::{Profile, UserStatus};

/// The span the demo's closed history covers on a first seed.
pub const HISTORY: Duration = Duration::days(21);

/// One write of the script, by the plan's user `user` (an index of `Plan::users`).
#[derive(Debug, Clone)]
pub struct Action {
    pub at: DateTime<Utc>,
    pub user: usize,
    pub step: Step,
}

/// The writes of the API the demo makes, with the plan's indexes instead of database ids.
#[derive(Debug, Clone)]
pub enum Step {
    /// `POST /incident` with the Basic data form, the call answered this many seconds
    /// before (`call_received_at`).
    Create(Box<IncidentForm>, i64),
    /// `PATCH /incident/{id}`: the whole form after the call taker's edit.
    Update(Box<IncidentForm>),
    Submit,
    Prank,
    Cancel(String),
    /// `POST /incident/{id}/send-to` another regulating physician (a plan user).
    SendTo(usize),
    Decide {
        action: &'static str,
        vehicle: Option<&'static str>,
        notes: String,
    },
    /// `POST /incident/{id}/dispatch` of the plan's unit, with the plan's health unit it
    /// takes the patient to, when it transports.
    Dispatch(usize, Option<usize>),
    /// `POST /dispatch/{id}/status` of the incident's latest dispatch.
    Move(Status),
    Intercurrence(&'static str, String),
    /// `POST /incident/{id}/transfer` to a plan user.
    Transfer(usize),
    Close(&'static str),
}

/// One incident's writes, in time order, and the state they leave it in.
#[derive(Debug, Clone)]
pub struct IncidentScript {
    pub state: State,
    pub actions: Vec<Action>,
}

/// The time the script fills: `(from, to]`, `to` being the moment of seeding.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

impl Window {
    /// A first seed: the whole demo history, ending at `now`.
    pub fn ending(now: DateTime<Utc>) -> Self {
        Self {
            from: now - HISTORY,
            to: now,
        }
    }
}

/// The incidents of a window, oldest first.
pub struct Timeline {
    pub incidents: Vec<IncidentScript>,
}

/// How many incidents are open at the window's end (a quarter in each open state).
fn open_count(scale: Scale) -> usize {
    match scale {
        Scale::Demo => 40,
        Scale::Test => 8,
    }
}

/// The demo's open incidents live in the window's last hours; the final ones before.
const OPEN_SPAN: Duration = Duration::hours(4);

/// Open incidents whose unit waits at a hospital's door past the alert at the window's end.
const HELD_AT_DOOR: usize = 2;

/// How long before the incident was created its call was answered: the call taker opens the
/// form while the caller speaks.
fn answered(rng: &mut Rng) -> i64 {
    5 + rng.below(25) as i64
}

impl Timeline {
    /// The script for `window`, at the scale's rate (its incidents per [`HISTORY`]), for a
    /// database that holds `existing` incidents: the same arguments always give the same
    /// script, whatever the day.
    pub fn build(plan: &Plan, scale: Scale, window: Window, existing: u64) -> Timeline {
        let mut rng = Rng::new(0x7113_11e5 ^ existing);
        let mut cast = Cast::new(plan);
        let open = open_count(scale);
        let closed_until = window.to - OPEN_SPAN;
        let span = (closed_until - window.from).num_seconds().max(0);
        let closed = (scale.incidents() as i64 * span / HISTORY.num_seconds()) as usize;
        let mut incidents = Vec::with_capacity(closed + open);
        // Open ones first: their units are reserved to the end, so the final incidents of
        // the last hours find others.
        let mut open_scripts: Vec<IncidentScript> = (0..open)
            .map(|i| {
                let state = [
                    State::Registering,
                    State::AwaitingRegulation,
                    State::Regulated,
                    State::Dispatched,
                ][i % 4];
                cast.open(&mut rng, state, window.to)
            })
            .collect();
        if span > 0 {
            let step = span / closed.max(1) as i64;
            for i in 0..closed {
                let jitter = rng.below(step.max(1) as usize) as i64;
                let created = window.from + Duration::seconds(i as i64 * step + jitter);
                incidents.push(cast.final_one(&mut rng, created));
            }
        }
        open_scripts.sort_by_key(|s| s.actions[0].at);
        incidents.extend(open_scripts);
        Timeline { incidents }
    }

    /// Every action of every incident in the order of time (ties: the older incident, then
    /// the script's order): `(incident, action)` indexes.
    pub fn in_time_order(&self) -> Vec<(usize, usize)> {
        let mut order: Vec<(DateTime<Utc>, usize, usize)> = self
            .incidents
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.actions.iter().enumerate().map(move |(a, x)| (x.at, i, a)))
            .collect();
        order.sort();
        order.into_iter().map(|(_, i, a)| (i, a)).collect()
    }
}

/// From the unit's assignment until it is free again (`None`: past the window's end).
type Busy = (DateTime<Utc>, Option<DateTime<Utc>>);

/// Who works the shift, and which unit is busy when.
struct Cast<'a> {
    tarm: Vec<usize>,
    regulators: Vec<usize>,
    fleet: Vec<usize>,
    /// Active employees (a transfer's targets).
    employees: Vec<usize>,
    units: &'a [UnitSpec],
    /// A transport's destinations: the active hospitals, emergency rooms, UPAs and
    /// maternity wards of the demo city (where the centre's bases are), not its health posts
    /// nor another city's units; any active unit only when the scale has none of those.
    hospitals: Vec<usize>,
    /// Per unit, the intervals it serves an incident.
    busy: Vec<Vec<Busy>>,
    prank_phones: Vec<String>,
    /// Whether the script has one of these writes yet: the first chance of each takes it,
    /// so every kind of write is in every demo.
    sent_to: bool,
    /// Open incidents whose unit is made to wait at a hospital's door past the 20-minute
    /// alert (the offload board's), so far.
    held_at_door: usize,
    transferred: bool,
    intercurrence: bool,
}

/// The plan's indexes of [`Cast::hospitals`].
fn destinations(plan: &Plan) -> Vec<usize> {
    let active = || {
        plan.health_units
            .iter()
            .enumerate()
            .filter(|(_, h)| h.active)
    };
    let receiving: Vec<usize> = active()
        .filter(|(_, h)| {
            h.city == CITIES[0].0
                && RECEIVING_KINDS
                    .iter()
                    .any(|k| h.name.starts_with(&format!("{k} ")))
        })
        .map(|(i, _)| i)
        .collect();
    if receiving.is_empty() {
        active().map(|(i, _)| i).collect()
    } else {
        receiving
    }
}

impl<'a> Cast<'a> {
    fn new(plan: &'a Plan) -> Self {
        let active = |users: &[UserSpec], p: Profile| -> Vec<usize> {
            users
                .iter()
                .enumerate()
                .filter(|(_, u)| u.profile == p && u.status == UserStatus::Active)
                .map(|(i, _)| i)
                .collect()
        };
        Self {
            tarm: active(&plan.users, Profile::Tarm),
            regulators: active(&plan.users, Profile::MedicoRegulador),
            fleet: active(&plan.users, Profile::OperadorFrota),
            employees: plan
                .users
                .iter()
                .enumerate()
                .filter(|(_, u)| u.registration.is_some() && u.status == UserStatus::Active)
                .map(|(i, _)| i)
                .collect(),
            units: &plan.units,
            hospitals: destinations(plan),
            busy: vec![Vec::new(); plan.units.len()],
            prank_phones: (0..12)
                .map(|i| format!("(12) 99{:03}-{:04}", 100 + i, 4321 + i))
                .collect(),
            sent_to: false,
            held_at_door: 0,
            transferred: false,
            intercurrence: false,
        }
    }

    /// An incident created at `created` that ends within a few hours.
    fn final_one(&mut self, rng: &mut Rng, created: DateTime<Utc>) -> IncidentScript {
        let mut s = Script::new(self.tarm(rng), created);
        let prank = rng.chance(9);
        // Pranksters call again: their numbers recur, now and then on real calls too.
        let prank_phone = prank || rng.chance(5);
        let form = self.basic_form(rng, prank_phone);
        s.push(
            s.taker,
            0,
            Step::Create(Box::new(form.clone()), answered(rng)),
        );
        if prank {
            s.push(s.taker, 60 + rng.below(120), Step::Prank);
            return s.done(State::Prank);
        }
        self.take_call(rng, &mut s, form);
        if rng.chance(4) {
            let reason = "Solicitante desistiu do atendimento.".to_owned();
            s.push(s.taker, 120 + rng.below(600), Step::Cancel(reason));
            return s.done(State::Cancelled);
        }
        let regulator = self.regulate(rng, &mut s, false);
        let vehicle = s.vehicle;
        if rng.chance(4) {
            let reason = "Paciente removido por meios próprios.".to_owned();
            s.push(regulator, 300 + rng.below(600), Step::Cancel(reason));
            return s.done(State::Cancelled);
        }
        let sent = vehicle.is_some_and(|v| self.send_unit(rng, &mut s, v));
        let conclusion = if sent {
            CONCLUSIONS[rng.below(2)]
        } else {
            CONCLUSIONS[2 + rng.below(2)]
        };
        s.push(regulator, 300 + rng.below(600), Step::Close(conclusion));
        s.done(State::Closed)
    }

    /// An incident open at `end`, in `state`, created in the last hours before it.
    fn open(&mut self, rng: &mut Rng, state: State, end: DateTime<Utc>) -> IncidentScript {
        // The first dispatched ones keep a unit at a hospital's door past the alert.
        let hold = state == State::Dispatched && self.held_at_door < HELD_AT_DOOR;
        let age_minutes = match state {
            State::Registering => 2 + rng.below(20),
            State::AwaitingRegulation => 10 + rng.below(50),
            State::Regulated => 20 + rng.below(70),
            _ if hold => 150 + rng.below(30),
            _ => 45 + rng.below(120),
        };
        let created = end - Duration::seconds(age_minutes as i64 * 60 + rng.below(60) as i64);
        let mut s = Script::new(self.tarm(rng), created);
        let form = self.basic_form(rng, false);
        s.push(
            s.taker,
            0,
            Step::Create(Box::new(form.clone()), answered(rng)),
        );
        if state == State::Registering {
            return s.done(state);
        }
        self.take_call(rng, &mut s, form);
        if state == State::AwaitingRegulation {
            return s.done(state);
        }
        self.regulate(rng, &mut s, state == State::Dispatched);
        if state == State::Dispatched {
            let vehicle = s.vehicle.unwrap_or("USB");
            if hold {
                self.held_at_door += 1;
            }
            if self.send_unit_open(rng, &mut s, vehicle, end, hold) {
                return s.done(State::Dispatched);
            }
        }
        s.done(State::Regulated)
    }

    fn tarm(&self, rng: &mut Rng) -> usize {
        *rng.pick(&self.tarm)
    }

    fn basic_form(&self, rng: &mut Rng, prank_phone: bool) -> IncidentForm {
        let (city, _, ddd) = *rng.pick(CITIES);
        let caller_phone = if prank_phone {
            rng.pick(&self.prank_phones).clone()
        } else {
            format!("({ddd}) 9{:04}-{:04}", rng.below(10_000), rng.below(10_000))
        };
        IncidentForm {
            caller_name: person_name(rng),
            caller_phone,
            address: format!(
                "{}, {} - {}",
                rng.pick(STREETS),
                10 + rng.below(2000),
                rng.pick(PLACES)
            ),
            city: city.to_owned(),
            complaint: rng.word(COMPLAINTS).to_owned(),
            // The Occurrence and Patient forms come later (`take_call`).
            ..IncidentForm::default()
        }
    }

    /// The call taker fills the Occurrence and Patient forms and submits to regulation.
    fn take_call(&mut self, rng: &mut Rng, s: &mut Script, mut form: IncidentForm) {
        form.occurrence_type = Some((*rng.pick(OCCURRENCE_TYPES)).to_owned());
        form.priority = Priority::parse(rng.word(PRIORITIES));
        form.occurrence_notes = Some(format!(
            "Solicitante relata {}.",
            form.complaint.to_lowercase()
        ));
        form.patient_name = Some(if rng.chance(80) {
            person_name(rng)
        } else {
            form.caller_name.clone()
        });
        form.patient_age = Some(rng.below(95) as i32 + 1);
        form.patient_sex = Some(*rng.pick(&[Sex::F, Sex::M, Sex::F, Sex::M, Sex::X]));
        // A critical call is taken and handled faster than the others (and still, now and
        // then, past its targets: the report shows both).
        s.urgent = form.priority == Some(Priority::Critical);
        let pace = s.pace();
        s.push(
            s.taker,
            pace(20 + rng.below(100)),
            Step::Update(Box::new(form)),
        );
        s.push(s.taker, pace(10 + rng.below(40)), Step::Submit);
    }

    /// A regulating physician decides (sometimes after a colleague sends it on); answers who.
    fn regulate(&mut self, rng: &mut Rng, s: &mut Script, must_send: bool) -> usize {
        let mut regulator = *rng.pick(&self.regulators);
        if (!self.sent_to || rng.chance(5)) && self.regulators.len() > 1 {
            let other = *rng.pick(&self.regulators);
            if other != regulator {
                self.sent_to = true;
                s.push(regulator, 30 + rng.below(90), Step::SendTo(other));
                regulator = other;
            }
        }
        let sending: Vec<_> = DECISION_ACTIONS
            .iter()
            .filter(|a| a.1 && !a.2 && a.3.is_some())
            .collect();
        let any: Vec<_> = DECISION_ACTIONS.iter().filter(|a| a.1 && !a.2).collect();
        let action = if must_send || rng.chance(70) {
            rng.pick(&sending)
        } else {
            rng.pick(&any)
        };
        s.vehicle = action.3;
        let pace = s.pace();
        s.push(
            regulator,
            pace(60 + rng.below(420)),
            Step::Decide {
                action: action.0,
                vehicle: action.3,
                notes: format!("Regulado: {}.", action.0.to_lowercase()),
            },
        );
        regulator
    }

    /// Units of `vehicle` free over `[from, until)` (`None`: to the window's end).
    fn free(&self, vehicle: &str, from: DateTime<Utc>, until: Option<DateTime<Utc>>) -> Vec<usize> {
        (0..self.units.len())
            .filter(|u| self.units[*u].active && self.units[*u].type_name == vehicle)
            .filter(|u| {
                self.busy[*u].iter().all(|(a, b)| {
                    let ends_before = until.is_some_and(|until| until <= *a);
                    let starts_after = b.is_some_and(|b| from >= b);
                    ends_before || starts_after
                })
            })
            .collect()
    }

    /// A unit's whole attendance on a final incident, released at the end; `false` (and
    /// nothing written) when no unit of the type is free for it.
    fn send_unit(&mut self, rng: &mut Rng, s: &mut Script, vehicle: &str) -> bool {
        let fleet = *rng.pick(&self.fleet);
        let pace = s.pace();
        let assigned = s.at + Duration::seconds(pace(10 + rng.below(110)) as i64);
        let mut steps = vec![(Status::EnRoute, pace(20 + rng.below(100)))];
        steps.push((Status::OnScene, pace(300 + rng.below(900))));
        let transports = rng.chance(60);
        if transports {
            steps.push((Status::Transporting, 600 + rng.below(900)));
            steps.push((Status::AtDestination, 600 + rng.below(1200)));
            // The stretcher held at the hospital: now and then far beyond 20 minutes.
            let hold = if rng.chance(15) {
                1800 + rng.below(2400)
            } else {
                300 + rng.below(900)
            };
            // Now and then the crew does not record the hand-over: the report counts the
            // hold as missing rather than guess it.
            if rng.chance(5) {
                steps.push((Status::Released, hold + 300));
            } else {
                steps.push((Status::HandedOver, hold));
                steps.push((Status::Released, 300 + rng.below(600)));
            }
        } else {
            steps.push((Status::Released, 600 + rng.below(600)));
        }
        let total: usize = steps.iter().map(|(_, d)| d).sum();
        let released = assigned + Duration::seconds(total as i64);
        let free = self.free(vehicle, assigned, Some(released + Duration::minutes(5)));
        let Some(&unit) = free.get(rng.below(free.len().max(1))) else {
            return false;
        };
        self.busy[unit].push((assigned, Some(released + Duration::minutes(5))));
        let destination = transports.then(|| *rng.pick(&self.hospitals));
        s.push_at(fleet, assigned, Step::Dispatch(unit, destination));
        for (i, (status, secs)) in steps.into_iter().enumerate() {
            s.push(fleet, secs, Step::Move(status));
            if i == 1 && (!self.intercurrence || rng.chance(12)) {
                self.intercurrence = true;
                let name = rng.pick(&INTERCURRENCES[..8]).0;
                let notes = "Registrada pela equipe em atendimento.".to_owned();
                s.push(fleet, 60, Step::Intercurrence(name, notes));
            }
            if i == 1 && (!self.transferred || rng.chance(5)) {
                self.transferred = true;
                let to = *rng.pick(&self.employees);
                s.push(fleet, 30, Step::Transfer(to));
            }
        }
        true
    }

    /// A unit still on its way or at work at `end`: some of its steps taken, the last one
    /// minutes before `end`. Keeps a free unit of every type.
    fn send_unit_open(
        &mut self,
        rng: &mut Rng,
        s: &mut Script,
        vehicle: &str,
        end: DateTime<Utc>,
        hold: bool,
    ) -> bool {
        let fleet = *rng.pick(&self.fleet);
        let assigned = s.at + Duration::seconds(60 + rng.below(180) as i64);
        let mut free = self.free(vehicle, assigned, None);
        if free.len() < 2 {
            // The last free unit of a type stays free; the incident waits for another.
            free = self.free("USB", assigned, None);
            if free.len() < 2 {
                return false;
            }
        }
        let unit = free[rng.below(free.len())];
        self.busy[unit].push((assigned, None));
        let transports = hold || rng.chance(60);
        let destination = transports.then(|| *rng.pick(&self.hospitals));
        s.push_at(fleet, assigned, Step::Dispatch(unit, destination));
        let mut plan = vec![
            (Status::EnRoute, 60 + rng.below(120)),
            (Status::OnScene, 300 + rng.below(900)),
        ];
        if transports {
            plan.push((Status::Transporting, 600 + rng.below(900)));
            plan.push((Status::AtDestination, 600 + rng.below(1200)));
        }
        let wanted = if hold {
            plan.len()
        } else {
            rng.below(plan.len() + 1)
        };
        for (status, secs) in plan.into_iter().take(wanted) {
            let at = s.at + Duration::seconds(secs as i64);
            if at >= end - Duration::minutes(1) {
                break;
            }
            s.push(fleet, secs, Step::Move(status));
        }
        true
    }
}

/// An incident's script being written: the actions so far and the time of the last.
struct Script {
    taker: usize,
    at: DateTime<Utc>,
    vehicle: Option<&'static str>,
    /// A critical call: taken, regulated and reached faster.
    urgent: bool,
    actions: Vec<Action>,
}

impl Script {
    fn new(taker: usize, created: DateTime<Utc>) -> Self {
        Self {
            taker,
            at: created,
            vehicle: None,
            urgent: false,
            actions: Vec::new(),
        }
    }

    /// How long a step takes at this call's pace: half for a critical one.
    fn pace(&self) -> impl Fn(usize) -> usize + use<> {
        let urgent = self.urgent;
        move |secs| if urgent { secs / 2 } else { secs }
    }

    /// `step` by `user`, `after` seconds after the previous action.
    fn push(&mut self, user: usize, after: usize, step: Step) {
        let at = self.at + Duration::seconds(after as i64);
        self.push_at(user, at, step);
    }

    fn push_at(&mut self, user: usize, at: DateTime<Utc>, step: Step) {
        self.at = at;
        self.actions.push(Action { at, user, step });
    }

    fn done(self, state: State) -> IncidentScript {
        IncidentScript {
            state,
            actions: self.actions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::plan::build;

    fn window() -> Window {
        Window::ending(DateTime::from_timestamp(1_900_000_000, 0).unwrap())
    }

    #[test]
    fn the_script_is_deterministic_and_covers_every_state() {
        let plan = build(Scale::Test);
        let (a, b) = (
            Timeline::build(&plan, Scale::Test, window(), 0),
            Timeline::build(&plan, Scale::Test, window(), 0),
        );
        let states = |t: &Timeline| t.incidents.iter().map(|i| i.state).collect::<Vec<_>>();
        assert_eq!(states(&a), states(&b));
        for state in State::ALL {
            assert!(a.incidents.iter().any(|i| i.state == state), "{state}");
        }
    }

    #[test]
    fn every_action_lies_in_the_window_and_each_incident_moves_forward() {
        let plan = build(Scale::Demo);
        let w = window();
        let t = Timeline::build(&plan, Scale::Demo, w, 0);
        assert!(t.incidents.len() >= 3_000, "{}", t.incidents.len());
        for i in &t.incidents {
            let times: Vec<_> = i.actions.iter().map(|a| a.at).collect();
            assert!(times.windows(2).all(|p| p[0] <= p[1]), "{times:?}");
            assert!(times[0] > w.from && *times.last().unwrap() < w.to);
        }
    }

    #[test]
    fn a_unit_serves_one_incident_at_a_time_and_every_type_keeps_a_free_unit() {
        let plan = build(Scale::Demo);
        let t = Timeline::build(&plan, Scale::Demo, window(), 0);
        // Replay the dispatches in time order: a unit is never sent while busy.
        let mut busy = vec![None::<usize>; plan.units.len()];
        let mut latest = vec![None::<usize>; t.incidents.len()];
        for (i, a) in t.in_time_order() {
            match &t.incidents[i].actions[a].step {
                Step::Dispatch(u, _) => {
                    assert_eq!(busy[*u], None, "unit {u} sent while busy");
                    busy[*u] = Some(i);
                    latest[i] = Some(*u);
                }
                Step::Move(Status::Released) => busy[latest[i].unwrap()] = None,
                _ => {}
            }
        }
        for (name, _, _) in MOBILE_UNIT_TYPES.iter().filter(|t| t.2) {
            let free = plan
                .units
                .iter()
                .enumerate()
                .filter(|(u, unit)| unit.active && unit.type_name == *name && busy[*u].is_none())
                .count();
            assert!(free >= 1, "no free {name} at the end");
        }
    }
}
