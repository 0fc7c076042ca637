//! `proposal-callback seed`: the demo data (docs/proposal-callback.md, "The demo data").
//!
//! - Tenants `demo-a` and `demo-b`, one `homologation` integration per insurer each, and the
//!   nine proposals of the insurers' example payloads ([`DEMO_PROPOSALS`]), `under_analysis`,
//!   for `demo-a`: the README, the browser test and the tests send callbacks to them.
//! - A **history**: a few dozen proposals per tenant over the last [`HISTORY_DAYS`] days whose
//!   insurers' callbacks (approvals, pendings, refusals, a redelivery, a late older event, an
//!   event without a result, one the transition table refuses) were received through the
//!   route's own path ([`crate::proposal::receive::receive`]), each at its own time on a
//!   manual clock that the seed moves along a timeline ending at the seeding clock's now. So
//!   the receipts, statuses, stories and emails have exactly the shapes real callbacks leave,
//!   and the demo looks alive on whatever day it is seeded.
//!
//! Running it again adds nothing while the history is recent: tenants, integrations and
//! proposals are created only when absent (an existing proposal keeps whatever status
//! callbacks gave it), and history is added only when the newest seeded callback is older
//! than [`HISTORY_FRESH`]. Then the days since are added (nothing already recorded is
//! rewritten), anchored at now again: a demo seeded long ago comes back to life.
//!
//! `seed --no-history` seeds the rest without it (for tests that count their own rows).
//!
//! The history's emails are recorded `sent` at the time a worker would have sent them,
//! without any relay seeing them: they are addressed to example.com and backdated, and no
//! `./dev up` or `docker compose up` must deliver them.
//!
//! Tokens: only hashes are stored, so a token can be printed only when it is made. The
//! first run makes one per integration and prints it; later runs keep the existing tokens
//! and print `"token": null`, unless `--rotate-tokens` asks for new ones (the old ones are
//! revoked).

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Duration, FixedOffset, SecondsFormat, Timelike, Utc};
use common::Clock;
use common::db::Conn;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use crate::auth::basic::{generate_token, token_hash};
use crate::error::Error;
use crate::insurer::INSURERS;
use crate::insurer::tokio_marine::ANALYSIS_COMPLETED;
use crate::proposal::receive::{Arrival, Received, receive};
use crate::proposal::status::Status;
use crate::registration::config::Environment;
use crate::schema::proposal::tenants;
use crate::store::{integrations, outbox, proposals, receipts};

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

pub const DEMO_ENVIRONMENT: Environment = Environment::Homologation;

/// How far back the history reaches.
pub const HISTORY_DAYS: i64 = 14;

/// A history whose newest callback is younger than this is current: a seed adds nothing.
pub const HISTORY_FRESH: Duration = Duration::hours(12);

/// The `User-Agent` of the history's callbacks: how an operator (and the next seed) tells
/// them from the insurers' own.
pub const SEED_USER_AGENT: &str = "proposal-callback-seed (demo data, not an insurer)";

/// What to seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedOptions {
    /// Revoke the demo integrations' tokens and make new ones.
    pub rotate_tokens: bool,
    /// Add the history of recent callbacks (`seed --no-history` leaves it out: tenants,
    /// integrations, tokens and the nine example proposals only).
    pub history: bool,
}

impl Default for SeedOptions {
    fn default() -> Self {
        Self {
            rotate_tokens: false,
            history: true,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub tenants: Vec<String>,
    pub integrations: Vec<SeededIntegration>,
    pub proposals: Vec<SeededProposal>,
    pub history: HistoryReport,
}

#[derive(Debug, Serialize)]
pub struct SeededIntegration {
    pub id: i64,
    pub tenant: String,
    pub insurer: String,
    pub environment: Environment,
    /// The Basic token for `/callback/auth`, shown this once; null when an earlier run made it.
    pub token: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct SeededProposal {
    pub tenant: String,
    pub proposal_id: String,
    pub status: Status,
    pub contact_email: String,
}

/// What a seed did to the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryAction {
    /// There was none: the last [`HISTORY_DAYS`] days were added.
    Created,
    /// Its newest callback was older than [`HISTORY_FRESH`]: the time since (at most
    /// [`HISTORY_DAYS`] days) was added, ending now.
    Revived,
    /// Its newest callback is recent: nothing added.
    Current,
    /// `--no-history`.
    Skipped,
}

/// The history's part of the report (also summed up on stderr, see [`HistoryReport::summary`]).
#[derive(Debug, Clone, Serialize)]
pub struct HistoryReport {
    pub action: HistoryAction,
    /// The seeding clock's now: where the timeline ends.
    pub now: DateTime<Utc>,
    /// When the newest seeded callback was received before this run (none on the first).
    pub newest_before: Option<DateTime<Utc>>,
    /// This run's callbacks were received after `from` and at or before `now`; none when it
    /// added nothing.
    pub from: Option<DateTime<Utc>>,
    pub proposals_added: usize,
    pub callbacks_added: usize,
    /// The added callbacks per outcome (`processed`, `duplicate`, `stale`, `ignored`,
    /// `unchanged`), or per error code for the ones that failed (`invalid_transition`).
    pub outcomes: BTreeMap<String, usize>,
    /// The emails the added callbacks queued, recorded as sent; none was handed to a relay.
    pub emails_recorded_sent: usize,
    /// When the newest seeded callback was received after this run.
    pub newest_after: Option<DateTime<Utc>>,
}

impl HistoryReport {
    fn new(action: HistoryAction, now: DateTime<Utc>, newest: Option<DateTime<Utc>>) -> Self {
        Self {
            action,
            now,
            newest_before: newest,
            from: None,
            proposals_added: 0,
            callbacks_added: 0,
            outcomes: BTreeMap::new(),
            emails_recorded_sent: 0,
            newest_after: newest,
        }
    }

    /// One line for a person: what this seed did to the demo's history, and why.
    pub fn summary(&self) -> String {
        let at = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
        let added = || {
            format!(
                "{} proposals and {} callbacks received from {} to {} through the callback path \
                 ({}); their {} emails are recorded as sent, none was handed to a relay",
                self.proposals_added,
                self.callbacks_added,
                self.from.map(at).unwrap_or_default(),
                at(self.now),
                self.outcomes
                    .iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.emails_recorded_sent,
            )
        };
        match (self.action, self.newest_before) {
            (HistoryAction::Created, _) => format!("demo history created: {}.", added()),
            (HistoryAction::Revived, Some(newest)) => format!(
                "demo history revived: its newest callback was {} old ({}), more than {} hours; \
                 added {}. Nothing recorded before was changed.",
                age(self.now - newest),
                at(newest),
                HISTORY_FRESH.num_hours(),
                added(),
            ),
            (HistoryAction::Current, Some(newest)) => format!(
                "demo history current: its newest callback is {} old ({}), less than {} hours; \
                 nothing added.",
                age(self.now - newest),
                at(newest),
                HISTORY_FRESH.num_hours(),
            ),
            (HistoryAction::Skipped, _) => "demo history not seeded (--no-history).".to_owned(),
            (action, None) => format!("demo history {action:?}: nothing added."),
        }
    }
}

/// `3 days 4 hours`, `25 minutes`.
fn age(d: Duration) -> String {
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    match (d.num_days(), d.num_hours() % 24, d.num_minutes()) {
        (days, hours, _) if days > 0 => {
            format!("{} {}", plural(days, "day"), plural(hours, "hour"))
        }
        (_, _, minutes) if minutes >= 60 => plural(d.num_hours(), "hour"),
        (_, _, minutes) => plural(minutes.max(0), "minute"),
    }
}

/// The contact of a demo proposal of `demo-a` (the example payloads' proposals).
pub fn demo_email(proposal_id: &str) -> String {
    contact_email("demo-a", proposal_id)
}

/// The contact of a demo proposal: a reserved domain (RFC 2606), never deliverable.
pub fn contact_email(tenant: &str, proposal_id: &str) -> String {
    format!(
        "locatario.{}@{tenant}.example.com",
        proposal_id.to_ascii_lowercase()
    )
}

/// Seeds in one transaction, with `clock` saying when "now" is (the system's in the
/// command; a manual one in tests).
pub async fn run(
    conn: &mut Conn,
    clock: &Clock,
    options: SeedOptions,
) -> anyhow::Result<SeedReport> {
    Ok(conn
        .transaction::<_, Error, _>(async |conn| seed(conn, clock, options).await)
        .await?)
}

async fn seed(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    options: SeedOptions,
) -> Result<SeedReport, Error> {
    // Two seeds at once take turns (the lock ends with the transaction).
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('proposal-callback seed'))")
        .execute(conn)
        .await?;
    let now = clock.now();
    let rows: Vec<_> = DEMO_TENANTS
        .iter()
        .map(|(id, name)| (tenants::id.eq(*id), tenants::name.eq(*name)))
        .collect();
    diesel::insert_into(tenants::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;

    let mut seeded = Vec::new();
    for (tenant, _) in DEMO_TENANTS {
        for insurer in INSURERS {
            let integration = integrations::ensure(conn, tenant, insurer, DEMO_ENVIRONMENT).await?;
            let token = if options.rotate_tokens
                || !integrations::has_live_token(conn, integration.id).await?
            {
                let token = generate_token();
                integrations::rotate_token(conn, integration.id, &token_hash(&token)).await?;
                Some(token)
            } else {
                None
            };
            seeded.push(SeededIntegration {
                id: integration.id,
                tenant: tenant.to_owned(),
                insurer: insurer.to_owned(),
                environment: integration.environment,
                token,
            });
        }
    }

    let mut demo = Vec::new();
    for id in DEMO_PROPOSALS {
        proposals::insert_if_absent(conn, "demo-a", id, &demo_email(id), now).await?;
        // Inside seed's transaction: the lock is released at its end.
        if let Some((p, _)) = proposals::lock(conn, "demo-a", id).await? {
            demo.push(SeededProposal {
                tenant: p.tenant_id,
                proposal_id: p.proposal_id,
                status: p.status,
                contact_email: p.contact_email,
            });
        }
    }

    let history = if options.history {
        seed_history(conn, now, &seeded).await?
    } else {
        HistoryReport::new(HistoryAction::Skipped, now, None)
    };

    Ok(SeedReport {
        tenants: DEMO_TENANTS
            .iter()
            .map(|(id, _)| (*id).to_owned())
            .collect(),
        integrations: seeded,
        proposals: demo,
        history,
    })
}

/// Adds the history's callbacks received after the newest seeded one (at most
/// [`HISTORY_DAYS`] back) and at or before `now`, unless that one is younger than
/// [`HISTORY_FRESH`].
async fn seed_history(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
    integrations: &[SeededIntegration],
) -> Result<HistoryReport, Error> {
    let tenant_ids: Vec<&str> = DEMO_TENANTS.iter().map(|(id, _)| *id).collect();
    let newest = receipts::newest_received_with_agent(conn, &tenant_ids, SEED_USER_AGENT).await?;
    let window_start = now - Duration::days(HISTORY_DAYS);
    let (action, from) = match newest {
        None => (HistoryAction::Created, window_start),
        Some(n) if now - n < HISTORY_FRESH => {
            return Ok(HistoryReport::new(HistoryAction::Current, now, newest));
        }
        Some(n) => (HistoryAction::Revived, n.max(window_start)),
    };
    let mut report = HistoryReport::new(action, now, newest);
    report.from = Some(from);

    // The timeline: each proposal is submitted, then its callbacks arrive, in time order
    // across both tenants, so receipts and proposals are numbered as they happened.
    let plan = plan(now, from);
    let mut timeline: Vec<(DateTime<Utc>, usize, Option<usize>)> = Vec::new();
    for (p, proposal) in plan.iter().enumerate() {
        timeline.push((proposal.submitted_at, p, None));
        for (d, delivery) in proposal.deliveries.iter().enumerate() {
            timeline.push((delivery.at, p, Some(d)));
        }
    }
    timeline.sort_by_key(|&(at, p, d)| (at, p, d.map_or(0, |d| d + 1)));

    let integration_id = |tenant: &str, insurer: &str| {
        integrations
            .iter()
            .find(|i| i.tenant == tenant && i.insurer == insurer)
            .map(|i| i.id)
            .expect("every demo tenant has an integration per insurer")
    };
    let clock = Clock::manual(from);
    let mut created = vec![false; plan.len()];
    for (at, p, delivery) in timeline {
        let proposal = &plan[p];
        clock.set(at);
        let Some(d) = delivery else {
            created[p] = proposals::insert_if_absent(
                conn,
                proposal.tenant,
                &proposal.proposal_id,
                &contact_email(proposal.tenant, &proposal.proposal_id),
                at,
            )
            .await?;
            report.proposals_added += usize::from(created[p]);
            continue;
        };
        // A proposal of that id existed already (not the seed's): left alone.
        if !created[p] {
            continue;
        }
        let delivery = &proposal.deliveries[d];
        let arrival = Arrival {
            tenant: proposal.tenant,
            insurer: proposal.insurer,
            integration_id: integration_id(proposal.tenant, proposal.insurer),
            headers: seed_headers(proposal, d, &delivery.body),
            body: &delivery.body,
        };
        let outcome = match receive(conn, &clock, &arrival).await {
            Ok(Received { processed, .. }) => {
                if let Some(email) = processed.email_id {
                    // A worker would have sent it a few seconds later.
                    let sent_at = (at + Duration::seconds(3)).min(now);
                    outbox::record_sent_without_relay(conn, email, sent_at).await?;
                    report.emails_recorded_sent += 1;
                }
                processed.outcome.as_str().to_owned()
            }
            Err(e) if e.is_client_error() => e.code().to_owned(),
            Err(e) => return Err(e),
        };
        report.callbacks_added += 1;
        *report.outcomes.entry(outcome).or_insert(0) += 1;
        report.newest_after = Some(report.newest_after.map_or(at, |n| n.max(at)));
    }
    Ok(report)
}

/// The headers a receipt keeps (`routes::callback::KEPT_HEADERS` and the peer address), as
/// the seed's "insurer" sends them: its own user agent, and an address of the documentation
/// range (RFC 5737), so nobody takes them for a real insurer's.
fn seed_headers(proposal: &Planned, delivery: usize, body: &[u8]) -> serde_json::Value {
    let peer = match proposal.insurer {
        "porto" => "192.0.2.10",
        "tokio" => "192.0.2.20",
        _ => "192.0.2.30",
    };
    serde_json::json!({
        "content-type": "application/json",
        "content-length": body.len().to_string(),
        "user-agent": SEED_USER_AGENT,
        "x-request-id": format!("seed-{}-{}-{}", proposal.tenant, proposal.proposal_id, delivery + 1),
        "peer_addr": peer,
    })
}

// ---------------------------------------------------------------------------------------
// The plan: which proposals, which callbacks, when. A pure function of the seeding time.

/// Proposals per tenant over [`HISTORY_DAYS`] days (about three a day).
const PER_TENANT: i64 = 40;

/// One proposal of the history and the callbacks its insurer sends.
#[derive(Debug, Clone)]
struct Planned {
    tenant: &'static str,
    insurer: &'static str,
    proposal_id: String,
    submitted_at: DateTime<Utc>,
    deliveries: Vec<Delivery>,
}

/// One callback: when it arrives and its body, as the insurer writes it.
#[derive(Debug, Clone)]
struct Delivery {
    at: DateTime<Utc>,
    body: Vec<u8>,
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
use crate::proposal::status::Status::{Approved, Pending, Refused, UnderAnalysis};

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
fn plan(now: DateTime<Utc>, after: DateTime<Utc>) -> Vec<Planned> {
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
fn insurer_for(script: Script, n: i64) -> &'static str {
    if script
        .iter()
        .any(|(_, say)| matches!(say, DocumentsReceived))
    {
        return "tokio";
    }
    let choices: &[&'static str] = if script
        .iter()
        .any(|(_, say)| matches!(say, Res(UnderAnalysis) | Late(UnderAnalysis, _)))
    {
        &["porto", "tokio"]
    } else {
        &INSURERS
    };
    choices[(n as usize) % choices.len()]
}

/// A proposal number in the insurer's style, from its submission minute (unique per tenant:
/// no two of a tenant's proposals are submitted in the same minute, and a later seed only
/// submits after the newest seeded callback). Porto `POR-2026-472352`, tokio and too
/// `26472352` (year, minute of the year).
fn proposal_id(insurer: &str, submitted_at: DateTime<Utc>) -> String {
    let minute_of_year = i64::from(submitted_at.ordinal0()) * 24 * 60
        + i64::from(submitted_at.hour()) * 60
        + i64::from(submitted_at.minute());
    match insurer {
        "porto" => format!("POR-{}-{minute_of_year:06}", submitted_at.year()),
        "too" => (u64::from(submitted_at.year().rem_euclid(100) as u32) * 1_000_000
            + minute_of_year as u64)
            .to_string(),
        _ => format!(
            "{:02}{minute_of_year:06}",
            submitted_at.year().rem_euclid(100)
        ),
    }
}

fn sao_paulo() -> FixedOffset {
    FixedOffset::west_opt(3 * 3600).expect("UTC-03:00 is a valid offset")
}

/// A JSON string literal.
fn lit(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// What the insurer writes about a result, in its own words (varied by `key`).
fn note(insurer: &str, status: Status, key: u64) -> Option<&'static str> {
    let pick = |options: &[&'static str]| options[(key % options.len() as u64) as usize];
    match (insurer, status) {
        ("tokio", Approved) => Some("Approved"),
        ("tokio", Pending) => Some(pick(&[
            "Pending: guarantor documents",
            "Pending: proof of income",
            "Pending: signed rental application",
        ])),
        ("tokio", Refused) => Some(pick(&[
            "Refused: credit score",
            "Refused: income below rent",
        ])),
        ("tokio", UnderAnalysis) => Some("Under analysis"),
        ("porto", Approved) => None,
        ("porto", Pending) => Some(pick(&[
            "Comprovante de renda ilegível",
            "Falta o comprovante de residência do fiador",
            "Contrato social da empresa do pretendente desatualizado",
        ])),
        ("porto", Refused) => Some(pick(&[
            "Restrição cadastral do pretendente",
            "Renda incompatível com o aluguel",
        ])),
        ("porto", UnderAnalysis) => None,
        (_, Approved) => Some(pick(&[
            "Aprovada sem ressalvas",
            "Aprovada com garantia integral",
        ])),
        (_, Pending) => Some("Aguardando documentos"),
        (_, Refused) => Some(pick(&[
            "Renda insuficiente",
            "Score de crédito abaixo do mínimo",
        ])),
        (_, UnderAnalysis) => None,
    }
}

/// The body of an analysis result, in the insurer's shape (`tests/fixtures/insurers/`).
fn body(p: &Planned, status: Status, event_at: DateTime<Utc>, event_key: &str) -> Vec<u8> {
    let key = hash(event_key);
    let note = note(p.insurer, status, key);
    match p.insurer {
        "porto" => {
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
        "tokio" => {
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
        _ => {
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
    use crate::insurer::{Notification, parser_for};

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
                let parsed = parser_for(p.insurer).unwrap().parse(&d.body);
                match parsed {
                    Ok(Notification::Result(c)) => {
                        assert_eq!(c.proposal_id, p.proposal_id);
                        assert!(c.occurred_at < d.at, "an event precedes its delivery");
                    }
                    Ok(Notification::Ignored { event }) => {
                        assert_eq!(
                            (p.insurer, event.as_str()),
                            ("tokio", "proposal.documents_received")
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
        assert_eq!(proposal_id("porto", now()), "POR-2026-471697");
        assert_eq!(proposal_id("tokio", now()), "26471697");
        assert_eq!(proposal_id("too", now()), "26471697");
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

    #[test]
    fn ages_read_as_a_person_says_them() {
        assert_eq!(age(Duration::minutes(25)), "25 minutes");
        assert_eq!(age(Duration::minutes(61)), "1 hour");
        assert_eq!(age(Duration::hours(50)), "2 days 2 hours");
        assert_eq!(age(Duration::days(10)), "10 days 0 hours");
    }
}
