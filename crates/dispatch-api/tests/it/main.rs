//! dispatch-api's integration tests: one binary, each test on its own freshly seeded
//! database, against a real server on port 0 (`support::Api`), as the client calls it.
//!
//! - reads: `access`, `users`, `incidents`, `search`, `fleet`, `reference`, `seed`,
//!   `migrations`, `openapi`;
//! - writes (`client` drives them): `flows`, `transitions`, `concurrency`, `idempotency`;
//! - identity: `auth`; real-time updates over sockets: `realtime`.

mod access;
mod auth;
mod client;
mod concurrency;
mod fleet;
mod flows;
mod idempotency;
mod incidents;
mod migrations;
mod openapi;
mod realtime;
mod reference;
mod search;
mod seed;
mod support;
mod transitions;
mod users;
