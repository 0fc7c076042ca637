//! The insurers' registration API (docs/proposal-callback.md, "Registering the callback"):
//!
//! - [`config`]: the insurers' URLs and credentials, the callback base URL, the timeouts;
//! - [`client`]: the HTTP call and its failures.
//!
//! What the insurer receives is [`crate::domain::registration`]; the token's life around the
//! call is `flow::registration`.

pub mod client;
pub mod config;
