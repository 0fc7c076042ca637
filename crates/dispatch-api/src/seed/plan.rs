//! The demo data as plain values, built from a fixed seed: the same scale always yields the
//! same plan. No database here; `seed::run_with` writes the plan.

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;

use super::words::*;
use crate::domain::form::group_of;
use crate::domain::incident::State;
use crate::domain::user::Profile;
use crate::store::writes::Changes;

/// How much data to make. `Demo` is the real scale (`dispatch-api seed`); `Test` is the
/// same generator with smaller counts, so every HTTP test can seed its own database fast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Demo,
    Test,
}

impl Scale {
    fn health_units(self) -> usize {
        match self {
            Scale::Demo => 7_458,
            Scale::Test => 300,
        }
    }
    fn staff(self) -> usize {
        match self {
            Scale::Demo => 300,
            Scale::Test => 40,
        }
    }
    fn incidents(self) -> usize {
        match self {
            Scale::Demo => 3_000,
            Scale::Test => 80,
        }
    }
}

/// splitmix64: tiny, fast and fully determined by its seed, which is all demo data needs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn word(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }
    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

pub struct UserSpec {
    pub login: String,
    pub name: String,
    pub profile: Profile,
    pub status: &'static str,
    pub professional_type: Option<&'static str>,
    pub team: Option<&'static str>,
    pub registration: Option<String>,
    pub phone: Option<String>,
    pub unallocated: Option<&'static str>,
}

pub struct HealthUnitSpec {
    pub cnes: String,
    pub name: String,
    pub city: &'static str,
    pub uf: &'static str,
    pub active: bool,
}

pub struct UnitSpec {
    pub name: String,
    pub plate: String,
    pub type_name: &'static str,
    pub base: &'static str,
    pub active: bool,
}

pub struct DecisionSpec {
    pub action: &'static str,
    pub vehicle: Option<&'static str>,
    pub regulator: usize,
    pub notes: String,
    pub at: DateTime<Utc>,
}

pub struct DispatchSpec {
    pub unit: usize,
    pub status: &'static str,
    pub assigned_by: usize,
    /// assigned, en_route, on_scene, transporting, at_destination, released
    pub times: [Option<DateTime<Utc>>; 6],
    pub destination: Option<usize>,
}

/// One history row, in the shape the real writes record (`store::writes::Changes`).
pub struct HistorySpec {
    pub user: usize,
    pub at: DateTime<Utc>,
    pub action: &'static str,
    pub changes: Changes,
}

impl HistorySpec {
    fn with(&mut self, more: impl FnOnce(Changes) -> Changes) {
        self.changes = more(std::mem::take(&mut self.changes));
    }
}

pub struct IncidentSpec {
    pub number: String,
    pub state: &'static str,
    pub created_by: usize,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub caller_name: String,
    pub caller_phone: String,
    pub address: String,
    pub city: &'static str,
    pub complaint: &'static str,
    pub occurrence_type: Option<&'static str>,
    pub priority: Option<&'static str>,
    pub occurrence_notes: Option<String>,
    pub patient_name: Option<String>,
    pub patient_age: Option<i32>,
    pub patient_sex: Option<&'static str>,
    pub regulator: Option<usize>,
    pub regulated_at: Option<DateTime<Utc>>,
    pub conclusion: Option<&'static str>,
    pub closed_at: Option<DateTime<Utc>>,
    pub decision: Option<DecisionSpec>,
    pub dispatch: Option<DispatchSpec>,
    pub intercurrence: Option<(&'static str, usize, DateTime<Utc>)>,
    pub prank_by: Option<usize>,
    pub history: Vec<HistorySpec>,
}

pub struct Plan {
    pub users: Vec<UserSpec>,
    pub health_units: Vec<HealthUnitSpec>,
    pub units: Vec<UnitSpec>,
    pub incidents: Vec<IncidentSpec>,
}

/// The logins the README and the tests rely on: one active user per profile, one inactive.
pub const DEMO_USERS: [(&str, &str, Profile, &str); 5] = [
    ("admin", "Ana Administradora", Profile::Admin, "ativo"),
    ("tarm", "Tiago Atendente", Profile::Tarm, "ativo"),
    (
        "regulador",
        "Dra. Regina Reguladora",
        Profile::MedicoRegulador,
        "ativo",
    ),
    ("frota", "Fábio da Frota", Profile::OperadorFrota, "ativo"),
    ("inativo", "Ivo Inativo", Profile::Tarm, "inativo"),
];

pub fn build(scale: Scale) -> Plan {
    let mut rng = Rng::new(0x5a3u64 << 20 | 192);
    let users = users(&mut rng, scale);
    let health_units = health_units(&mut rng, scale);
    let units = units(&mut rng);
    let incidents = Incidents::new(&users, &units, health_units.len()).build(&mut rng, scale);
    Plan {
        users,
        health_units,
        units,
        incidents,
    }
}

pub fn person_name(rng: &mut Rng) -> String {
    format!(
        "{} {} {}",
        rng.pick(FIRST_NAMES),
        rng.pick(LAST_NAMES),
        rng.pick(LAST_NAMES)
    )
}

/// ASCII login of a display name: "Conceição Simões" -> "conceicao.simoes".
fn login_of(name: &str, n: usize) -> String {
    let folded = crate::search::fold(name);
    let parts: Vec<&str> = folded.split_whitespace().filter(|p| p.len() > 2).collect();
    let first = parts.first().copied().unwrap_or("user");
    let last = parts.last().copied().unwrap_or("x");
    format!("{first}.{last}.{n}")
}

fn professional_type_of(profile: Profile, rng: &mut Rng) -> &'static str {
    match profile {
        Profile::Admin => "Administrativo",
        Profile::Tarm => "Técnico Auxiliar de Regulação Médica",
        Profile::MedicoRegulador => "Médico",
        _ => rng.word(&["Condutor Socorrista", "Rádio-operador", "Enfermeiro"]),
    }
}

fn users(rng: &mut Rng, scale: Scale) -> Vec<UserSpec> {
    let mut out: Vec<UserSpec> = DEMO_USERS
        .iter()
        .enumerate()
        .map(|(i, (login, name, profile, status))| UserSpec {
            login: (*login).to_owned(),
            name: (*name).to_owned(),
            profile: *profile,
            status,
            professional_type: Some(professional_type_of(*profile, rng)),
            team: Some(TEAMS[i % TEAMS.len()]),
            registration: (*profile != Profile::Admin).then(|| format!("MAT-{:05}", i + 1)),
            phone: Some(format!("(12) 98{:03}-{:04}", i, i * 7)),
            // The demo fleet operator and call taker are unallocated, so `include_self` shows.
            unallocated: matches!(*login, "frota" | "tarm").then_some("Aguardando escala"),
        })
        .collect();
    for n in 0..scale.staff() {
        let profile = match n % 10 {
            0 => Profile::Admin,
            1..=3 => Profile::Tarm,
            4..=6 => Profile::MedicoRegulador,
            _ => Profile::OperadorFrota,
        };
        let name = person_name(rng);
        let status = if rng.chance(8) { "inativo" } else { "ativo" };
        let i = out.len();
        out.push(UserSpec {
            login: login_of(&name, n + 1),
            name,
            profile,
            status,
            // Some staff have no type or team yet: the user record shows null then.
            professional_type: (!rng.chance(5)).then(|| professional_type_of(profile, rng)),
            team: (!rng.chance(10)).then(|| *rng.pick(TEAMS)),
            registration: (profile != Profile::Admin).then(|| format!("MAT-{:05}", i + 1)),
            phone: Some(format!(
                "({}) 9{:04}-{:04}",
                CITIES[n % CITIES.len()].2,
                rng.below(10_000),
                rng.below(10_000)
            )),
            unallocated: (status == "ativo" && profile != Profile::Admin && rng.chance(12))
                .then(|| *rng.pick(UNALLOCATED_REASONS)),
        });
    }
    out
}

fn health_units(rng: &mut Rng, scale: Scale) -> Vec<HealthUnitSpec> {
    // Every (kind, place, city) once, in a shuffled but fixed order, cut at the scale.
    let mut combos: Vec<(usize, usize, usize)> = Vec::new();
    for c in 0..CITIES.len() {
        for k in 0..HEALTH_UNIT_KINDS.len() {
            for p in 0..PLACES.len() {
                combos.push((k, p, c));
            }
        }
    }
    for i in (1..combos.len()).rev() {
        let j = rng.below(i + 1);
        combos.swap(i, j);
    }
    combos
        .into_iter()
        .take(scale.health_units())
        .enumerate()
        .map(|(i, (k, p, c))| HealthUnitSpec {
            cnes: format!("{:07}", 2_000_000 + i * 7),
            name: format!("{} {}", HEALTH_UNIT_KINDS[k], PLACES[p]),
            city: CITIES[c].0,
            uf: CITIES[c].1,
            active: !rng.chance(3),
        })
        .collect()
}

fn units(rng: &mut Rng) -> Vec<UnitSpec> {
    let mut out = Vec::new();
    for (type_name, count, inactive) in FLEET {
        for n in 1..=*count {
            let base = *rng.pick(PLACES);
            let letters: String = (0..3)
                .map(|_| char::from(b'A' + rng.below(26) as u8))
                .collect();
            out.push(UnitSpec {
                name: format!("{type_name} {n:02} - {base}"),
                plate: format!(
                    "{letters}{}{}{:02}",
                    rng.below(10),
                    char::from(b'A' + rng.below(10) as u8),
                    out.len()
                ),
                type_name,
                base,
                active: n > *inactive,
            });
        }
    }
    out
}

/// Builds incidents oldest first: old ones are final (closed, cancelled, prank), the newest
/// tenth is still open, and only as many are `dispatched` as there are free active units.
struct Incidents<'a> {
    by_profile: [Vec<usize>; 4],
    units: &'a [UnitSpec],
    health_units: usize,
    free_units: Vec<usize>,
    prank_phones: Vec<String>,
}

const STEPS: [&str; 6] = [
    "assigned",
    "en_route",
    "on_scene",
    "transporting",
    "at_destination",
    "released",
];

impl<'a> Incidents<'a> {
    fn new(users: &[UserSpec], units: &'a [UnitSpec], health_units: usize) -> Self {
        let active_of = |p: Profile| -> Vec<usize> {
            users
                .iter()
                .enumerate()
                .filter(|(_, u)| u.profile == p && u.status == "ativo")
                .map(|(i, _)| i)
                .collect()
        };
        Self {
            by_profile: [
                active_of(Profile::Tarm),
                active_of(Profile::MedicoRegulador),
                active_of(Profile::OperadorFrota),
                active_of(Profile::Admin),
            ],
            units,
            health_units,
            free_units: units
                .iter()
                .enumerate()
                .filter(|(_, u)| u.active)
                .map(|(i, _)| i)
                .collect(),
            prank_phones: (0..12)
                .map(|i| format!("(12) 99{:03}-{:04}", 100 + i, 4321 + i))
                .collect(),
        }
    }

    fn build(mut self, rng: &mut Rng, scale: Scale) -> Vec<IncidentSpec> {
        let n = scale.incidents();
        let open_from = n - n / 10;
        let base = Utc
            .with_ymd_and_hms(2026, 11, 1, 0, 0, 0)
            .single()
            .unwrap_or_default();
        let span = Duration::days(22).num_seconds() / n as i64;
        (0..n)
            .map(|i| {
                let created = base + Duration::seconds(i as i64 * span + rng.below(600) as i64);
                let state = if i < open_from {
                    *rng.pick(&[
                        "closed",
                        "closed",
                        "closed",
                        "closed",
                        "closed",
                        "closed",
                        "cancelled",
                        "prank",
                    ])
                } else {
                    // Cycle so a small scale still holds every open state.
                    [
                        "registering",
                        "awaiting_regulation",
                        "regulated",
                        "dispatched",
                    ][i % 4]
                };
                self.incident(rng, i, created, state)
            })
            .collect()
    }

    fn user(&self, rng: &mut Rng, profile: usize) -> usize {
        *rng.pick(&self.by_profile[profile])
    }

    fn incident(
        &mut self,
        rng: &mut Rng,
        i: usize,
        created: DateTime<Utc>,
        state: &'static str,
    ) -> IncidentSpec {
        let (city, _, ddd) = *rng.pick(CITIES);
        let tarm = self.user(rng, 0);
        let prank_phone = rng.chance(6) || state == "prank";
        let caller_phone = if prank_phone {
            rng.pick(&self.prank_phones).clone()
        } else {
            format!("({ddd}) 9{:04}-{:04}", rng.below(10_000), rng.below(10_000))
        };
        let mut spec = IncidentSpec {
            number: format!("2026-{:06}", i + 1),
            state,
            created_by: tarm,
            created_at: created,
            updated_at: created,
            caller_name: person_name(rng),
            caller_phone,
            address: format!(
                "{}, {} - {}",
                rng.pick(STREETS),
                10 + rng.below(2000),
                rng.pick(PLACES)
            ),
            city,
            complaint: rng.word(COMPLAINTS),
            occurrence_type: None,
            priority: None,
            occurrence_notes: None,
            patient_name: None,
            patient_age: None,
            patient_sex: None,
            regulator: None,
            regulated_at: None,
            conclusion: None,
            closed_at: None,
            decision: None,
            dispatch: None,
            intercurrence: None,
            prank_by: None,
            history: Vec::new(),
        };
        let mut at = created;
        spec.history.push(HistorySpec {
            user: tarm,
            at,
            action: "created",
            changes: created_changes(&spec),
        });
        if state == "registering" {
            return self.finish(spec, at);
        }
        if state == "prank" {
            at += Duration::seconds(60 + rng.below(120) as i64);
            spec.prank_by = Some(tarm);
            spec.closed_at = Some(at);
            spec.history
                .push(transition(tarm, at, "prank_call", "registering", "prank"));
            return self.finish(spec, at);
        }
        // Occurrence and patient come with the submission to regulation.
        at += Duration::seconds(90 + rng.below(240) as i64);
        spec.occurrence_type = Some(*rng.pick(OCCURRENCE_TYPES));
        spec.priority = Some(*rng.pick(PRIORITIES));
        spec.occurrence_notes = Some(format!(
            "Solicitante relata {}.",
            spec.complaint.to_lowercase()
        ));
        spec.patient_name = Some(if rng.chance(80) {
            person_name(rng)
        } else {
            spec.caller_name.clone()
        });
        spec.patient_age = Some(rng.below(95) as i32 + 1);
        spec.patient_sex = Some(*rng.pick(&["F", "M", "F", "M", "X"]));
        let mut h = transition(tarm, at, "submitted", "registering", "awaiting_regulation");
        h.with(|c| {
            c.field(
                "occurrence",
                "occurrence_type",
                None::<()>,
                spec.occurrence_type,
            )
            .field("occurrence", "priority", None::<()>, spec.priority)
            .field(
                "occurrence",
                "occurrence_notes",
                None::<()>,
                &spec.occurrence_notes,
            )
            .field("patient", "patient_name", None::<()>, &spec.patient_name)
            .field("patient", "patient_age", None::<()>, spec.patient_age)
            .field("patient", "patient_sex", None::<()>, spec.patient_sex)
        });
        spec.history.push(h);
        let cancel = state == "cancelled";
        if state == "awaiting_regulation" || (cancel && rng.chance(50)) {
            if cancel {
                at += Duration::seconds(300);
                spec.closed_at = Some(at);
                spec.history.push(transition(
                    tarm,
                    at,
                    "cancelled",
                    "awaiting_regulation",
                    "cancelled",
                ));
            }
            return self.finish(spec, at);
        }
        at = self.regulate(rng, &mut spec, at);
        if cancel {
            at += Duration::seconds(300);
            spec.closed_at = Some(at);
            let by = spec.regulator.unwrap_or(tarm);
            spec.history
                .push(transition(by, at, "cancelled", "regulated", "cancelled"));
            return self.finish(spec, at);
        }
        if state == "regulated" {
            return self.finish(spec, at);
        }
        let sends_unit = spec.decision.as_ref().is_some_and(|d| d.vehicle.is_some());
        if sends_unit {
            at = self.dispatch(rng, &mut spec, at, state == "dispatched");
        }
        if state == "closed" {
            at += Duration::seconds(600);
            let regulator = spec.regulator.unwrap_or(tarm);
            let from = if spec.dispatch.is_some() {
                "dispatched"
            } else {
                "regulated"
            };
            spec.conclusion = Some(if spec.dispatch.is_some() {
                CONCLUSIONS[rng.below(2)]
            } else {
                CONCLUSIONS[2 + rng.below(2)]
            });
            spec.closed_at = Some(at);
            let mut h = transition(regulator, at, "closed", from, "closed");
            h.with(|c| c.field("conclusion", "conclusion", None::<()>, spec.conclusion));
            spec.history.push(h);
        }
        self.finish(spec, at)
    }

    fn regulate(
        &mut self,
        rng: &mut Rng,
        spec: &mut IncidentSpec,
        mut at: DateTime<Utc>,
    ) -> DateTime<Utc> {
        let regulator = self.user(rng, 1);
        at += Duration::seconds(120 + rng.below(600) as i64);
        // Open incidents in `dispatched` need an action that sends a vehicle.
        let sending: Vec<_> = DECISION_ACTIONS
            .iter()
            .filter(|a| a.1 && !a.2 && a.3.is_some())
            .collect();
        let any: Vec<_> = DECISION_ACTIONS.iter().filter(|a| a.1 && !a.2).collect();
        let action = if spec.state == "dispatched" || rng.chance(70) {
            rng.pick(&sending)
        } else {
            rng.pick(&any)
        };
        spec.regulator = Some(regulator);
        spec.regulated_at = Some(at);
        spec.decision = Some(DecisionSpec {
            action: action.0,
            vehicle: action.3,
            regulator,
            notes: format!("Regulado: {}.", action.0.to_lowercase()),
            at,
        });
        let mut h = transition(
            regulator,
            at,
            "technical_decision",
            "awaiting_regulation",
            "regulated",
        );
        let notes = spec.decision.as_ref().map(|d| d.notes.clone());
        h.with(|c| {
            c.record("technical_decisions", "action", json!(action.0))
                .record("technical_decisions", "notes", json!(notes))
                .group("regulation")
        });
        spec.history.push(h);
        at
    }

    /// A unit on the incident: in progress (and busy) when `open`, else released.
    fn dispatch(
        &mut self,
        rng: &mut Rng,
        spec: &mut IncidentSpec,
        mut at: DateTime<Utc>,
        open: bool,
    ) -> DateTime<Utc> {
        let vehicle = spec
            .decision
            .as_ref()
            .and_then(|d| d.vehicle)
            .unwrap_or("USB");
        let candidates: Vec<usize> = if open {
            self.free_units
                .iter()
                .copied()
                .filter(|u| self.units[*u].type_name == vehicle)
                .collect()
        } else {
            (0..self.units.len())
                .filter(|u| self.units[*u].type_name == vehicle)
                .collect()
        };
        let Some(&unit) = candidates.get(rng.below(candidates.len().max(1))) else {
            // No free unit of that type: the incident stays regulated, as it would for real.
            spec.state = "regulated";
            return at;
        };
        if open {
            self.free_units.retain(|u| *u != unit);
        }
        let fleet = self.user(rng, 2);
        let transports = rng.chance(60);
        let last = if open { rng.below(5) } else { 5 };
        let mut times = [None; 6];
        for (step, time) in times.iter_mut().enumerate().take(last + 1) {
            if !transports && (step == 3 || step == 4) {
                continue;
            }
            at += Duration::seconds(60 + rng.below(900) as i64);
            *time = Some(at);
        }
        let status_index = (0..=last).rev().find(|s| times[*s].is_some()).unwrap_or(0);
        let mut h = transition(
            fleet,
            times[0].unwrap_or(at),
            "dispatched",
            "regulated",
            "dispatched",
        );
        let unit_name = self.units[unit].name.clone();
        h.with(|c| {
            let dispatch = json!({"mobile_unit": unit_name, "status": STEPS[0]});
            c.record("dispatches", "dispatch", dispatch)
        });
        spec.history.push(h);
        let mut from = STEPS[0];
        for (step, time) in times.iter().enumerate().skip(1) {
            if let Some(t) = time {
                let moved = json!({"status": {"from": from, "to": STEPS[step]}});
                spec.history.push(HistorySpec {
                    user: fleet,
                    at: *t,
                    action: "dispatch_status",
                    changes: Changes::new().record("dispatches", "dispatch", moved),
                });
                from = STEPS[step];
            }
        }
        if rng.chance(12) {
            spec.intercurrence = Some((rng.pick(&INTERCURRENCES[..8]).0, fleet, at));
        }
        spec.dispatch = Some(DispatchSpec {
            unit,
            status: STEPS[status_index],
            assigned_by: fleet,
            times,
            destination: (transports && status_index >= 3).then(|| rng.below(self.health_units)),
        });
        at
    }

    fn finish(&self, mut spec: IncidentSpec, at: DateTime<Utc>) -> IncidentSpec {
        spec.updated_at = at;
        spec
    }
}

fn transition(
    user: usize,
    at: DateTime<Utc>,
    action: &'static str,
    from: &str,
    to: &str,
) -> HistorySpec {
    let state = |s: &str| State::parse(s).expect("a state of the incident");
    HistorySpec {
        user,
        at,
        action,
        changes: Changes::new().state(state(from), state(to)),
    }
}

/// `created`: the state and every field the Basic data form filled, as `POST /incident`
/// records them.
fn created_changes(spec: &IncidentSpec) -> Changes {
    let basic = [
        ("caller_name", spec.caller_name.as_str()),
        ("caller_phone", spec.caller_phone.as_str()),
        ("address", spec.address.as_str()),
        ("city", spec.city),
        ("complaint", spec.complaint),
    ];
    basic.into_iter().fold(
        Changes::new().field("state", "state", None::<&str>, "registering"),
        |c, (name, value)| c.field(group_of(name), name, None::<()>, value),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_deterministic_and_covers_every_state() {
        let (a, b) = (build(Scale::Test), build(Scale::Test));
        let numbers = |p: &Plan| {
            p.incidents
                .iter()
                .map(|i| (i.number.clone(), i.state, i.caller_name.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(numbers(&a), numbers(&b));
        for state in [
            "registering",
            "awaiting_regulation",
            "regulated",
            "dispatched",
            "closed",
            "cancelled",
            "prank",
        ] {
            assert!(a.incidents.iter().any(|i| i.state == state), "{state}");
        }
        let busy: Vec<usize> = a
            .incidents
            .iter()
            .filter_map(|i| i.dispatch.as_ref())
            .filter(|d| d.status != "released")
            .map(|d| d.unit)
            .collect();
        let mut unique = busy.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            busy.len(),
            unique.len(),
            "a unit is busy on one incident at most"
        );
    }

    #[test]
    fn the_demo_scale_has_the_contracts_counts() {
        let p = build(Scale::Demo);
        assert_eq!(p.health_units.len(), 7_458);
        assert!(p.users.len() > 300);
        assert!(p.incidents.len() >= 3_000);
    }
}
