//! What both services share, and nothing domain-specific: configuration, telemetry,
//! problem+json errors, request extractors, HS256 tokens, the database pool and
//! migrations, the operational routes, and (feature `test-support`) a per-test database.

pub mod auth;
pub mod config;
pub mod db;
pub mod docs;
pub mod extract;
pub mod http;
pub mod listen;
pub mod problem;
pub mod telemetry;

#[cfg(feature = "test-support")]
pub mod test_support;

pub use problem::{FieldError, Problem};
