//! HTTP tests of the writes (issue 4), each on its own freshly seeded database.

#[allow(dead_code)]
#[path = "../routes/support.rs"]
mod support;

mod client;
mod concurrency;
mod flows;
mod idempotency;
mod transitions;
