//! Search: how a typed term is folded and matched, the same way in memory and in SQL
//! (`fold`), the reference lists' in-memory name index (`index`), what a mask term asks for
//! by its shape (`term`), and the search routes' parameters (`params`), whose checked values
//! the store runs.

pub mod fold;
pub mod index;
pub mod params;
pub mod term;

pub use fold::fold;
pub use index::NameIndex;
pub use params::{HealthUnitParams, Mask, MaskParams, Order, Scope, Search, SearchParams};
pub use term::{MaskTerm, TextPatterns};
