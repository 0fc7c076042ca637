//! `proposal-callback seed`: the demo data (docs/proposal-callback.md, "The demo data").
//!
//! - Tenants `demo-a` and `demo-b`, one `homologation` integration per insurer each, and the
//!   nine proposals of the insurers' example payloads ([`DEMO_PROPOSALS`]), `under_analysis`,
//!   for `demo-a`: the README, the browser test and the tests send callbacks to them.
//! - A **history**: a few dozen proposals per tenant over the last [`HISTORY_DAYS`] days whose
//!   insurers' callbacks (approvals, pendings, refusals, a redelivery, a late older event, an
//!   event without a result, one the transition table refuses) were received through the
//!   route's own path ([`crate::flow::receive::receive`]), each at its own time on a
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

use chrono::{DateTime, Duration, Utc};
use common::Clock;
use common::db::Conn;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use self::plan::{Planned, plan};

use crate::domain::basic_token::{generate_token, token_hash};
use crate::domain::code::outcome_or_code;
use crate::domain::insurer::Insurer;
use crate::domain::status::Status;
use crate::error::Error;
use crate::flow::receive::{Arrival, Received, receive};
use crate::registration::config::Environment;
use crate::schema::proposal::tenants;
use crate::store::{integrations, outbox, proposals, receipts};

mod plan;

pub use self::plan::{DEMO_PROPOSALS, DEMO_TENANTS, HISTORY_DAYS};

pub const DEMO_ENVIRONMENT: Environment = Environment::Homologation;

/// The demo tenants' time zone (an admin changes it with `PATCH /admin/tenant`; a later seed
/// leaves an existing tenant as it is).
pub const DEMO_TIME_ZONE: crate::domain::zone::Tz = crate::domain::zone::DEFAULT_ZONE;

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
    pub insurer: Insurer,
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

/// The From address of a demo tenant's emails.
pub fn demo_sender(tenant: &str) -> String {
    format!("propostas@{tenant}.example.com")
}

/// The Reply-To of a demo tenant's emails: demo-b's only.
pub fn demo_reply_to(tenant: &str) -> Option<String> {
    (tenant == "demo-b").then(|| format!("atendimento@{tenant}.example.com"))
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
    // Each demo tenant's operator is told when an insurer goes silent (docs/proposal-callback.md,
    // "Silent insurers"), at an address no relay should deliver to. Each sends from its own
    // address; demo-b's customers reply to its service desk (a Reply-To), demo-a's to From.
    let rows: Vec<_> = DEMO_TENANTS
        .iter()
        .map(|(id, name)| {
            (
                tenants::id.eq(*id),
                tenants::name.eq(*name),
                tenants::operator_email.eq(Some(format!("operacoes@{id}.example.com"))),
                tenants::from_name.eq(Some(*name)),
                tenants::from_address.eq(Some(demo_sender(id))),
                tenants::reply_to.eq(demo_reply_to(id)),
                tenants::time_zone.eq(DEMO_TIME_ZONE.name()),
            )
        })
        .collect();
    diesel::insert_into(tenants::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    // A demo seeded before tenants had senders gets them (one an admin set is kept).
    for (id, name) in DEMO_TENANTS {
        diesel::update(
            tenants::table
                .find(id)
                .filter(tenants::from_address.is_null())
                .filter(tenants::reply_to.is_null()),
        )
        .set((
            tenants::from_name.eq(Some(name)),
            tenants::from_address.eq(Some(demo_sender(id))),
            tenants::reply_to.eq(demo_reply_to(id)),
        ))
        .execute(conn)
        .await?;
    }

    let mut seeded = Vec::new();
    for (tenant, _) in DEMO_TENANTS {
        for insurer in Insurer::ALL {
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
                insurer,
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

    let integration_id = |tenant: &str, insurer: Insurer| {
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
                outcome_or_code(Ok(processed.outcome)).to_owned()
            }
            Err(e) if e.is_client_error() => outcome_or_code(Err(e.code())).to_owned(),
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
        Insurer::Porto => "192.0.2.10",
        Insurer::Tokio => "192.0.2.20",
        Insurer::Too => "192.0.2.30",
    };
    serde_json::json!({
        "content-type": "application/json",
        "content-length": body.len().to_string(),
        "user-agent": SEED_USER_AGENT,
        "x-request-id": format!("seed-{}-{}-{}", proposal.tenant, proposal.proposal_id, delivery + 1),
        "peer_addr": peer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_a_person_says_them() {
        assert_eq!(age(Duration::minutes(25)), "25 minutes");
        assert_eq!(age(Duration::minutes(61)), "1 hour");
        assert_eq!(age(Duration::hours(50)), "2 days 2 hours");
        assert_eq!(age(Duration::days(10)), "10 days 0 hours");
    }
}
