//! A proposal's status, a callback's outcome and a receipt's status, as stored and as
//! answered.

use common::text_enum;

text_enum! {
    /// Internal proposal statuses (docs/proposal-callback.md, "Statuses and transitions").
    pub enum Status {
        UnderAnalysis = "under_analysis",
        Pending = "pending",
        Approved = "approved",
        Refused = "refused",
    }
}

impl Status {
    /// A proposal waits in the insurer queue while the insurer still has to decide.
    pub fn in_queue(self) -> bool {
        matches!(self, Status::UnderAnalysis | Status::Pending)
    }
}

text_enum! {
    /// How a callback ended, as the body's `result` says (200; 202 for `deferred`).
    pub enum Outcome {
        /// The transition was applied (and its email queued).
        Processed = "processed",
        /// The same notification was applied before; nothing changed.
        Duplicate = "duplicate",
        /// The proposal already had that status; nothing changed.
        Unchanged = "unchanged",
        /// Older, by the insurer's event time, than the last callback applied to the
        /// proposal; stored, nothing changed.
        Stale = "stale",
        /// An event that carries no analysis result; stored, nothing applied.
        Ignored = "ignored",
        /// Its integration is paused: stored, applied in arrival order when it is resumed
        /// (answered 202).
        Deferred = "deferred",
    }
}

text_enum! {
    /// Where a stored callback (a receipt) stands: `received` until its outcome is recorded,
    /// then the callback's outcome or `failed`.
    pub enum ReceiptStatus {
        /// Stored; no outcome recorded yet (the process or the database went away).
        Received = "received",
        /// Stored while its integration was paused; applied when it is resumed.
        Deferred = "deferred",
        Processed = "processed",
        Duplicate = "duplicate",
        Unchanged = "unchanged",
        Stale = "stale",
        Ignored = "ignored",
        /// The sender's fault (4xx); the answer's code and detail are kept.
        Failed = "failed",
    }
}

impl From<Outcome> for ReceiptStatus {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Processed => ReceiptStatus::Processed,
            Outcome::Duplicate => ReceiptStatus::Duplicate,
            Outcome::Unchanged => ReceiptStatus::Unchanged,
            Outcome::Stale => ReceiptStatus::Stale,
            Outcome::Ignored => ReceiptStatus::Ignored,
            Outcome::Deferred => ReceiptStatus::Deferred,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Status::{self, *};

    #[test]
    fn queue_membership_and_names() {
        assert!(UnderAnalysis.in_queue() && Pending.in_queue());
        assert!(!Approved.in_queue() && !Refused.in_queue());
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(Status::parse("APPROVED"), None);
    }
}
