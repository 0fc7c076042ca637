//! Pausing and resuming an integration (docs/proposal-callback.md, "Pause and resume").
//!
//! Every stored receipt is processed through [`process`]: in one transaction it reads whether
//! the integration is paused under a shared lock on the integration's row (`FOR KEY SHARE`,
//! in the statement that locks the proposal when there is a result to apply:
//! `flow::apply::apply_receipt`) and either records the receipt `deferred` (answered 202) or
//! applies it. [`pause`] locks the
//! row *alone* (`FOR UPDATE`) to set the pause, so it waits for the callbacks being applied and every later one
//! sees it. [`resume`] applies the deferred receipts oldest first, each in a transaction that
//! holds the lock alone, and clears the pause in the transaction that finds none left: a
//! callback arriving meanwhile is either deferred (and applied by the resume after the older
//! ones) or waits and is applied live after all of them. Two resumes at once take turns on
//! the lock, one receipt at a time, so the order holds whatever the number of replicas.
//! [`preview_resume`] is a resume's dry run: the deferred receipts applied in the same order
//! in one transaction that is then rolled back (`flow::preview`).

use std::collections::BTreeMap;

use common::Clock;
use diesel_async::{AsyncConnection, AsyncPgConnection};

use crate::domain::code::{ErrorCode, outcome_or_code};
use crate::domain::status::Outcome;
use crate::error::Error;
use crate::flow::apply::{Processed, apply_receipt, handle_receipt, record_failure};
use crate::flow::preview::{self, Effect, Preview};
use crate::metrics;
use crate::store::integrations::{self, IntegrationRow};
use crate::store::receipts::{self, Receipt};
use crate::store::tenants;

/// The most deferred receipts one resume applies; with more, the integration stays paused
/// and the answer says how many are left (resume again).
pub const RESUME_MAX: usize = 1000;

/// `1 day`, `30 days`.
pub fn days_text(days: i32) -> String {
    format!("{days} day{}", if days == 1 { "" } else { "s" })
}

/// Processes a stored receipt (live, swept or replayed): deferred while its integration is
/// paused, applied otherwise, in one transaction (a savepoint when the caller has one open).
/// `clock` is asked once: every row written carries that time. Errors as
/// [`handle_receipt`]'s: a failure the sender caused is recorded on the receipt, after the
/// rollback of everything else.
pub async fn process(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    receipt: &Receipt,
) -> Result<Processed, Error> {
    if let Some(erased_at) = receipt.body_erased_at {
        // Nothing left to parse: refused before anything is written, so the receipt keeps
        // the outcome it had (docs/proposal-callback.md, "Retention of raw bodies").
        let days = tenants::body_retention_days(conn, &receipt.tenant_id).await?;
        return Err(Error::BodyErased {
            id: receipt.id,
            erased_at,
            retention: match days {
                Some(days) => format!(
                    "tenant {} keeps the raw bodies of its callbacks {}",
                    receipt.tenant_id,
                    days_text(days)
                ),
                None => "after its tenant's retention".to_owned(),
            },
        });
    }
    let at = clock.now();
    let result = conn
        .transaction::<_, Error, _>(async |conn| {
            apply_receipt(conn, receipt, receipt.integration_id, at).await
        })
        .await;
    record_failure(conn, receipt, result, at).await
}

/// The integration, if it is `tenant`'s: 404 when it does not exist, 403 when it is another
/// tenant's (as RegisterCallback answers).
pub async fn own_integration(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    id: i64,
) -> Result<IntegrationRow, Error> {
    let row = integrations::find(conn, id)
        .await?
        .ok_or(Error::IntegrationNotFound(id))?;
    if row.tenant_id != tenant {
        return Err(Error::Forbidden(
            "this integration belongs to another tenant",
        ));
    }
    Ok(row)
}

/// Pauses `tenant`'s integration `id` (a no-op when it is paused already), paused since
/// `clock`'s now. Returns once no callback of it is being applied: every later one is
/// deferred.
pub async fn pause(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    id: i64,
) -> Result<IntegrationRow, Error> {
    own_integration(conn, tenant, id).await?;
    conn.transaction::<_, Error, _>(async |conn| {
        integrations::hold_alone(conn, id).await?;
        Ok(integrations::set_paused(conn, id, clock.now()).await?)
    })
    .await
}

/// What a resume did.
#[derive(Debug, Clone)]
pub struct Resumed {
    /// The integration afterwards: `paused_at` is null unless receipts are left.
    pub integration: IntegrationRow,
    /// Deferred receipts applied by this call, per outcome (`processed`, `duplicate`, ...,
    /// or the error code of one that failed, such as `proposal_not_found`).
    pub outcomes: BTreeMap<String, usize>,
    /// Deferred receipts still waiting (more than [`RESUME_MAX`]): resume again.
    pub remaining: i64,
    /// What happened to each deferred receipt, in the order they were applied.
    pub effects: Vec<Effect>,
}

enum Step {
    Applied(Result<Outcome, ErrorCode>, Effect),
    Done(IntegrationRow),
}

/// Resumes `tenant`'s integration `id`: applies its deferred receipts in arrival order (at
/// most `max`), then ends the pause. Safe to run on several replicas at once and while
/// callbacks arrive (see the module's notes). Resuming an integration that is not paused
/// changes nothing.
pub async fn resume(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    id: i64,
    max: usize,
) -> Result<Resumed, Error> {
    let mut integration = own_integration(conn, tenant, id).await?;
    let mut outcomes = BTreeMap::new();
    let mut effects = Vec::new();
    let mut applied = 0;
    while integration.paused_at.is_some() {
        if applied >= max {
            let remaining = receipts::count_deferred(conn, id).await?;
            if remaining > 0 {
                return Ok(Resumed {
                    integration,
                    outcomes,
                    remaining,
                    effects,
                });
            }
        }
        let step = conn
            .transaction::<_, Error, _>(async |conn| {
                integrations::hold_alone(conn, id).await?;
                let Some(receipt) = receipts::oldest_deferred(conn, id).await? else {
                    return Ok(Step::Done(integrations::clear_paused(conn, id).await?));
                };
                let before = preview::status_before(conn, &receipt).await?;
                match handle_receipt(conn, &receipt, clock.now()).await {
                    Err(e) if !e.is_client_error() => Err(e),
                    result => Ok(Step::Applied(
                        preview::ended(&result),
                        preview::effect(&receipt, before, &result),
                    )),
                }
            })
            .await?;
        match step {
            Step::Applied(outcome, effect) => {
                effects.push(effect);
                metrics::count_callback(&integration.tenant_id, integration.insurer, outcome);
                *outcomes
                    .entry(outcome_or_code(outcome).to_owned())
                    .or_insert(0) += 1;
                applied += 1;
            }
            Step::Done(row) => integration = row,
        }
    }
    Ok(Resumed {
        integration,
        outcomes,
        remaining: 0,
        effects,
    })
}

/// What [`resume`] would do now, without doing it: `tenant`'s integration `id`'s deferred
/// receipts (at most `max`) applied in arrival order in one transaction that is then rolled
/// back. The integration is answered as it is (still paused); `remaining` is what the resume
/// would leave deferred. Not paused: nothing to apply. Callbacks arriving between the
/// preview and the resume are applied by the resume too, after these.
pub async fn preview_resume(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    tenant: &str,
    id: i64,
    max: usize,
) -> Result<Resumed, Error> {
    let integration = own_integration(conn, tenant, id).await?;
    if integration.paused_at.is_none() {
        return Ok(Resumed {
            integration,
            outcomes: BTreeMap::new(),
            remaining: 0,
            effects: Vec::new(),
        });
    }
    let ended = conn
        .transaction::<(), Preview<Resumed>, _>(async |conn| {
            Preview::stop(apply_deferred(conn, clock, integration, max).await)
        })
        .await;
    Preview::finish(ended)
}

/// Applies the integration's deferred receipts, oldest first, at most `max`, in the caller's
/// transaction (a preview's).
async fn apply_deferred(
    conn: &mut AsyncPgConnection,
    clock: &Clock,
    integration: IntegrationRow,
    max: usize,
) -> Result<Resumed, Error> {
    let mut outcomes = BTreeMap::new();
    let mut effects = Vec::new();
    while effects.len() < max {
        let Some(receipt) = receipts::oldest_deferred(conn, integration.id).await? else {
            break;
        };
        let before = preview::status_before(conn, &receipt).await?;
        let result = match handle_receipt(conn, &receipt, clock.now()).await {
            Err(e) if !e.is_client_error() => return Err(e),
            result => result,
        };
        *outcomes
            .entry(outcome_or_code(preview::ended(&result)).to_owned())
            .or_insert(0) += 1;
        effects.push(preview::effect(&receipt, before, &result));
    }
    let remaining = receipts::count_deferred(conn, integration.id).await?;
    Ok(Resumed {
        integration,
        outcomes,
        remaining,
        effects,
    })
}

#[cfg(test)]
mod days_tests {
    #[test]
    fn one_day_is_singular() {
        assert_eq!(super::days_text(1), "1 day");
        assert_eq!(super::days_text(30), "30 days");
    }
}
