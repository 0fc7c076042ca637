//! Which credentials open what (docs/proposal-callback.md, "Authentication"): an insurer's
//! integration presents a Basic token at `/callback/auth` and then a callback JWT; a
//! tenant's operator presents an admin JWT.
//!
//! - [`jwt`]: the claims of both JWTs and how they are issued;
//! - [`admin`]: which tokens open the admin routes (this service's, an identity provider's).
//!
//! The Basic tokens are [`crate::domain::basic_token`]; the extractors that make a handler
//! state who may call it are `routes::extract`.

pub mod admin;
pub mod jwt;
