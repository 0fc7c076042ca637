//! The service's steps, each one transaction or one outside call, returning
//! [`crate::error::Error`] (docs/proposal-callback.md):
//!
//! - [`apply`]: ProcessProposalCallback, the one transaction that applies a parsed callback
//!   (proposal, history, events, outbox email, the receipt's outcome);
//! - [`pause`]: every stored receipt goes through [`pause::process`] (deferred while its
//!   integration is paused); pausing and resuming an integration;
//! - [`receive`]: an authenticated callback's body stored as a receipt, then processed: what
//!   the callback route does after its checks, and what the demo seed does for its history;
//! - [`replay`]: processes a stored receipt again, one or in bulk;
//! - [`registration`]: RegisterCallback, the token's life around the insurer's call (pending,
//!   then live or revoked);
//! - [`email_worker`]: the outbox worker that sends queued messages over SMTP;
//! - [`email_retry`]: an operator's retry of emails the relay refused for good;
//! - [`sweep`]: the sweeper, which processes again the receipts a crash left `received`;
//! - [`retention`]: the raw bodies erased once past their tenant's retention;
//! - [`preview`]: what a repair does to each receipt, and its dry run (a transaction rolled
//!   back);
//! - [`silence`]: the silence watch, which flags integrations whose insurer stopped calling
//!   back and tells the tenant's operator.

pub mod apply;
pub mod email_retry;
pub mod email_worker;
pub mod pause;
pub mod preview;
pub mod receive;
pub mod registration;
pub mod replay;
pub mod retention;
pub mod silence;
pub mod sweep;
