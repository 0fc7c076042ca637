//! Diesel queries and rows of the `proposal` schema, grouped by what they are about. Store
//! functions take a connection (the caller owns the transaction) and return diesel's own
//! errors; `error::Error` turns them into answers.

pub mod applied;
pub mod auth_failures;
pub mod console_sessions;
pub mod integrations;
pub mod outbox;
pub mod proposals;
pub mod receipts;
pub mod registration_attempts;
pub mod silences;
pub mod tenants;
