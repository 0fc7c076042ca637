//! Diesel queries, one module per resource. Each function is one statement (one round trip)
//! unless its comment says otherwise, and returns wire types from `views`.
//!
//! Functions take `&AsyncPgConnection` (not `&mut`): diesel-async pipelines queries issued
//! through a shared reference, so a screen route can `try_join!` several of them on one
//! connection and wait about one round trip for all.

pub mod dispatches;
pub mod idempotency;
pub mod incident_writes;
pub mod incidents;
pub mod reference;
pub mod users;
pub mod writes;

use crate::views::{RefOption, UserOption};

pub fn user_option((id, descriptive_name): (i64, String)) -> UserOption {
    UserOption {
        id,
        descriptive_name,
    }
}

pub fn ref_option((id, name): (i32, String)) -> RefOption {
    RefOption { id, name }
}

/// A joined optional reference: both columns null when the row has none.
pub fn opt_ref(id: Option<i32>, name: Option<String>) -> Option<RefOption> {
    id.zip(name).map(ref_option)
}

pub fn opt_user(row: Option<(i64, String)>) -> Option<UserOption> {
    row.map(user_option)
}
