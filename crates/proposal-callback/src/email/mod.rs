//! The email settings (docs/proposal-callback.md, "Email"):
//!
//! - [`config`]: `SMTP_URL`, `EMAIL_FROM` and the retry pacing, read once at start.
//!
//! The message is [`crate::domain::email`]; the worker that sends the outbox is
//! `flow::email_worker`.

pub mod config;
