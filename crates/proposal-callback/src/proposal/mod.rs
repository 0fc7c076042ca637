//! Proposals (docs/proposal-callback.md, "Statuses and transitions"):
//!
//! - [`status`]: the statuses a proposal has and the outcomes a callback answers with;
//! - [`machine`]: which status a callback may move a proposal to (no I/O);
//! - [`apply`]: ProcessProposalCallback, the one transaction that applies a parsed callback
//!   (proposal, history, events, outbox email, the receipt's outcome);
//! - [`pause`]: every stored receipt goes through [`pause::process`] (deferred while its
//!   integration is paused); pausing and resuming an integration;
//! - [`receive`]: an authenticated callback's body stored as a receipt, then processed: what
//!   the callback route does after its checks, and what the demo seed does for its history;
//! - [`replay`]: processes again, in bulk, the stored receipts an operator picks;
//! - [`sweep`]: processes again the receipts a crash left `received`.

pub mod apply;
pub mod machine;
pub mod pause;
pub mod receive;
pub mod replay;
pub mod status;
pub mod sweep;
