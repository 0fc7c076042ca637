//! The rules of the dispatch centre, with no HTTP and no queries in them: the incident and
//! dispatch state machines (each one table that every write consults and the tests
//! enumerate), the profiles, the phone rule, and the refusals a rule can answer with.
//!
//! The enums here are stored as text columns; [`common::text_enum!`] gives each its one
//! spelling, used alike by serde, OpenAPI and diesel.

pub mod access;
pub mod call;
pub mod dispatch;
pub mod fleet;
pub mod form;
pub mod history;
pub mod incident;
pub mod phone;
pub mod queue;
pub mod reference;
pub mod refusal;
pub mod times;
pub mod user;

pub use refusal::Refusal;
