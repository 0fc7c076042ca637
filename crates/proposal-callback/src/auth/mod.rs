//! Who is calling, and the credentials they call with (docs/proposal-callback.md,
//! "Authentication"): an insurer's integration presents a Basic token at `/callback/auth` and then a
//! callback JWT; a tenant's operator presents an admin JWT.
//!
//! - [`basic`]: the Basic tokens (made, hashed, compared; only hashes are stored);
//! - [`jwt`]: the claims of both JWTs and how they are issued;
//! - [`admin`]: which tokens open the admin routes (this service's, an identity provider's);
//! - [`extract`]: the extractors that make a handler state who may call it.

pub mod admin;
pub mod basic;
pub mod extract;
pub mod jwt;
