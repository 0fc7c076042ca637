//! The email a transition sends to the proposal's contact (docs/proposal-callback.md,
//! "Email"):
//!
//! - [`compose`]: the message of a transition (pure);
//! - [`config`]: `SMTP_URL`, `EMAIL_FROM` and the retry pacing, read once at start;
//! - [`worker`]: the outbox worker that sends queued messages over SMTP.
//!
//! An email is written to the outbox in the transaction of its transition
//! ([`crate::proposal::apply`]), so it exists exactly when the transition does.

pub mod compose;
pub mod config;
pub mod worker;
