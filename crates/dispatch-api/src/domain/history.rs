//! The words of an incident's history and of its real-time events: which group of the
//! incident a change moved (`changed` of `incident.updated`, the NOTIFY payload) and what a
//! history entry's write was (docs/dispatch-realtime.md, "Writes"; docs/dispatch-routes.md,
//! "Writes: what each records").

use common::text_enum;

text_enum! {
    /// A group of the incident that a write changed: the screen's form or section that must
    /// be read again. Every group, in the order the screens show them, is [`ChangeGroup::ALL`]
    /// (sent when what changed is not known).
    pub enum ChangeGroup {
        BasicData = "basic_data",
        Occurrence = "occurrence",
        Patient = "patient",
        State = "state",
        Regulation = "regulation",
        TechnicalDecisions = "technical_decisions",
        Dispatches = "dispatches",
        Intercurrences = "intercurrences",
        Conclusion = "conclusion",
        PrankCalls = "prank_calls",
    }
}

text_enum! {
    /// What the write of a history entry was (`incident_history.action`).
    pub enum HistoryAction {
        Created = "created",
        Updated = "updated",
        Submitted = "submitted",
        Cancelled = "cancelled",
        PrankCall = "prank_call",
        TechnicalDecision = "technical_decision",
        SentTo = "sent_to",
        Dispatched = "dispatched",
        DispatchStatus = "dispatch_status",
        Intercurrence = "intercurrence",
        Transferred = "transferred",
        Closed = "closed",
        /// The incident's map location was set or cleared (`PUT /incident/{id}/location`).
        Located = "located",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_groups_are_the_protocols_words() {
        let words: Vec<&str> = ChangeGroup::ALL.iter().map(|g| g.as_str()).collect();
        assert_eq!(
            words,
            [
                "basic_data",
                "occurrence",
                "patient",
                "state",
                "regulation",
                "technical_decisions",
                "dispatches",
                "intercurrences",
                "conclusion",
                "prank_calls",
            ]
        );
    }

    #[test]
    fn actions_round_trip() {
        for a in HistoryAction::ALL {
            assert_eq!(HistoryAction::parse(a.as_str()), Some(a));
        }
    }
}
