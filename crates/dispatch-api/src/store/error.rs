//! The store's one error: a rule the store asked said no, or the database failed. It names
//! no HTTP: `crate::error` maps it to the service's `Error` in one `From`, at the routes'
//! edge (docs/architecture.md, "dispatch-api"). proposal-callback's store keeps the same
//! convention with diesel's own error, as it asks no rule inside a statement.

use crate::domain::Refusal;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A rule of the dispatch centre said no inside a write's transaction (the transaction
    /// rolls back).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The database failed, or answered what a rule reads as "not there".
    #[error("database: {0}")]
    Db(#[from] diesel::result::Error),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
