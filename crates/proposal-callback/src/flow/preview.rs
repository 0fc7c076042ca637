//! What a repair does to each receipt, and its dry run (docs/proposal-callback.md, "Repairs
//! previewed"): a bulk replay or a resume answers, per receipt, the proposal, its status
//! before and after, how the receipt ended and whether an email was queued. With
//! `dry_run=true` the same code runs in one transaction that is then rolled back, so the
//! preview is what the real run would do at that moment (the same rules, the same order,
//! each receipt seeing the ones before it applied), and nothing of it stays: no status, no
//! history, no email, no receipt's outcome, no metric.

use diesel_async::AsyncPgConnection;
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::code::Ended;
use crate::domain::insurer::Insurer;
use crate::domain::status::{Outcome, Status};
use crate::error::Error;
use crate::flow::apply::Processed;
use crate::store::proposals;
use crate::store::receipts::Receipt;

/// What a repair did (or, in a preview, would do) to one receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Effect {
    pub receipt_id: i64,
    /// `porto`, `tokio` or `too`.
    #[schema(value_type = String, example = "porto")]
    pub insurer: Insurer,
    /// The proposal it concerns (as the tenant knows it); null when its body names none.
    #[schema(example = "99121")]
    pub proposal_id: Option<String>,
    /// The proposal's status when this receipt's turn comes (its status now, for the first
    /// receipt of a proposal); null when there is no such proposal.
    pub status_before: Option<Status>,
    /// The status it reaches; the same as before when nothing moves.
    pub status_after: Option<Status>,
    /// `processed`, `duplicate`, `unchanged`, `stale`, `ignored`, `deferred`, or the error
    /// code it fails with (`proposal_not_found`, `invalid_transition`, ...).
    #[schema(value_type = String, example = "processed")]
    pub outcome: Ended,
    /// Whether an email to the proposal's contact is queued.
    pub email: bool,
}

/// The proposal a stored receipt concerns, as far as can be told before it is applied: the
/// one recorded on it, else the one its body names (read leniently).
pub fn named_proposal(receipt: &Receipt) -> Option<String> {
    receipt
        .proposal_id
        .clone()
        .or_else(|| receipt.insurer.proposal_hint(&receipt.body))
}

/// The status of the proposal `receipt` names, before it is processed.
pub async fn status_before(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
) -> Result<Option<Status>, Error> {
    let Some(proposal) = named_proposal(receipt) else {
        return Ok(None);
    };
    if proposal.contains('\0') {
        return Ok(None);
    }
    Ok(proposals::status_of(conn, &receipt.tenant_id, &proposal).await?)
}

/// What processing `receipt` did, from its status before and the result (a failure the
/// sender caused is an outcome here; a server-side one is not, and the caller stops on it).
pub fn effect(
    receipt: &Receipt,
    before: Option<Status>,
    ended: &Result<Processed, Error>,
) -> Effect {
    let (outcome, proposal_id, after, email) = match ended {
        Ok(p) => (
            Ok(p.outcome),
            p.proposal_id.clone(),
            p.status.or(before),
            p.email_id.is_some(),
        ),
        Err(e) => (Err(e.code()), None, before, false),
    };
    Effect {
        receipt_id: receipt.id,
        insurer: receipt.insurer,
        proposal_id: proposal_id.or_else(|| named_proposal(receipt)),
        status_before: before,
        status_after: after,
        outcome: Ended(outcome),
        email,
    }
}

/// How a processed receipt is counted: its outcome, or the code it failed with.
pub fn ended(result: &Result<Processed, Error>) -> Result<Outcome, crate::domain::code::ErrorCode> {
    match result {
        Ok(p) => Ok(p.outcome),
        Err(e) => Err(e.code()),
    }
}

/// How a preview's transaction ends: always rolled back (the transaction's closure returns
/// [`Preview::stop`], an `Err` either way), carrying what it found; [`Preview::finish`] reads
/// it back. A repair's dry run is its real code inside such a transaction: the row locks it
/// takes are held until then (the real run holds them one receipt at a time).
pub enum Preview<T> {
    Done(T),
    Failed(Error),
}

impl<T> From<diesel::result::Error> for Preview<T> {
    fn from(e: diesel::result::Error) -> Self {
        Preview::Failed(e.into())
    }
}

impl<T> Preview<T> {
    /// What the transaction's closure returns: never `Ok`, so it is rolled back.
    pub fn stop(found: Result<T, Error>) -> Result<(), Preview<T>> {
        Err(match found {
            Ok(found) => Preview::Done(found),
            Err(e) => Preview::Failed(e),
        })
    }

    /// What the rolled-back transaction found, or why it failed.
    pub fn finish(ended: Result<(), Preview<T>>) -> Result<T, Error> {
        match ended {
            Err(Preview::Done(found)) => Ok(found),
            Err(Preview::Failed(e)) => Err(e),
            Ok(()) => Err(Error::Internal("a preview's transaction committed".into())),
        }
    }
}
