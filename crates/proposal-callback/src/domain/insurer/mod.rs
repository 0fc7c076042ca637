//! The insurers' payloads: one parser per insurer, each turning its own JSON into the one
//! internal [`Callback`], registered in [`Insurer::parser`]. Parsers know nothing of HTTP or the
//! database, so correcting one when an insurer's document says otherwise touches one file.

pub mod porto;
mod strict;
pub mod tokio_marine;
pub mod too;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use crate::domain::status::Status;

/// What every insurer's notification says once translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    /// The proposal's id as the tenant knows it (`proposalID`).
    pub proposal_id: String,
    /// The insurer's outcome, already mapped to an internal status.
    pub status: Status,
    /// The insurer's id of this notification, when it sends one (redelivery detection).
    pub event_id: Option<String>,
    /// The insurer's event time (porto `dataHora`, tokio `sent_at`, too `emitidoEm`): orders
    /// callbacks, so an older one cannot undo a newer one (docs/proposal-callback.md, "Order").
    pub occurred_at: DateTime<Utc>,
    /// The insurer's free text (porto `motivo`, tokio `description`, too `observacoes`).
    pub note: Option<String>,
    /// What the insurer asks for on `pending` (too `pendencias`).
    pub requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub document: String,
    pub description: String,
}

/// Why a body is not a callback. Each variant has its own HTTP status and code
/// (docs/proposal-callback.md, "The callback, in order", step 8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// 400 `invalid_payload`.
    #[error("the body is not JSON: {0}")]
    NotJson(String),
    /// 422 `invalid_payload`: JSON, but not this insurer's shape (or a value it does not use).
    #[error("{}{message}", field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
    Shape {
        field: Option<String>,
        message: String,
    },
    /// 422 `missing_field`.
    #[error("the essential field `{0}` is missing")]
    MissingField(String),
}

impl ParseError {
    pub fn shape(field: &str, message: impl Into<String>) -> Self {
        Self::Shape {
            field: Some(field.to_owned()),
            message: message.into(),
        }
    }
}

/// What a body is, once parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notification {
    /// An analysis result, to apply to its proposal.
    Result(Callback),
    /// An event that carries no analysis result (tokio `event` other than
    /// `proposal.analysis_completed`): stored and answered 200 `ignored`, nothing applied.
    Ignored {
        /// The insurer's event type, as sent.
        event: String,
    },
}

impl Notification {
    /// The analysis result, if this is one.
    pub fn into_result(self) -> Option<Callback> {
        match self {
            Notification::Result(c) => Some(c),
            Notification::Ignored { .. } => None,
        }
    }
}

/// One insurer's payload format.
pub trait Parser: Sync {
    fn parse(&self, body: &[u8]) -> Result<Notification, ParseError>;
}

common::text_enum! {
    /// The supported insurers, by the identifier in the callback URL (and in the database's
    /// `insurer` columns). The one place to add one: the compiler then names every `match`
    /// that must say what the new one does (its parser, its payload's proposal field, its
    /// name, its settings).
    pub enum Insurer {
        Porto = "porto",
        Tokio = "tokio",
        Too = "too",
    }
}

impl Insurer {
    /// The insurer's name as its customers know it (emails, the console).
    pub const fn display_name(self) -> &'static str {
        match self {
            Insurer::Porto => "Porto Seguro",
            Insurer::Tokio => "Tokio Marine",
            Insurer::Too => "Too Seguros",
        }
    }

    /// The insurer's payload format.
    pub fn parser(self) -> &'static dyn Parser {
        match self {
            Insurer::Porto => &porto::Porto,
            Insurer::Tokio => &tokio_marine::TokioMarine,
            Insurer::Too => &too::Too,
        }
    }

    /// Where the insurer's payload names the proposal (a JSON pointer).
    const fn proposal_pointer(self) -> &'static str {
        match self {
            Insurer::Porto => "/idProposta",
            Insurer::Tokio => "/data/proposal/id",
            Insurer::Too => "/numeroProposta",
        }
    }

    /// The proposal a body names, read leniently, for an operator looking at a callback that
    /// failed (docs/proposal-callback.md, "What is stored"): the id when the body is JSON and
    /// the insurer's proposal field holds a string or a number, whatever else is wrong with
    /// it.
    pub fn proposal_hint(self, body: &[u8]) -> Option<String> {
        let value: serde_json::Value = serde_json::from_slice(body).ok()?;
        let id = match value.pointer(self.proposal_pointer())? {
            serde_json::Value::String(s) => s.trim().to_owned(),
            serde_json::Value::Number(n) => n.to_string(),
            _ => return None,
        };
        (!id.is_empty() && id.chars().count() <= 200).then_some(id)
    }
}

/// Parses `body` as `T`: not JSON is [`ParseError::NotJson`], another shape names the path.
/// Unknown fields are ignored (insurers add fields without notice). Refused first, anywhere
/// in the body, naming the field: a key given twice (two readers could take either value)
/// and a NUL character (PostgreSQL cannot store it in text), see [`strict`].
pub(crate) fn from_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ParseError> {
    // Two steps, so that "not JSON" (400) and "JSON of the wrong shape" (422) stay apart.
    let value = strict::parse(body)?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        ParseError::Shape {
            field: (path != ".").then_some(path),
            message,
        }
    })
}

/// An essential field: absent and `null` are both missing; an empty string is missing too.
pub(crate) fn essential<T>(value: Option<T>, field: &str) -> Result<T, ParseError> {
    value.ok_or_else(|| ParseError::MissingField(field.to_owned()))
}

pub(crate) fn essential_text(value: Option<String>, field: &str) -> Result<String, ParseError> {
    essential(value.filter(|s| !s.trim().is_empty()), field)
}

/// Free text that may be absent, null or blank.
pub(crate) fn optional_text(value: Option<String>) -> Option<String> {
    value.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::path::PathBuf;

    /// The insurers' example payloads, kept in `tests/fixtures/insurers`.
    pub fn example(insurer: &str, outcome: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/insurers")
            .join(insurer)
            .join(format!("{outcome}.json"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The example with `edit` applied to its JSON.
    pub fn edited(
        insurer: &str,
        outcome: &str,
        edit: impl FnOnce(&mut serde_json::Value),
    ) -> Vec<u8> {
        let mut v: serde_json::Value = serde_json::from_slice(&example(insurer, outcome)).unwrap();
        edit(&mut v);
        serde_json::to_vec(&v).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proposal_a_broken_body_names() {
        use Insurer::*;
        assert_eq!(
            Porto.proposal_hint(br#"{"idProposta": " P-1 ", "situacao": "TALVEZ"}"#),
            Some("P-1".into())
        );
        assert_eq!(
            Tokio.proposal_hint(br#"{"data": {"proposal": {"id": 548812}}}"#),
            Some("548812".into())
        );
        assert_eq!(
            Too.proposal_hint(br#"{"numeroProposta": "99121"}"#),
            Some("99121".into())
        );
        for (insurer, body) in [
            (Too, &b"not json"[..]),
            (Too, br#"{"numeroProposta": ""}"#),
            (Too, br#"{"numeroProposta": {"a": 1}}"#),
            (Porto, br#"{"numeroProposta": "1"}"#),
        ] {
            assert_eq!(insurer.proposal_hint(body), None, "{insurer}");
        }
    }

    #[test]
    fn every_listed_insurer_has_a_parser_and_no_other() {
        for insurer in Insurer::ALL {
            assert_eq!(Insurer::parse(insurer.as_str()), Some(insurer));
            let _ = insurer.parser();
        }
        for id in ["", "PORTO", "allianz", "porto "] {
            assert!(Insurer::parse(id).is_none(), "{id:?}");
        }
    }
}
