//! Callback counters per tenant, insurer and outcome, registered into the registry that
//! `/metrics` serves. Labels come from the token (known tenants and insurers only), so an
//! unauthenticated caller cannot grow the label set.

use std::sync::LazyLock;

use prometheus::{Gauge, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};

use crate::domain::code::{ErrorCode, outcome_or_code};
use crate::domain::insurer::Insurer;
use crate::domain::status::Outcome;
use crate::registration::config::Environment;
use crate::store::registration_attempts::REGISTERED;

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

/// 1 while an integration of the tenant with the insurer is flagged silent
/// (docs/proposal-callback.md, "Silent insurers"), else 0; set by every replica's silence
/// watch from the database, so each shows the same value.
pub static INTEGRATION_SILENT: LazyLock<IntGaugeVec> = LazyLock::new(|| {
    IntGaugeVec::new(
        Opts::new(
            "integration_silent",
            "1 while the tenant's integration with the insurer is silent (no callback for longer than its usual rhythm allows), else 0",
        )
        .namespace("proposal_callback"),
        &["tenant", "insurer"],
    )
    .expect("valid gauge")
});

pub fn register(registry: &Registry) {
    // A registry refuses a collector twice; tests build several apps in one process.
    let _ = registry.register(Box::new(CALLBACKS.clone()));
    let _ = registry.register(Box::new(REGISTRATIONS.clone()));
    let _ = registry.register(Box::new(INTEGRATION_SILENT.clone()));
}

/// Sets the silence gauge of the tenant's integrations with the insurer.
pub fn set_integration_silent(tenant: &str, insurer: Insurer, silent: bool) {
    INTEGRATION_SILENT
        .with_label_values(&[tenant, insurer.as_str()])
        .set(i64::from(silent));
}

/// Counts a registration that reached the insurer's configuration (known insurer only):
/// `registered`, or the code it failed with.
pub fn count_registration(insurer: Insurer, env: Environment, failure: Option<ErrorCode>) {
    let result = failure.map_or(REGISTERED, ErrorCode::as_str);
    REGISTRATIONS
        .with_label_values(&[insurer.as_str(), env.as_str(), result])
        .inc();
}

/// Counts a callback's (or a replay's) answer: its `result`, or the error's code.
pub fn count_callback(tenant: &str, insurer: Insurer, outcome: Result<Outcome, ErrorCode>) {
    CALLBACKS
        .with_label_values(&[tenant, insurer.as_str(), outcome_or_code(outcome)])
        .inc();
}

/// The outbox as `/metrics` shows it (docs/operations.md, "Email"). One set per process,
/// registered into that process's registry: the gauges are read from the database (the same
/// on every replica), the counters count this process's own attempts.
#[derive(Clone)]
pub struct OutboxMetrics {
    pub queued: IntGauge,
    pub oldest_queued_age: Gauge,
    /// Emails the relay refused for good, waiting for an operator's retry.
    pub failed: IntGauge,
    pub attempts_failed: IntCounter,
    pub sent: IntCounter,
}

impl Default for OutboxMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl OutboxMetrics {
    pub fn new() -> Self {
        let opts = |name: &str, help: &str| Opts::new(name, help).namespace("proposal_callback");
        Self {
            queued: IntGauge::with_opts(opts("outbox_queued", "emails in the outbox not sent yet"))
                .expect("valid gauge"),
            oldest_queued_age: Gauge::with_opts(opts(
                "outbox_oldest_queued_age_seconds",
                "age of the oldest email not sent yet (0 when none is queued)",
            ))
            .expect("valid gauge"),
            failed: IntGauge::with_opts(opts(
                "outbox_failed",
                "emails the relay refused for good (a 5xx answer to their recipient or content); not retried until an operator retries them",
            ))
            .expect("valid gauge"),
            attempts_failed: IntCounter::with_opts(opts(
                "outbox_attempts_failed_total",
                "SMTP attempts that failed (refused, unreachable or timed out)",
            ))
            .expect("valid counter"),
            sent: IntCounter::with_opts(opts(
                "outbox_sent_total",
                "emails handed to the SMTP relay",
            ))
            .expect("valid counter"),
        }
    }

    pub fn register(&self, registry: &Registry) {
        let _ = registry.register(Box::new(self.queued.clone()));
        let _ = registry.register(Box::new(self.oldest_queued_age.clone()));
        let _ = registry.register(Box::new(self.failed.clone()));
        let _ = registry.register(Box::new(self.attempts_failed.clone()));
        let _ = registry.register(Box::new(self.sent.clone()));
    }
}
