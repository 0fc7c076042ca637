//! Callback counters per tenant, insurer and outcome, registered into the registry that
//! `/metrics` serves. Labels come from the token (known tenants and insurers only), so an
//! unauthenticated caller cannot grow the label set.

use std::sync::LazyLock;

use prometheus::{IntCounterVec, Opts, Registry};

use crate::registration::config::Environment;

pub static CALLBACKS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    IntCounterVec::new(
        Opts::new(
            "callbacks_total",
            "callbacks by tenant, insurer and outcome (processed, duplicate, unchanged, or the error code)",
        )
        .namespace("proposal_callback"),
        &["tenant", "insurer", "outcome"],
    )
    .expect("valid counter")
});

pub static REGISTRATIONS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    IntCounterVec::new(
        Opts::new(
            "callback_registrations_total",
            "RegisterCallback calls by insurer, environment and result (registered, or the error code)",
        )
        .namespace("proposal_callback"),
        &["insurer", "environment", "result"],
    )
    .expect("valid counter")
});

pub fn register(registry: &Registry) {
    // A registry refuses a collector twice; tests build several apps in one process.
    let _ = registry.register(Box::new(CALLBACKS.clone()));
    let _ = registry.register(Box::new(REGISTRATIONS.clone()));
}

/// Counts a registration that reached the insurer's configuration (known insurer only).
pub fn count_registration(insurer: &str, env: Environment, result: &str) {
    REGISTRATIONS
        .with_label_values(&[insurer, env.as_str(), result])
        .inc();
}

/// Counts a callback's (or a replay's) answer: its `result`, or the error's code.
pub fn count_callback(tenant: &str, insurer: &str, outcome: &str) {
    CALLBACKS
        .with_label_values(&[tenant, insurer, outcome])
        .inc();
}
