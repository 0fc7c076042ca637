//! The message of a transition: which proposal, its new status and, for pending, what the
//! insurer asks for.

use crate::insurer::Callback;
use crate::proposal::status::Status;

/// A message to a proposal's contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    pub subject: String,
    pub body: String,
}

fn label(status: Status) -> &'static str {
    match status {
        Status::UnderAnalysis => "under analysis",
        Status::Pending => "pending",
        Status::Approved => "approved",
        Status::Refused => "refused",
    }
}

/// Which proposal, its new status and, for pending, what the insurer asks for.
pub fn compose(proposal_id: &str, status: Status, callback: &Callback) -> Email {
    let mut body = format!("Proposal {proposal_id} is now {}.\n", label(status));
    if status == Status::Pending {
        body.push_str("\nThe insurer asks for:\n");
        if let Some(note) = &callback.note {
            body.push_str(&format!("- {note}\n"));
        }
        for r in &callback.requirements {
            if r.description.is_empty() {
                body.push_str(&format!("- {}\n", r.document));
            } else {
                body.push_str(&format!("- {}: {}\n", r.document, r.description));
            }
        }
        if callback.note.is_none() && callback.requirements.is_empty() {
            body.push_str("- (the insurer did not say; contact the insurer)\n");
        }
    } else if let Some(note) = &callback.note {
        body.push_str(&format!("\nThe insurer's note: {note}\n"));
    }
    Email {
        subject: format!("Proposal {proposal_id}: {}", label(status)),
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insurer::Requirement;

    fn callback(status: Status, note: Option<&str>, reqs: Vec<Requirement>) -> Callback {
        Callback {
            proposal_id: "P1".into(),
            status,
            event_id: None,
            occurred_at: chrono::DateTime::UNIX_EPOCH,
            note: note.map(str::to_owned),
            requirements: reqs,
        }
    }

    #[test]
    fn pending_says_what_the_insurer_asks_for() {
        let e = compose(
            "99121",
            Status::Pending,
            &callback(
                Status::Pending,
                Some("Aguardando documentos"),
                vec![Requirement {
                    document: "RG".into(),
                    description: "Documento de identidade do fiador".into(),
                }],
            ),
        );
        assert_eq!(e.subject, "Proposal 99121: pending");
        assert_eq!(
            e.body,
            "Proposal 99121 is now pending.\n\nThe insurer asks for:\n- Aguardando documentos\n- RG: Documento de identidade do fiador\n"
        );
    }

    #[test]
    fn approved_names_the_proposal_and_status() {
        let e = compose(
            "548812",
            Status::Approved,
            &callback(Status::Approved, None, vec![]),
        );
        assert_eq!(e.subject, "Proposal 548812: approved");
        assert_eq!(e.body, "Proposal 548812 is now approved.\n");
    }
}
