//! The demo's people, places and fleet as plain values, built from a fixed seed: the same
//! scale always yields the same plan. No database here; `seed::run_with` writes the plan, and
//! `timeline` scripts the incidents.

use super::words::*;
use crate::domain::user::{Profile, UserStatus, UserStatus::*};

/// How much data to make. `Demo` is the real scale (`dispatch-api seed`); `Test` is the
/// same generator with smaller counts, so every HTTP test can seed its own database fast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
    pub(super) fn incidents(self) -> usize {
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
    pub status: UserStatus,
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

/// The demo's people, places and fleet; the incidents are a [`Timeline`] built apart, for the
/// window the seed fills.
pub struct Plan {
    pub users: Vec<UserSpec>,
    pub health_units: Vec<HealthUnitSpec>,
    pub units: Vec<UnitSpec>,
}

/// The logins the README and the tests rely on: one active user per profile, one inactive.
pub const DEMO_USERS: [(&str, &str, Profile, UserStatus); 5] = [
    ("admin", "Ana Administradora", Profile::Admin, Active),
    ("tarm", "Tiago Atendente", Profile::Tarm, Active),
    (
        "regulador",
        "Dra. Regina Reguladora",
        Profile::MedicoRegulador,
        Active,
    ),
    ("frota", "Fábio da Frota", Profile::OperadorFrota, Active),
    ("inativo", "Ivo Inativo", Profile::Tarm, Inactive),
];

pub fn build(scale: Scale) -> Plan {
    let mut rng = Rng::new(0x5a3u64 << 20 | 192);
    let users = users(&mut rng, scale);
    let health_units = health_units(&mut rng, scale);
    let units = units(&mut rng);
    Plan {
        users,
        health_units,
        units,
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
            status: *status,
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
        let status = if rng.chance(8) { Inactive } else { Active };
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
            unallocated: (status == Active && profile != Profile::Admin && rng.chance(12))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_scale_has_the_contracts_counts() {
        let p = build(Scale::Demo);
        assert_eq!(p.health_units.len(), 7_458);
        assert!(p.users.len() > 300);
        assert!(Scale::Demo.incidents() >= 3_000);
    }
}
