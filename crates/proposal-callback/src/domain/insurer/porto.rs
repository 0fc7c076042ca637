//! Porto Seguro: flat JSON, outcome in `situacao`, event id in `protocolo`.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{Callback, Notification, ParseError, Parser, essential_text, from_json, optional_text};
use crate::domain::status::Status;

pub struct Porto;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload {
    id_proposta: Option<String>,
    situacao: Option<String>,
    data_hora: Option<String>,
    motivo: Option<String>,
    protocolo: Option<String>,
}

fn status(word: &str) -> Option<Status> {
    Some(match word {
        "APROVADA" => Status::Approved,
        "PENDENTE" => Status::Pending,
        "RECUSADA" => Status::Refused,
        "EM_ANALISE" => Status::UnderAnalysis,
        _ => return None,
    })
}

impl Parser for Porto {
    fn parse(&self, body: &[u8]) -> Result<Notification, ParseError> {
        let p: Payload = from_json(body)?;
        let proposal_id = essential_text(p.id_proposta, "idProposta")?;
        let word = essential_text(p.situacao, "situacao")?;
        let event_id = essential_text(p.protocolo, "protocolo")?;
        let status = status(&word)
            .ok_or_else(|| ParseError::shape("situacao", format!("unknown outcome {word:?}")))?;
        // The event time orders callbacks: essential (docs/proposal-callback.md, "Order").
        let raw_time = essential_text(p.data_hora, "dataHora")?;
        let occurred_at = DateTime::parse_from_rfc3339(&raw_time)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| ParseError::shape("dataHora", format!("not RFC 3339: {e}")))?;
        Ok(Notification::Result(Callback {
            proposal_id,
            status,
            event_id: Some(event_id),
            occurred_at,
            note: optional_text(p.motivo),
            requirements: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::insurer::test_support::{edited, example};
    use chrono::TimeZone;
    use serde_json::json;

    fn parse(body: &[u8]) -> Result<Callback, ParseError> {
        Porto.parse(body).map(|n| n.into_result().unwrap())
    }

    #[test]
    fn the_three_examples() {
        let a = parse(&example("porto", "approved")).unwrap();
        assert_eq!(
            a,
            Callback {
                proposal_id: "POR-2026-000123".into(),
                status: Status::Approved,
                event_id: Some("a7f3c1e2-5b1d-4e0f-9d2a-7c3e8b9a1f00".into()),
                occurred_at: Utc.with_ymd_and_hms(2026, 11, 20, 17, 3, 11).unwrap(),
                note: None,
                requirements: vec![],
            }
        );
        let p = parse(&example("porto", "pending")).unwrap();
        assert_eq!(p.status, Status::Pending);
        assert_eq!(p.note.as_deref(), Some("Comprovante de renda ilegível"));
        let r = parse(&example("porto", "refused")).unwrap();
        assert_eq!(
            (r.status, r.proposal_id.as_str()),
            (Status::Refused, "POR-2026-000125")
        );
    }

    #[test]
    fn under_analysis_and_extra_fields() {
        let c = parse(&edited("porto", "approved", |v| {
            v["situacao"] = json!("EM_ANALISE");
            v["novoCampo"] = json!({"x": 1});
        }))
        .unwrap();
        assert_eq!(c.status, Status::UnderAnalysis);
    }

    #[test]
    fn broken_variants() {
        for field in ["idProposta", "situacao", "protocolo", "dataHora"] {
            let body = edited("porto", "approved", |v| {
                v.as_object_mut().unwrap().remove(field);
            });
            assert_eq!(parse(&body), Err(ParseError::MissingField(field.into())));
            let body = edited("porto", "approved", |v| v[field] = json!(null));
            assert_eq!(parse(&body), Err(ParseError::MissingField(field.into())));
        }
        let unknown = edited("porto", "approved", |v| v["situacao"] = json!("APROVADO"));
        assert!(
            matches!(parse(&unknown), Err(ParseError::Shape { field: Some(f), .. }) if f == "situacao")
        );
        let wrong_type = edited("porto", "approved", |v| v["idProposta"] = json!(123));
        assert!(
            matches!(parse(&wrong_type), Err(ParseError::Shape { field: Some(f), .. }) if f == "idProposta")
        );
        let bad_time = edited("porto", "approved", |v| v["dataHora"] = json!("20/11/2026"));
        assert!(
            matches!(parse(&bad_time), Err(ParseError::Shape { field: Some(f), .. }) if f == "dataHora")
        );
        let duplicate =
            br#"{"idProposta":"POR-2026-000125","situacao":"RECUSADA","situacao":"APROVADA",
            "dataHora":"2026-11-20T14:09:03-03:00","protocolo":"p1"}"#;
        assert!(
            matches!(parse(duplicate), Err(ParseError::Shape { field: Some(f), .. }) if f == "situacao")
        );
        for field in ["idProposta", "motivo", "protocolo"] {
            let body = edited("porto", "pending", |v| v[field] = json!("x\u{0}y"));
            assert!(
                matches!(parse(&body), Err(ParseError::Shape { field: Some(f), .. }) if f == field),
                "{field}"
            );
        }
        assert!(matches!(parse(b"[1,2]"), Err(ParseError::Shape { .. })));
        assert!(matches!(
            parse(b"{\"idProposta\":"),
            Err(ParseError::NotJson(_))
        ));
        assert!(matches!(parse(b""), Err(ParseError::NotJson(_))));
    }
}
