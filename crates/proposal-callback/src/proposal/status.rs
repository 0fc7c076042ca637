//! A proposal's status and a callback's outcome, as stored and as answered.

use std::fmt;

use serde::Serialize;
use utoipa::ToSchema;

/// Internal proposal statuses (docs/proposal-callback.md, "Statuses and transitions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    UnderAnalysis,
    Pending,
    Approved,
    Refused,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::UnderAnalysis,
        Status::Pending,
        Status::Approved,
        Status::Refused,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::UnderAnalysis => "under_analysis",
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Refused => "refused",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// A proposal waits in the insurer queue while the insurer still has to decide.
    pub fn in_queue(self) -> bool {
        matches!(self, Status::UnderAnalysis | Status::Pending)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a callback ended, as the 200 body's `result` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The transition was applied (and its email queued).
    Processed,
    /// The same notification was applied before; nothing changed.
    Duplicate,
    /// The proposal already had that status; nothing changed.
    Unchanged,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Processed => "processed",
            Outcome::Duplicate => "duplicate",
            Outcome::Unchanged => "unchanged",
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
