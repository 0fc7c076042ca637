//! Tokio Marine: an event envelope (`event_id`, `event`, `sent_at`) around `data`; the outcome
//! is the numeric `data.result.code`. Only `proposal.analysis_completed` is a result.

use chrono::DateTime;
use serde::Deserialize;

use super::{
    Callback, Notification, ParseError, Parser, essential, essential_text, from_json, optional_text,
};
use crate::domain::status::Status;

/// The insurer whose identifier is `tokio`.
pub struct TokioMarine;

pub const ANALYSIS_COMPLETED: &str = "proposal.analysis_completed";

#[derive(Deserialize)]
struct Payload {
    event_id: Option<String>,
    event: Option<String>,
    sent_at: Option<i64>,
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Data {
    proposal: Option<ProposalRef>,
    result: Option<Outcome>,
}

#[derive(Deserialize)]
struct ProposalRef {
    id: Option<String>,
}

#[derive(Deserialize)]
struct Outcome {
    code: Option<i64>,
    description: Option<String>,
}

fn status(code: i64) -> Option<Status> {
    Some(match code {
        10 => Status::Approved,
        20 => Status::Pending,
        30 => Status::Refused,
        5 => Status::UnderAnalysis,
        _ => return None,
    })
}

impl Parser for TokioMarine {
    fn parse(&self, body: &[u8]) -> Result<Notification, ParseError> {
        let p: Payload = from_json(body)?;
        let event = essential_text(p.event, "event")?;
        if event != ANALYSIS_COMPLETED {
            // Another kind of event carries no result: answered 200 `ignored`, so the insurer
            // does not deliver it again and again. Nothing else of it is read.
            return Ok(Notification::Ignored { event });
        }
        let event_id = essential_text(p.event_id, "event_id")?;
        let data = essential(p.data, "data")?;
        let proposal = essential(data.proposal, "data.proposal")?;
        let proposal_id = essential_text(proposal.id, "data.proposal.id")?;
        let result = essential(data.result, "data.result")?;
        let code = essential(result.code, "data.result.code")?;
        let status = status(code).ok_or_else(|| {
            ParseError::shape("data.result.code", format!("unknown outcome code {code}"))
        })?;
        // The event time orders callbacks: essential (docs/proposal-callback.md, "Order").
        let sent_at = essential(p.sent_at, "sent_at")?;
        let occurred_at = DateTime::from_timestamp(sent_at, 0)
            .ok_or_else(|| ParseError::shape("sent_at", "not a valid Unix time"))?;
        Ok(Notification::Result(Callback {
            proposal_id,
            status,
            event_id: Some(event_id),
            occurred_at,
            note: optional_text(result.description),
            requirements: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::insurer::test_support::{edited, example};
    use serde_json::json;

    fn parse(body: &[u8]) -> Result<Callback, ParseError> {
        TokioMarine.parse(body).map(|n| n.into_result().unwrap())
    }

    #[test]
    fn the_three_examples() {
        let a = parse(&example("tokio", "approved")).unwrap();
        assert_eq!(
            a,
            Callback {
                proposal_id: "548812".into(),
                status: Status::Approved,
                event_id: Some("evt_2f9d8c7b6a5e4d3c".into()),
                occurred_at: DateTime::from_timestamp(1_763_658_191, 0).unwrap(),
                note: Some("Approved".into()),
                requirements: vec![],
            }
        );
        let p = parse(&example("tokio", "pending")).unwrap();
        assert_eq!(p.status, Status::Pending);
        assert_eq!(p.note.as_deref(), Some("Pending: guarantor documents"));
        assert_eq!(
            parse(&example("tokio", "refused")).unwrap().status,
            Status::Refused
        );
        let ua = parse(&edited("tokio", "pending", |v| {
            v["data"]["result"]["code"] = json!(5)
        }));
        assert_eq!(ua.unwrap().status, Status::UnderAnalysis);
    }

    #[test]
    fn other_events_are_ignored() {
        let body = edited("tokio", "approved", |v| {
            v["event"] = json!("proposal.created");
            v["data"] = json!({"proposal": {"id": "548812"}});
            v.as_object_mut().unwrap().remove("sent_at");
        });
        assert_eq!(
            TokioMarine.parse(&body),
            Ok(Notification::Ignored {
                event: "proposal.created".into()
            })
        );
    }

    #[test]
    fn broken_variants() {
        type Edit = fn(&mut serde_json::Value);
        let missing: [(&str, Edit); 7] = [
            ("sent_at", |v| {
                v.as_object_mut().unwrap().remove("sent_at");
            }),
            ("event_id", |v| {
                v.as_object_mut().unwrap().remove("event_id");
            }),
            ("event", |v| v["event"] = json!(null)),
            ("data", |v| {
                v.as_object_mut().unwrap().remove("data");
            }),
            ("data.proposal.id", |v| {
                v["data"]["proposal"].as_object_mut().unwrap().remove("id");
            }),
            ("data.result", |v| v["data"]["result"] = json!(null)),
            ("data.result.code", |v| {
                v["data"]["result"].as_object_mut().unwrap().remove("code");
            }),
        ];
        for (field, edit) in missing {
            let body = edited("tokio", "approved", edit);
            assert_eq!(
                parse(&body),
                Err(ParseError::MissingField(field.into())),
                "{field}"
            );
        }
        let unknown = edited("tokio", "approved", |v| {
            v["data"]["result"]["code"] = json!(40)
        });
        assert!(
            matches!(parse(&unknown), Err(ParseError::Shape { field: Some(f), .. }) if f == "data.result.code")
        );
        let wrong = edited("tokio", "approved", |v| {
            v["data"]["result"]["code"] = json!("10")
        });
        assert!(
            matches!(parse(&wrong), Err(ParseError::Shape { field: Some(f), .. }) if f == "data.result.code")
        );
        let huge = edited("tokio", "approved", |v| v["sent_at"] = json!(i64::MAX));
        assert!(
            matches!(parse(&huge), Err(ParseError::Shape { field: Some(f), .. }) if f == "sent_at")
        );
        let text_time = edited("tokio", "approved", |v| v["sent_at"] = json!("1763658191"));
        assert!(
            matches!(parse(&text_time), Err(ParseError::Shape { field: Some(f), .. }) if f == "sent_at")
        );
        let nul: [(&str, Edit); 4] = [
            ("event_id", |v| v["event_id"] = json!("e\u{0}")),
            ("event", |v| v["event"] = json!("\u{0}")),
            ("data.proposal.id", |v| {
                v["data"]["proposal"]["id"] = json!("5\u{0}")
            }),
            ("data.result.description", |v| {
                v["data"]["result"]["description"] = json!("a\u{0}b")
            }),
        ];
        for (field, edit) in nul {
            let body = edited("tokio", "approved", edit);
            assert!(
                matches!(parse(&body), Err(ParseError::Shape { field: Some(f), .. }) if f == field),
                "{field}"
            );
        }
        assert!(matches!(parse(b"not json"), Err(ParseError::NotJson(_))));
    }
}
