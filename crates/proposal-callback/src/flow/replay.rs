//! Replays (docs/proposal-callback.md, "Repairs"): a stored receipt is processed again with
//! the live rules (so a receipt applied before answers `duplicate` again, and a paused
//! integration's receipt is deferred), one at a time ([`replay_one`], the admin route's and
//! the console's) or every receipt of a tenant that matches a filter, oldest first
//! ([`replay_matching`]). Each receipt is processed in its own transaction, as a live
//! callback is, and counted in `/metrics` as one. [`preview_matching`] is the bulk replay's
//! dry run: the same code in a transaction that is rolled back (`flow::preview`).

use std::collections::BTreeMap;

use common::Clock;
use diesel_async::{AsyncConnection, AsyncPgConnection};

use crate::domain::code::outcome_or_code;
use crate::error::Error;
use crate::flow::apply::{Processed, count};
use crate::flow::pause::process;
use crate::flow::preview::{self, Effect, Preview};
use crate::metrics;
use crate::store::receipts::{self, ReceiptFilter};

/// The most receipts one bulk replay processes; `next_after_id` pages through the rest.
pub const REPLAY_MAX: i64 = 500;
/// When the request names no limit.
pub const REPLAY_DEFAULT: i64 = 100;

/// What a bulk replay did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// Receipts processed, per outcome: `processed`, `duplicate`, `unchanged`, `stale`,
    /// `ignored`, `deferred`, or the error code of one that failed again.
    pub outcomes: BTreeMap<String, usize>,
    /// Receipts processed (the sum of `outcomes`).
    pub replayed: usize,
    /// The last receipt processed, when more match: pass it as `after_id` to go on.
    pub next_after_id: Option<i64>,
    /// What happened to each receipt, in the order they were processed.
    pub effects: Vec<Effect>,
}

/// Processes again `tenant`'s receipt `id` (`not_found` for none, or another tenant's) and
/// counts how it ended.
pub async fn replay_one(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    id: i64,
) -> Result<Processed, Error> {
    let receipt = receipts::find(conn, tenant, id)
        .await?
        .ok_or(Error::ReceiptNotFound(id))?;
    let result = process(conn, clock, &receipt).await;
    count(&receipt.tenant_id, receipt.insurer, &result);
    result
}

/// Processes again `tenant`'s receipts matching `filter` with ids above `after_id`, oldest
/// first, at most `limit`. A server-side failure (database) stops it: the receipts processed
/// until then keep their new outcome, and running it again is safe (live rules).
pub async fn replay_matching(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    filter: &ReceiptFilter,
    after_id: Option<i64>,
    limit: i64,
) -> Result<Replayed, Error> {
    run_matching(conn, clock, tenant, filter, after_id, limit, true).await
}

/// What [`replay_matching`] would do now, without doing it: the same receipts, processed the
/// same way in one transaction that is then rolled back. Nothing is counted in `/metrics`.
pub async fn preview_matching(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    filter: &ReceiptFilter,
    after_id: Option<i64>,
    limit: i64,
) -> Result<Replayed, Error> {
    let ended = conn
        .transaction::<(), Preview<Replayed>, _>(async |conn| {
            Preview::stop(run_matching(conn, clock, tenant, filter, after_id, limit, false).await)
        })
        .await;
    Preview::finish(ended)
}

async fn run_matching(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    filter: &ReceiptFilter,
    after_id: Option<i64>,
    limit: i64,
    counted: bool,
) -> Result<Replayed, Error> {
    let mut ids = receipts::oldest_matching(conn, tenant, filter, after_id, limit + 1).await?;
    let more = ids.len() as i64 > limit;
    ids.truncate(limit as usize);
    let mut outcomes = BTreeMap::new();
    let mut effects = Vec::with_capacity(ids.len());
    for &id in &ids {
        // Found again by tenant: another tenant's receipt is never touched.
        let Some(receipt) = receipts::find(conn, tenant, id).await? else {
            continue;
        };
        let before = preview::status_before(conn, &receipt).await?;
        let result = match process(conn, clock, &receipt).await {
            // Server-side: stop here (what was replayed keeps its outcome).
            Err(e) if !e.is_client_error() => return Err(e),
            result => result,
        };
        let ended = preview::ended(&result);
        if counted {
            metrics::count_callback(tenant, receipt.insurer, ended);
        }
        *outcomes
            .entry(outcome_or_code(ended).to_owned())
            .or_insert(0) += 1;
        effects.push(preview::effect(&receipt, before, &result));
    }
    Ok(Replayed {
        replayed: outcomes.values().sum(),
        outcomes,
        next_after_id: if more { ids.last().copied() } else { None },
        effects,
    })
}
