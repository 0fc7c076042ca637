//! What an operator reads, shared by the admin JSON routes and the console
//! (docs/proposal-callback.md, "Operators"): read models built from the store, and the
//! checks of the receipts' filter.
//!
//! - [`receipts`]: a stored callback as an operator sees it; the filter's checks;
//! - [`integrations`]: an integration with its last registration attempt;
//! - [`story`]: a proposal's whole story and the tenant's emails.

pub mod integrations;
pub mod receipts;
pub mod story;
