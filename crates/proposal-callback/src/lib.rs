//! Receives insurers' result callbacks for rental-guarantee insurance proposals.

pub mod auth;
pub mod email;
pub mod error;
pub mod hex;
pub mod insurer;
pub mod metrics;
pub mod openapi;
pub mod proposal;
pub mod ratelimit;
pub mod registration;
pub mod routes;
pub mod schema;
pub mod seed;
pub mod startup;
pub mod state;
pub mod store;
mod text_enum;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

/// The PostgreSQL schema this service owns.
pub const SCHEMA: &str = "proposal";
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");
pub const MIGRATIONS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
