//! Receives insurers' result callbacks for rental-guarantee insurance proposals.
//!
//! The modules are layers (docs/architecture.md, "proposal-callback"): `routes`, `console`
//! and `seed` on top; then `state`, `auth`, `ratelimit`; `query` and `flow`; `metrics`;
//! `error`; `store`; `registration` and `email` (settings and the outside call); `domain` at
//! the bottom. A module imports only from layers below its own.

pub mod auth;
pub mod console;
pub mod domain;
pub mod email;
pub mod error;
pub mod flow;
pub mod hex;
pub mod metrics;
pub mod openapi;
pub mod query;
pub mod ratelimit;
pub mod registration;
pub mod routes;
pub mod schema;
pub mod seed;
pub mod settings;
pub mod startup;
pub mod state;
pub mod store;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

/// The PostgreSQL schema this service owns.
pub const SCHEMA: &str = "proposal";
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");
pub const MIGRATIONS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");

/// What the service skeleton (`common::service`) needs to know about this service.
pub const SKELETON: common::service::Skeleton = common::service::Skeleton {
    name: "proposal-callback",
    about: "Insurer proposal callback receiver. Configuration comes from the environment (see `serve --help` and .env.example)",
    version: env!("CARGO_PKG_VERSION"),
    serve_about: "Migrate, then serve HTTP (the default)",
    default_bind: "127.0.0.1:8081",
    schema: SCHEMA,
    migrations: &MIGRATIONS,
    settings: <settings::Settings as clap::Args>::augment_args,
};
