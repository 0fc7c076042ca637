//! Emergency dispatch service: incidents from the first call to the unit's release.

pub mod access_log;
pub mod auth;
#[cfg(feature = "bench")]
pub mod bench;
pub mod catalog;
pub mod cors;
pub mod domain;
pub mod error;
pub mod listener;
pub mod manager;
pub mod openapi;
pub mod patient_data;
pub mod realtime;
pub mod routes;
/// The tables, as `diesel print-schema` writes them (see diesel.toml).
#[rustfmt::skip]
pub mod schema;
pub mod search;
pub mod seed;
pub mod settings;
pub mod startup;
pub mod state;
pub mod store;
pub mod telephony;
pub mod token_cache;
pub mod user_cache;
pub mod views;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

/// The PostgreSQL schema this service owns.
pub const SCHEMA: &str = "dispatch";
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");
pub const MIGRATIONS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");

/// What the service skeleton (`common::service`) needs to know about this service.
pub const SKELETON: common::service::Skeleton = common::service::Skeleton {
    name: "dispatch-api",
    about: "Emergency dispatch service. Configuration comes from the environment (see `serve --help` and .env.example)",
    version: env!("CARGO_PKG_VERSION"),
    serve_about: "Migrate, then serve HTTP and WebSockets (the default)",
    default_bind: "127.0.0.1:8080",
    schema: SCHEMA,
    migrations: &MIGRATIONS,
    settings: <settings::Settings as clap::Args>::augment_args,
};
