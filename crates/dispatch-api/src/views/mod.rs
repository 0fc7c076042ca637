//! What goes on the wire: one type per response shape, named for what it shows, with only
//! the fields its screen uses, one file per route group. The store's read models that go
//! out as they are (`store::read`) are re-exported here, so a route names every answer
//! from `views`; the answers a route composes from several reads are defined here.
//! Rows never reach a response directly (that is how logins leak).

mod dispatch;
mod fleet;
mod incident;
mod offload;
mod shared;
mod telephony;
mod times;

pub use crate::store::read::*;
pub use dispatch::*;
pub use fleet::*;
pub use incident::*;
pub use offload::*;
pub use shared::*;
pub use telephony::*;
pub use times::*;
