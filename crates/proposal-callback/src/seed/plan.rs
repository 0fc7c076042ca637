//! The seed's plan: which proposals, which callbacks, when, and the bodies the insurers write.
//! A pure function of the seeding time (`seed::seed_history` replays it).

use chrono::{DateTime, Datelike, Duration, SecondsFormat, Timelike, Utc};

use crate::domain::insurer::Insurer::{self, Porto, Tokio, Too};
use crate::domain::insurer::tokio_marine::ANALYSIS_COMPLETED;
use crate::domain::status::Status;
use crate::domain::zone::{self, Tz};

pub const DEMO_TENANTS: [(&str, &str); 2] = [
    ("demo-a", "Imobiliária Demo A"),
    ("demo-b", "Imobiliária Demo B"),
];

/// The proposals named in the insurers' example payloads (`tests/fixtures/insurers`), all `under_analysis`
/// for tenant `demo-a`.
pub const DEMO_PROPOSALS: [&str; 9] = [
    "POR-2026-000123",
    "POR-2026-000124",
    "POR-2026-000125",
    "548812",
    "548813",
    "548814",
    "99120",
    "99121",
    "99122",
];

/// How far back the history reaches.
pub const HISTORY_DAYS: i64 = 14;

/// Proposals per tenant over [`HISTORY_DAYS`] days (about three a day).
const PER_TENANT: i64 = 40;

/// One proposal of the history and the callbacks its insurer sends.
#[derive(Debug, Clone)]
pub(super) struct Planned {
    pub(super) tenant: &'static str,
    pub(super) insurer: Insurer,
    pub(super) proposal_id: String,
    pub(super) submitted_at: DateTime<Utc>,
    pub(super) deliveries: Vec<Delivery>,
}

/// One callback: when it arrives and its body, as the insurer writes it.
#[derive(Debug, Clone)]
pub(super) struct Delivery {
    pub(super) at: DateTime<Utc>,
    pub(super) body: Vec<u8>,
}

/// What the insurer says in a step of a script.
#[derive(Debug, Clone, Copy)]
enum Say {
    /// An analysis result with this status, its event time a few seconds before it arrives.
    Result(Status),
    /// The body of an earlier step (by index) delivered again: a redelivery (`duplicate`).
    Again(usize),
    /// A result whose event time is `event_min` minutes after the submission, older than an
    /// earlier step's: a retry that overtook nothing and arrives late (`stale`).
    Late(Status, i64),
    /// tokio's notice that documents arrived: no analysis result (`ignored`).
    DocumentsReceived,
}

/// A proposal's callbacks: (minutes after its submission, what the insurer says).
type Script = &'static [(i64, Say)];

use self::Say::{Again, DocumentsReceived, Late, Result as Res};
use crate::domain::status::Status::{Approved, Pending, Refused, UnderAnalysis};

const APPROVED: Script = &[(170, Res(Approved))];
const PENDING_THEN_APPROVED: Script = &[(110, Res(Pending)), (26 * 60, Res(Approved))];
const REFUSED: Script = &[(230, Res(Refused))];
const PENDING_THEN_REFUSED: Script = &[(95, Res(Pending)), (30 * 60, Res(Refused))];
const APPROVED_DELIVERED_TWICE: Script = &[(150, Res(Approved)), (154, Again(0))];
const A_LATE_OLDER_PENDING: Script = &[
    (60, Res(Pending)),
    (300, Res(Approved)),
    (312, Late(Pending, 200)),
];
const DOCUMENTS_THEN_APPROVED: Script = &[
    (70, Res(Pending)),
    (20 * 60, DocumentsReceived),
    (25 * 60, Res(Approved)),
];
const PENDING_CONFIRMED: Script = &[
    (100, Res(Pending)),
    (22 * 60, Res(Pending)),
    (40 * 60, Res(Approved)),
];
const STILL_UNDER_ANALYSIS: Script = &[(45, Res(UnderAnalysis))];
/// The newest proposal: decided a few minutes before the seed runs.
const JUST_DECIDED: Script = &[(85, Res(Approved))];
/// One per tenant: a pending after the approval, which the transition table refuses (409).
const REFUSED_BY_THE_TABLE: Script = &[(120, Res(Approved)), (360, Res(Pending))];

/// Scripts in turn, the common ones more often.
const SCRIPTS: [Script; 13] = [
    APPROVED,
    PENDING_THEN_APPROVED,
    REFUSED,
    APPROVED_DELIVERED_TWICE,
    PENDING_THEN_APPROVED,
    A_LATE_OLDER_PENDING,
    APPROVED,
    PENDING_THEN_REFUSED,
    DOCUMENTS_THEN_APPROVED,
    PENDING_CONFIRMED,
    APPROVED,
    STILL_UNDER_ANALYSIS,
    REFUSED,
];

/// Which proposal of each tenant (0 is the newest) gets [`REFUSED_BY_THE_TABLE`].
const REFUSED_BY_THE_TABLE_AT: [i64; 2] = [9, 23];

/// The proposals submitted after `after` (to the minute) whose first callback arrives at or
/// before `now`, with their callbacks up to `now`, for both tenants. Proposal `i` of a tenant
/// is submitted about `i` × 8.4 hours before `now`; the newest one's callback arrives 10 to
/// 20 minutes before `now`.
pub(super) fn plan(now: DateTime<Utc>, after: DateTime<Utc>) -> Vec<Planned> {
    let after_minute = minute(after);
    let spacing = Duration::days(HISTORY_DAYS).num_minutes() / PER_TENANT;
    let mut out = Vec::new();
    for (t, (tenant, _)) in DEMO_TENANTS.iter().enumerate() {
        let t = t as i64;
        for i in 0..PER_TENANT {
            let seed = mix(((t as u64) << 32) | i as u64);
            let back = if i == 0 {
                95 + 7 * t
            } else {
                i * spacing + (seed % 180) as i64
            };
            let submitted_at = minute(now - Duration::minutes(back));
            if submitted_at <= after_minute {
                continue;
            }
            let script = if i == 0 {
                JUST_DECIDED
            } else if REFUSED_BY_THE_TABLE_AT[t as usize] == i {
                REFUSED_BY_THE_TABLE
            } else {
                SCRIPTS[((i + 5 * t) as usize) % SCRIPTS.len()]
            };
            let insurer = insurer_for(script, i + t);
            let proposal_id = proposal_id(insurer, submitted_at);
            if DEMO_PROPOSALS.contains(&proposal_id.as_str()) {
                continue;
            }
            let mut planned = Planned {
                tenant,
                insurer,
                proposal_id,
                submitted_at,
                deliveries: Vec::new(),
            };
            let mut bodies: Vec<Vec<u8>> = Vec::new();
            for (step, &(after_min, say)) in script.iter().enumerate() {
                let at = submitted_at
                    + Duration::minutes(after_min)
                    + Duration::seconds((mix(seed ^ step as u64) % 50) as i64);
                // The insurer's clock stamps the event a few seconds before it arrives.
                let event_at =
                    at - Duration::seconds(2 + (mix(seed ^ 0xe7 ^ step as u64) % 25) as i64);
                let event_key = format!("{tenant}/{}/{step}", planned.proposal_id);
                let body = match say {
                    Res(status) => body(&planned, status, event_at, &event_key),
                    Late(status, event_min) => body(
                        &planned,
                        status,
                        submitted_at + Duration::minutes(event_min),
                        &event_key,
                    ),
                    Again(of) => bodies[of].clone(),
                    DocumentsReceived => tokio_documents(&planned, event_at, &event_key),
                };
                bodies.push(body.clone());
                if at <= now {
                    planned.deliveries.push(Delivery { at, body });
                }
            }
            if !planned.deliveries.is_empty() {
                out.push(planned);
            }
        }
    }
    out
}

/// `at` without its seconds.
fn minute(at: DateTime<Utc>) -> DateTime<Utc> {
    at.with_second(0)
        .and_then(|t| t.with_nanosecond(0))
        .unwrap_or(at)
}

/// The insurer of proposal `n`: in turn, except where only one insurer can say it (too has
/// no "under analysis", only tokio sends events without a result).
fn insurer_for(script: Script, n: i64) -> Insurer {
    if script
        .iter()
        .any(|(_, say)| matches!(say, DocumentsReceived))
    {
        return Tokio;
    }
    let choices: &[Insurer] = if script
        .iter()
        .any(|(_, say)| matches!(say, Res(UnderAnalysis) | Late(UnderAnalysis, _)))
    {
        &[Porto, Tokio]
    } else {
        &Insurer::ALL
    };
    choices[(n as usize) % choices.len()]
}

/// A proposal number in the insurer's style, from its submission minute (unique per tenant:
/// no two of a tenant's proposals are submitted in the same minute, and a later seed only
/// submits after the newest seeded callback). Porto `POR-2026-472352`, tokio and too
/// `26472352` (year, minute of the year).
fn proposal_id(insurer: Insurer, submitted_at: DateTime<Utc>) -> String {
    let minute_of_year = i64::from(submitted_at.ordinal0()) * 24 * 60
        + i64::from(submitted_at.hour()) * 60
        + i64::from(submitted_at.minute());
    match insurer {
        Porto => format!("POR-{}-{minute_of_year:06}", submitted_at.year()),
        Too => (u64::from(submitted_at.year().rem_euclid(100) as u32) * 1_000_000
            + minute_of_year as u64)
            .to_string(),
        Tokio => format!(
            "{:02}{minute_of_year:06}",
            submitted_at.year().rem_euclid(100)
        ),
    }
}

/// The insurers' clocks, which their own times are written on (`docs/insurers.md`).
fn sao_paulo() -> Tz {
    zone::DEFAULT_ZONE
}

/// A JSON string literal.
fn lit(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// What the insurer writes about a result, in its own words (varied by `key`).
fn note(insurer: Insurer, status: Status, key: u64) -> Option<&'static str> {
    let pick = |options: &[&'static str]| options[(key % options.len() as u64) as usize];
    match (insurer, status) {
        (Tokio, Approved) => Some("Approved"),
        (Tokio, Pending) => Some(pick(&[
            "Pending: guarantor documents",
            "Pending: proof of income",
            "Pending: signed rental application",
        ])),
        (Tokio, Refused) => Some(pick(&[
            "Refused: credit score",
            "Refused: income below rent",
        ])),
        (Tokio, UnderAnalysis) => Some("Under analysis"),
        (Porto, Approved) => None,
        (Porto, Pending) => Some(pick(&[
            "Comprovante de renda ilegível",
            "Falta o comprovante de residência do fiador",
            "Contrato social da empresa do pretendente desatualizado",
        ])),
        (Porto, Refused) => Some(pick(&[
            "Restrição cadastral do pretendente",
            "Renda incompatível com o aluguel",
        ])),
        (Porto, UnderAnalysis) => None,
        (Too, Approved) => Some(pick(&[
            "Aprovada sem ressalvas",
            "Aprovada com garantia integral",
        ])),
        (Too, Pending) => Some("Aguardando documentos"),
        (Too, Refused) => Some(pick(&[
            "Renda insuficiente",
            "Score de crédito abaixo do mínimo",
        ])),
        (Too, UnderAnalysis) => None,
    }
}

/// The body of an analysis result, in the insurer's shape (`tests/fixtures/insurers/`).
fn body(p: &Planned, status: Status, event_at: DateTime<Utc>, event_key: &str) -> Vec<u8> {
    let key = hash(event_key);
    let note = note(p.insurer, status, key);
    match p.insurer {
        Porto => {
            let situacao = match status {
                Approved => "APROVADA",
                Pending => "PENDENTE",
                Refused => "RECUSADA",
                UnderAnalysis => "EM_ANALISE",
            };
            format!(
                "{{\n  \"idProposta\": {},\n  \"situacao\": \"{situacao}\",\n  \"dataHora\": \"{}\",\n  \
                 \"motivo\": {},\n  \"protocolo\": \"{}\"\n}}\n",
                lit(&p.proposal_id),
                event_at
                    .with_timezone(&sao_paulo())
                    .to_rfc3339_opts(SecondsFormat::Secs, false),
                note.map_or_else(|| "null".to_owned(), lit),
                uuid_like(key),
            )
        }
        Tokio => {
            let code = match status {
                Approved => 10,
                Pending => 20,
                Refused => 30,
                UnderAnalysis => 5,
            };
            format!(
                "{{\n  \"event_id\": \"evt_{:016x}\",\n  \"event\": \"{ANALYSIS_COMPLETED}\",\n  \
                 \"sent_at\": {},\n  \"data\": {{\n    \"proposal\": {{ \"id\": {}, \
                 \"external_ref\": \"LOC-{}\" }},\n    \"result\": {{ \"code\": {code}, \
                 \"description\": {} }}\n  }}\n}}\n",
                mix(key),
                event_at.timestamp(),
                lit(&p.proposal_id),
                70_000 + hash(&p.proposal_id) % 30_000,
                lit(note.unwrap_or("")),
            )
        }
        Too => {
            let resultado = match status {
                Approved => "A",
                Pending => "P",
                // Too has no "under analysis": the plan never asks it for one.
                Refused | UnderAnalysis => "R",
            };
            let pendencias = if status == Pending {
                let items = [
                    ("RG", "Documento de identidade do fiador"),
                    ("IR", "Declaração de imposto de renda"),
                    ("CR", "Comprovante de residência"),
                ];
                let first = (key % 3) as usize;
                format!(
                    ",\n  \"pendencias\": [\n    {{ \"documento\": \"{}\", \"descricao\": {} }},\n    \
                     {{ \"documento\": \"{}\", \"descricao\": {} }}\n  ]",
                    items[first].0,
                    lit(items[first].1),
                    items[(first + 1) % 3].0,
                    lit(items[(first + 1) % 3].1),
                )
            } else {
                String::new()
            };
            format!(
                "{{\n  \"numeroProposta\": {},\n  \"parecer\": {{ \"resultado\": \"{resultado}\", \
                 \"observacoes\": {} }}{pendencias},\n  \"emitidoEm\": \"{}\"\n}}\n",
                p.proposal_id,
                lit(note.unwrap_or("")),
                event_at.with_timezone(&sao_paulo()).format("%d/%m/%Y %H:%M:%S"),
            )
        }
    }
    .into_bytes()
}

/// tokio's notice that the documents it asked for arrived: an event without a result.
fn tokio_documents(p: &Planned, event_at: DateTime<Utc>, event_key: &str) -> Vec<u8> {
    format!(
        "{{\n  \"event_id\": \"evt_{:016x}\",\n  \"event\": \"proposal.documents_received\",\n  \
         \"sent_at\": {},\n  \"data\": {{\n    \"proposal\": {{ \"id\": {}, \"external_ref\": \
         \"LOC-{}\" }}\n  }}\n}}\n",
        mix(hash(event_key)),
        event_at.timestamp(),
        lit(&p.proposal_id),
        70_000 + hash(&p.proposal_id) % 30_000,
    )
    .into_bytes()
}

/// A protocol number shaped like porto's (a UUID), from `key`.
fn uuid_like(key: u64) -> String {
    let (a, b) = (mix(key), mix(key ^ 0x5eed));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff,
    )
}

/// FNV-1a of `s`, mixed: stable across platforms and Rust versions (unlike std's hasher).
fn hash(s: &str) -> u64 {
    mix(s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }))
}

/// splitmix64's finaliser.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::insurer::Notification;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-24T13:37:21.123456Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn every_planned_body_is_read_by_its_insurers_parser() {
        let plan = plan(now(), now() - Duration::days(HISTORY_DAYS));
        assert!(plan.len() >= 2 * 36, "{} proposals", plan.len());
        for p in &plan {
            for d in &p.deliveries {
                let parsed = p.insurer.parser().parse(&d.body);
                match parsed {
                    Ok(Notification::Result(c)) => {
                        assert_eq!(c.proposal_id, p.proposal_id);
                        assert!(c.occurred_at < d.at, "an event precedes its delivery");
                    }
                    Ok(Notification::Ignored { event }) => {
                        assert_eq!(
                            (p.insurer, event.as_str()),
                            (Tokio, "proposal.documents_received")
                        )
                    }
                    Err(e) => panic!("{}: {e}: {}", p.insurer, String::from_utf8_lossy(&d.body)),
                }
                assert!(d.at <= now() && d.at > p.submitted_at);
            }
        }
    }

    #[test]
    fn proposal_ids_are_unique_per_tenant_and_none_is_an_example_proposal() {
        let plan = plan(now(), now() - Duration::days(HISTORY_DAYS));
        let mut ids: Vec<_> = plan
            .iter()
            .map(|p| (p.tenant, p.proposal_id.clone()))
            .collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert!(
            ids.iter()
                .all(|(_, id)| !DEMO_PROPOSALS.contains(&id.as_str()))
        );
        // 24 November is day 327 of 2026 counting from 0: 327 × 1440 + 13 × 60 + 37.
        assert_eq!(proposal_id(Porto, now()), "POR-2026-471697");
        assert_eq!(proposal_id(Tokio, now()), "26471697");
        assert_eq!(proposal_id(Too, now()), "26471697");
    }

    #[test]
    fn a_later_plan_submits_only_after_the_given_time() {
        let later = now() + Duration::days(10);
        let plan = plan(later, now());
        assert!(!plan.is_empty());
        assert!(plan.iter().all(|p| p.submitted_at > now()));
        assert!(
            plan.iter()
                .flat_map(|p| &p.deliveries)
                .all(|d| d.at > now() && d.at <= later)
        );
    }
}
