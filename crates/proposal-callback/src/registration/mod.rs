//! RegisterCallback (docs/proposal-callback.md, "Registering the callback"):
//!
//! - [`config`]: the insurers' URLs and credentials, the callback base URL, the timeouts;
//! - [`payload`]: what the insurer receives;
//! - [`client`]: the HTTP call and its failures;
//! - [`flow`]: the token's life around the call (pending, then live or revoked).

pub mod client;
pub mod config;
pub mod flow;
pub mod payload;
