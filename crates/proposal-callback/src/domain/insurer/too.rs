//! Too Seguros: outcome letter in `parecer.resultado`, an integer proposal number, a local
//! Brazilian timestamp, and no event id (a redelivery is the same body again).

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Deserialize;

use super::{
    Callback, Notification, ParseError, Parser, Requirement, essential, essential_text, from_json,
    optional_text,
};
use crate::domain::status::Status;
use crate::domain::zone;

pub struct Too;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload {
    numero_proposta: Option<u64>,
    parecer: Option<Parecer>,
    #[serde(default)]
    pendencias: Option<Vec<Pendencia>>,
    emitido_em: Option<String>,
}

#[derive(Deserialize)]
struct Parecer {
    resultado: Option<String>,
    observacoes: Option<String>,
}

#[derive(Deserialize)]
struct Pendencia {
    documento: Option<String>,
    descricao: Option<String>,
}

fn status(letter: &str) -> Option<Status> {
    Some(match letter {
        "A" => Status::Approved,
        "P" => Status::Pending,
        "R" => Status::Refused,
        _ => return None,
    })
}

/// `dd/mm/yyyy hh:mm:ss` on Too's own clock, in São Paulo (`docs/insurers.md`), whichever
/// tenant the callback is for: read through the tz database, so a date when São Paulo kept
/// daylight saving time (before 2019) reads at UTC-02:00. An hour the clock showed twice is
/// the first of them; one it skipped is refused, naming the field.
fn sao_paulo(raw: &str) -> Result<DateTime<Utc>, ParseError> {
    let naive = NaiveDateTime::parse_from_str(raw, "%d/%m/%Y %H:%M:%S")
        .map_err(|e| ParseError::shape("emitidoEm", format!("not dd/mm/yyyy hh:mm:ss: {e}")))?;
    zone::instant(INSURER_ZONE, naive).map_err(|_| {
        ParseError::shape(
            "emitidoEm",
            "not a time São Paulo's clocks showed (skipped when they were set forward)",
        )
    })
}

/// Where Too's clock is.
pub const INSURER_ZONE: zone::Tz = zone::DEFAULT_ZONE;

impl Parser for Too {
    fn parse(&self, body: &[u8]) -> Result<Notification, ParseError> {
        let p: Payload = from_json(body)?;
        let number = essential(p.numero_proposta, "numeroProposta")?;
        let parecer = essential(p.parecer, "parecer")?;
        let letter = essential_text(parecer.resultado, "parecer.resultado")?;
        let status = status(&letter).ok_or_else(|| {
            ParseError::shape("parecer.resultado", format!("unknown outcome {letter:?}"))
        })?;
        // The event time orders callbacks: essential (docs/proposal-callback.md, "Order").
        let occurred_at = sao_paulo(&essential_text(p.emitido_em, "emitidoEm")?)?;
        let requirements = p
            .pendencias
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                Ok(Requirement {
                    document: essential_text(
                        item.documento,
                        &format!("pendencias[{i}].documento"),
                    )?,
                    description: optional_text(item.descricao).unwrap_or_default(),
                })
            })
            .collect::<Result<Vec<_>, ParseError>>()?;
        Ok(Notification::Result(Callback {
            proposal_id: number.to_string(),
            status,
            event_id: None,
            occurred_at,
            note: optional_text(parecer.observacoes),
            requirements,
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
        Too.parse(body).map(|n| n.into_result().unwrap())
    }

    #[test]
    fn the_three_examples() {
        let a = parse(&example("too", "approved")).unwrap();
        assert_eq!(
            a,
            Callback {
                proposal_id: "99120".into(),
                status: Status::Approved,
                event_id: None,
                occurred_at: Utc.with_ymd_and_hms(2026, 11, 20, 17, 3, 11).unwrap(),
                note: Some("Aprovada sem ressalvas".into()),
                requirements: vec![],
            }
        );
        let p = parse(&example("too", "pending")).unwrap();
        assert_eq!(p.status, Status::Pending);
        assert_eq!(
            p.requirements,
            vec![
                Requirement {
                    document: "RG".into(),
                    description: "Documento de identidade do fiador".into()
                },
                Requirement {
                    document: "IR".into(),
                    description: "Declaração de imposto de renda".into()
                },
            ]
        );
        assert_eq!(
            parse(&example("too", "refused")).unwrap().status,
            Status::Refused
        );
    }

    #[test]
    fn broken_variants() {
        let no_number = edited("too", "approved", |v| {
            v.as_object_mut().unwrap().remove("numeroProposta");
        });
        assert_eq!(
            parse(&no_number),
            Err(ParseError::MissingField("numeroProposta".into()))
        );
        let no_result = edited("too", "approved", |v| {
            v["parecer"] = json!({"observacoes": "x"})
        });
        assert_eq!(
            parse(&no_result),
            Err(ParseError::MissingField("parecer.resultado".into()))
        );
        let no_parecer = edited("too", "approved", |v| {
            v.as_object_mut().unwrap().remove("parecer");
        });
        assert_eq!(
            parse(&no_parecer),
            Err(ParseError::MissingField("parecer".into()))
        );
        let unknown = edited("too", "approved", |v| {
            v["parecer"]["resultado"] = json!("X")
        });
        assert!(
            matches!(parse(&unknown), Err(ParseError::Shape { field: Some(f), .. }) if f == "parecer.resultado")
        );
        let text_number = edited("too", "approved", |v| v["numeroProposta"] = json!("99120"));
        assert!(
            matches!(parse(&text_number), Err(ParseError::Shape { field: Some(f), .. }) if f == "numeroProposta")
        );
        let bad_date = edited("too", "approved", |v| {
            v["emitidoEm"] = json!("2026-11-20T14:03:11")
        });
        assert!(
            matches!(parse(&bad_date), Err(ParseError::Shape { field: Some(f), .. }) if f == "emitidoEm")
        );
        let bad_item = edited("too", "pending", |v| {
            v["pendencias"][1] = json!({"descricao": "x"})
        });
        assert_eq!(
            parse(&bad_item),
            Err(ParseError::MissingField("pendencias[1].documento".into()))
        );
        let no_time = edited("too", "approved", |v| {
            v.as_object_mut().unwrap().remove("emitidoEm");
        });
        assert_eq!(
            parse(&no_time),
            Err(ParseError::MissingField("emitidoEm".into()))
        );
        type Edit = fn(&mut serde_json::Value);
        let nul: [(&str, Edit); 4] = [
            ("parecer.resultado", |v| {
                v["parecer"]["resultado"] = json!("P\u{0}")
            }),
            ("parecer.observacoes", |v| {
                v["parecer"]["observacoes"] = json!("\u{0}")
            }),
            ("pendencias[0].descricao", |v| {
                v["pendencias"][0]["descricao"] = json!("a\u{0}")
            }),
            ("emitidoEm", |v| {
                v["emitidoEm"] = json!("20/11/2026 14:06:00\u{0}")
            }),
        ];
        for (field, edit) in nul {
            let body = edited("too", "pending", edit);
            assert!(
                matches!(parse(&body), Err(ParseError::Shape { field: Some(f), .. }) if f == field),
                "{field}"
            );
        }
        assert!(matches!(parse(b"{"), Err(ParseError::NotJson(_))));
    }

    /// `emitidoEm` is São Paulo's wall clock as it was on that date: UTC-03:00 now, UTC-02:00
    /// under the daylight saving time kept until February 2019; a skipped hour is refused.
    #[test]
    fn the_event_time_is_read_on_sao_paulos_clock_of_its_date() {
        let at = |raw: &str| {
            parse(&edited("too", "approved", |v| v["emitidoEm"] = json!(raw)))
                .map(|c| c.occurred_at)
        };
        assert_eq!(
            at("01/12/2026 10:00:00"),
            Ok(Utc.with_ymd_and_hms(2026, 12, 1, 13, 0, 0).unwrap())
        );
        assert_eq!(
            at("01/12/2018 10:00:00"),
            Ok(Utc.with_ymd_and_hms(2018, 12, 1, 12, 0, 0).unwrap())
        );
        // Clocks set back at midnight on 2019-02-17: 23:30 happened twice, the first is taken.
        assert_eq!(
            at("16/02/2019 23:30:00"),
            Ok(Utc.with_ymd_and_hms(2019, 2, 17, 1, 30, 0).unwrap())
        );
        // Clocks set forward at midnight on 2018-11-04: 00:30 never happened.
        assert!(matches!(
            at("04/11/2018 00:30:00"),
            Err(ParseError::Shape { field: Some(f), .. }) if f == "emitidoEm"
        ));
    }
}
