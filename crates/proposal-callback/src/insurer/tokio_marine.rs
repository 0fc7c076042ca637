//! Tokio Marine: an event envelope (`event_id`, `event`, `sent_at`) around `data`; the outcome
//! is the numeric `data.result.code`. Only `proposal.analysis_completed` is a result.

use chrono::DateTime;
use serde::Deserialize;

use super::{Callback, ParseError, Parser, essential, essential_text, from_json, optional_text};
use crate::proposal::status::Status;

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
    fn parse(&self, body: &[u8]) -> Result<Callback, ParseError> {
        let p: Payload = from_json(body)?;
        let event_id = essential_text(p.event_id, "event_id")?;
        let event = essential_text(p.event, "event")?;
        if event != ANALYSIS_COMPLETED {
            return Err(ParseError::shape(
                "event",
                format!("only {ANALYSIS_COMPLETED:?} is a result, not {event:?}"),
            ));
        }
        let data = essential(p.data, "data")?;
        let proposal = essential(data.proposal, "data.proposal")?;
        let proposal_id = essential_text(proposal.id, "data.proposal.id")?;
        let result = essential(data.result, "data.result")?;
        let code = essential(result.code, "data.result.code")?;
        let status = status(code).ok_or_else(|| {
            ParseError::shape("data.result.code", format!("unknown outcome code {code}"))
        })?;
        let occurred_at = p
            .sent_at
            .map(|s| {
                DateTime::from_timestamp(s, 0)
                    .ok_or_else(|| ParseError::shape("sent_at", "not a valid Unix time"))
            })
            .transpose()?;
        Ok(Callback {
            proposal_id,
            status,
            event_id: Some(event_id),
            occurred_at,
            note: optional_text(result.description),
            requirements: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insurer::test_support::{edited, example};
    use serde_json::json;

    fn parse(body: &[u8]) -> Result<Callback, ParseError> {
        TokioMarine.parse(body)
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
                occurred_at: DateTime::from_timestamp(1_763_658_191, 0),
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
    fn other_events_are_refused() {
        let body = edited("tokio", "approved", |v| {
            v["event"] = json!("proposal.created")
        });
        assert!(
            matches!(parse(&body), Err(ParseError::Shape { field: Some(f), .. }) if f == "event")
        );
    }

    #[test]
    fn broken_variants() {
        type Edit = fn(&mut serde_json::Value);
        let missing: [(&str, Edit); 6] = [
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
        assert!(matches!(parse(b"not json"), Err(ParseError::NotJson(_))));
    }
}
