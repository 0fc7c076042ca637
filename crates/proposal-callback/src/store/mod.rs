//! Diesel queries and rows of the `proposal` schema, grouped by what they are about.

pub mod integrations;
pub mod outbox;
pub mod proposals;
pub mod receipts;
