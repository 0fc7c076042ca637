//! The message of a transition, in Portuguese (pt-BR), for the proposal's contact: which
//! proposal, which insurer, its new status in plain words and, for `pending`, what the insurer
//! asks for (docs/proposal-callback.md, "Email"). The wording lives in the templates under
//! `templates/email/` (askama: checked when the crate compiles, HTML escaped).

use askama::Template;

use crate::domain::insurer::{Callback, Insurer};
use crate::domain::status::Status;

/// A message to a proposal's contact: a subject, and the same text as plain text and HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// Who and what a transition's email is about.
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    /// The proposal's id as the tenant knows it.
    pub proposal_id: &'a str,
    /// The tenant's name (the real-estate agency the contact deals with).
    pub tenant_name: &'a str,
    pub insurer: Insurer,
}

/// What the templates read.
struct Context<'a> {
    proposal_id: &'a str,
    tenant_name: &'a str,
    /// The insurer's name as customers know it.
    insurer: &'a str,
    status: Status,
    note: Option<&'a str>,
    /// For `pending`: what the insurer asks for, one item each.
    asks: Vec<String>,
}

#[derive(Template)]
#[template(path = "email/subject.txt")]
struct Subject<'a> {
    t: &'a Context<'a>,
}

#[derive(Template)]
#[template(path = "email/body.txt")]
struct TextBody<'a> {
    t: &'a Context<'a>,
}

#[derive(Template)]
#[template(path = "email/body.html")]
struct HtmlBody<'a> {
    t: &'a Context<'a>,
    subject: &'a str,
}

/// The email announcing that `about`'s proposal is now `status`, as `callback` says.
pub fn compose(
    about: About<'_>,
    status: Status,
    callback: &Callback,
) -> Result<Email, askama::Error> {
    let note = callback.note.as_deref();
    let mut asks = Vec::new();
    if status == Status::Pending {
        asks.extend(note.map(str::to_owned));
        asks.extend(callback.requirements.iter().map(|r| {
            if r.description.is_empty() {
                r.document.clone()
            } else {
                format!("{}: {}", r.document, r.description)
            }
        }));
        if asks.is_empty() {
            asks.push(format!(
                "A seguradora não detalhou o que falta; {} entrará em contato.",
                about.tenant_name
            ));
        }
    }
    let t = Context {
        proposal_id: about.proposal_id,
        tenant_name: about.tenant_name,
        insurer: about.insurer.display_name(),
        status,
        // For `pending` the note is one of the asks.
        note: note.filter(|_| status != Status::Pending),
        asks,
    };
    let subject = Subject { t: &t }.render()?.trim().to_owned();
    let text = tidy(&TextBody { t: &t }.render()?);
    let html = HtmlBody {
        t: &t,
        subject: &subject,
    }
    .render()?;
    Ok(Email {
        subject,
        text,
        html,
    })
}

/// The text part as a reader sees it: trailing spaces dropped, runs of blank lines made one,
/// no blank line first or last, one final newline. Lets the template keep its tags on lines
/// of their own.
pub(crate) fn tidy(rendered: &str) -> String {
    let mut out = String::with_capacity(rendered.len());
    let mut blank = false;
    for line in rendered.lines().map(str::trim_end) {
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::insurer::Requirement;

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

    fn about(proposal_id: &str, insurer: Insurer) -> About<'_> {
        About {
            proposal_id,
            tenant_name: "Imobiliária Demo A",
            insurer,
        }
    }

    const SIGNATURE: &str = "Atenciosamente,\nImobiliária Demo A\n";

    fn footer(id: &str) -> String {
        format!(
            "\nMensagem automática sobre a proposta {id}. Em caso de dúvida, fale com Imobiliária Demo A.\n"
        )
    }

    #[test]
    fn approved_in_portuguese() {
        let e = compose(
            about("548812", Insurer::Tokio),
            Status::Approved,
            &callback(Status::Approved, None, vec![]),
        )
        .unwrap();
        assert_eq!(e.subject, "Proposta 548812 aprovada | Imobiliária Demo A");
        assert_eq!(
            e.text,
            format!(
                "Olá,\n\nBoa notícia: a seguradora Tokio Marine aprovou a proposta 548812 de seguro fiança locatícia.\n\nImobiliária Demo A vai seguir com a contratação e entrará em contato com os próximos passos. Você não precisa fazer nada agora.\n\n{SIGNATURE}{}",
                footer("548812")
            )
        );
        assert!(
            e.html.contains(
                "<h1 style=\"margin:0 0 16px;font-size:22px;color:#14632d;\">Proposta aprovada</h1>"
            ),
            "{}",
            e.html
        );
        assert!(e.html.contains("<html lang=\"pt-BR\">"));
        assert!(
            e.html
                .contains("<title>Proposta 548812 aprovada | Imobiliária Demo A</title>")
        );
    }

    #[test]
    fn pending_lists_what_the_insurer_asks_for() {
        let e = compose(
            about("99121", Insurer::Too),
            Status::Pending,
            &callback(
                Status::Pending,
                Some("Aguardando documentos"),
                vec![
                    Requirement {
                        document: "RG".into(),
                        description: "Documento de identidade do fiador".into(),
                    },
                    Requirement {
                        document: "IR".into(),
                        description: String::new(),
                    },
                ],
            ),
        )
        .unwrap();
        assert_eq!(
            e.subject,
            "Proposta 99121 pendente: faltam informações | Imobiliária Demo A"
        );
        assert_eq!(
            e.text,
            format!(
                "Olá,\n\nA seguradora Too Seguros precisa de mais informações para concluir a análise da proposta 99121 de seguro fiança locatícia:\n\n- Aguardando documentos\n- RG: Documento de identidade do fiador\n- IR\n\nImobiliária Demo A vai orientar você sobre como enviar o que foi pedido. A análise continua assim que tudo chegar.\n\n{SIGNATURE}{}",
                footer("99121")
            )
        );
        assert!(
            e.html
                .contains("<li>RG: Documento de identidade do fiador</li>"),
            "{}",
            e.html
        );
    }

    #[test]
    fn pending_without_details_says_the_agency_will_call() {
        let e = compose(
            about("99121", Insurer::Too),
            Status::Pending,
            &callback(Status::Pending, None, vec![]),
        )
        .unwrap();
        assert!(e.text.contains(
            "\n- A seguradora não detalhou o que falta; Imobiliária Demo A entrará em contato.\n"
        ), "{}", e.text);
    }

    #[test]
    fn refused_gives_the_insurers_reason() {
        let e = compose(
            about("POR-2026-000125", Insurer::Porto),
            Status::Refused,
            &callback(Status::Refused, Some("Renda insuficiente"), vec![]),
        )
        .unwrap();
        assert_eq!(
            e.subject,
            "Proposta POR-2026-000125 recusada | Imobiliária Demo A"
        );
        assert_eq!(
            e.text,
            format!(
                "Olá,\n\nA seguradora Porto Seguro recusou a proposta POR-2026-000125 de seguro fiança locatícia.\n\nMotivo informado pela seguradora: Renda insuficiente\n\nImobiliária Demo A entrará em contato para conversar sobre as alternativas.\n\n{SIGNATURE}{}",
                footer("POR-2026-000125")
            )
        );
    }

    #[test]
    fn under_analysis_in_portuguese() {
        let e = compose(
            about("99121", Insurer::Too),
            Status::UnderAnalysis,
            &callback(Status::UnderAnalysis, None, vec![]),
        )
        .unwrap();
        assert_eq!(e.subject, "Proposta 99121 em análise | Imobiliária Demo A");
        assert_eq!(
            e.text,
            format!(
                "Olá,\n\nA proposta 99121 de seguro fiança locatícia está em análise na seguradora Too Seguros.\n\nVocê receberá um novo e-mail assim que a seguradora decidir.\n\n{SIGNATURE}{}",
                footer("99121")
            )
        );
    }

    /// The insurer's text is theirs: in HTML it is escaped, in text it stays as sent.
    #[test]
    fn the_insurers_text_is_escaped_in_html() {
        let e = compose(
            about("1", Insurer::Porto),
            Status::Refused,
            &callback(Status::Refused, Some("<b>não</b> & \"fim\""), vec![]),
        )
        .unwrap();
        assert!(
            e.text
                .contains("Motivo informado pela seguradora: <b>não</b> & \"fim\"\n")
        );
        assert!(
            e.html.contains(
                "Motivo informado pela seguradora: &#60;b&#62;não&#60;/b&#62; &#38; &#34;fim&#34;"
            ),
            "{}",
            e.html
        );
    }

    #[test]
    fn tidy_collapses_blank_lines() {
        assert_eq!(tidy("\n\na  \n\n\n\nb\n\n"), "a\n\nb\n");
    }
}
