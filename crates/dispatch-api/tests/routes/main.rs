//! HTTP tests of every read route, each on its own freshly seeded database.

mod access;
mod fleet;
mod incidents;
mod migrations;
mod openapi;
mod reference;
mod seed;
mod support;
mod users;
