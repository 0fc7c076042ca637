//! Receives insurers' result callbacks for rental-guarantee insurance proposals.

pub mod openapi;
pub mod schema;
pub mod seed;
pub mod startup;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

/// The PostgreSQL schema this service owns.
pub const SCHEMA: &str = "proposal";
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");
pub const MIGRATIONS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
