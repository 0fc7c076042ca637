//! What both services share, and nothing domain-specific: the service skeleton (command
//! line, start-up, HTTP server), settings (the variables every service reads), telemetry,
//! problem+json errors, request extractors, what the HTML pages share, HS256 tokens, the database pool and migrations, `LISTEN`/`NOTIFY`, the
//! operational routes, and (feature `test-support`) a per-test database and fault helpers.

pub mod auth;
pub mod clock;
pub mod config;
pub mod db;
pub mod docs;
pub mod extract;
pub mod http;
pub mod in_flight;
pub mod listen;
pub mod pages;
pub mod problem;
pub mod routes;
pub mod service;
pub mod settings;
pub mod telemetry;
pub mod text_enum;

#[cfg(feature = "test-support")]
pub mod test_support;

pub use clock::Clock;
pub use problem::{FieldError, Problem};
