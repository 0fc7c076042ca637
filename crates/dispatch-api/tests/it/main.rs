//! dispatch-api's integration tests: one binary, each test on its own freshly seeded
//! database, against a real server on port 0 (`support::Api`), as the client calls it.
//!
//! - reads: `access`, `users`, `incidents`, `search`, `fleet`, `reference`, `seed`, `demo`,
//!   `migrations`, `openapi`;
//! - writes (`client` drives them): `flows`, `transitions`, `concurrency`, `idempotency`,
//!   `pickers` (ids that round-trip), `destination`, `availability`, `history`, `phones`;
//! - identity: `auth`, `tokens` (bound to this service), `idp` (an identity provider's);
//!   real-time updates over sockets: `realtime`;
//! - browser clients (CORS, `ETag`/304, query parameters): `browser`;
//! - a whole shift of call takers, regulators and fleet operators: `shift`;
//! - response times, targets, reports and hospital offload, on a manual clock: `times`.

mod access;
mod access_log;
mod auth;
mod availability;
mod browser;
mod client;
mod concurrency;
mod demo;
mod destination;
mod fleet;
mod flows;
mod history;
mod idempotency;
mod idp;
mod incidents;
mod layers;
mod manager;
mod migrations;
mod openapi;
mod patient_data;
mod phones;
mod pickers;
mod realtime;
mod reference;
mod search;
mod seed;
mod shift;
mod support;
mod telephony;
mod times;
mod tokens;
mod transitions;
mod users;
