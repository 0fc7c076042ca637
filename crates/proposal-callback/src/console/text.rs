//! What the console says, in Portuguese (pt-BR): labels of statuses, outcomes and error codes,
//! the outcome messages of its actions, and times in the tenant's time zone.
//!
//! Times are shown in the signed-in tenant's IANA time zone (`tenants.time_zone`, read
//! through the tz database: `domain::zone`; docs/proposal-callback.md, "Time zones").

use chrono::{DateTime, Utc};
use common::auth::TokenError;

use crate::auth::admin::Refusal;
use crate::domain::code::ErrorCode;
use crate::domain::insurer::Insurer;
use crate::domain::status::{Outcome, ReceiptStatus, Status};
use crate::domain::zone::Tz;
use crate::error::Error;
use crate::query::receipts::FilterRefusal;
use crate::registration::client::RegistrationFailure;
use crate::registration::config::Environment;
use crate::store::outbox::Delivery;
use crate::store::registration_attempts::REGISTERED;

/// A time as a page shows it: `<time datetime="{iso}">{text}</time>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct When {
    /// RFC 3339, UTC.
    pub iso: String,
    /// `24/11/2026 14:03:11`, in the tenant's time zone.
    pub text: String,
}

/// `t` as the tenant in `zone` reads it.
pub fn when(t: DateTime<Utc>, zone: Tz) -> When {
    When {
        iso: t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        text: t
            .with_timezone(&zone)
            .format("%d/%m/%Y %H:%M:%S")
            .to_string(),
    }
}

pub fn when_opt(t: Option<DateTime<Utc>>, zone: Tz) -> Option<When> {
    t.map(|t| when(t, zone))
}

pub fn insurer(insurer: Insurer) -> &'static str {
    insurer.display_name()
}

pub fn environment(e: Environment) -> &'static str {
    match e {
        Environment::Homologation => "Homologação",
        Environment::Production => "Produção",
    }
}

pub fn status(s: Status) -> &'static str {
    match s {
        Status::UnderAnalysis => "Em análise",
        Status::Pending => "Pendente",
        Status::Approved => "Aprovada",
        Status::Refused => "Recusada",
    }
}

pub fn receipt_status(s: ReceiptStatus) -> &'static str {
    match s {
        ReceiptStatus::Received => "Recebido, sem resultado ainda",
        ReceiptStatus::Deferred => "Adiado (integração pausada)",
        ReceiptStatus::Processed => "Processado",
        ReceiptStatus::Duplicate => "Duplicado (já aplicado antes)",
        ReceiptStatus::Unchanged => "Sem mudança (mesmo status)",
        ReceiptStatus::Stale => "Desatualizado (mais antigo que o último)",
        ReceiptStatus::Ignored => "Ignorado (sem resultado de análise)",
        ReceiptStatus::Failed => "Falhou",
    }
}

pub fn outcome(o: Outcome) -> &'static str {
    receipt_status(ReceiptStatus::from(o))
}

/// What an error code means, in a few words. Every code has its text: a new code does not
/// compile without one.
pub fn error_code(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::ProposalNotFound => "proposta não encontrada",
        ErrorCode::InvalidTransition => "mudança de status não permitida",
        ErrorCode::InvalidPayload => "corpo inválido",
        ErrorCode::MissingField => "campo obrigatório ausente",
        ErrorCode::UnknownInsurer => "seguradora desconhecida",
        ErrorCode::InvalidParameter => "parâmetro inválido",
        ErrorCode::Unauthorized => "sem token válido",
        ErrorCode::Forbidden => "acesso negado",
        ErrorCode::TooManyRequests => "tentativas demais; espere para tentar de novo",
        ErrorCode::NotFound => "registro não encontrado",
        ErrorCode::PayloadTooLarge => "corpo grande demais",
        ErrorCode::RequestTimeout => "o corpo não chegou a tempo",
        ErrorCode::UnsupportedMediaType => "o corpo não é JSON",
        ErrorCode::NotConfigured => "registro não configurado neste serviço",
        ErrorCode::RegistrationInProgress => "outro registro desta integração em andamento",
        ErrorCode::RegistrationSuperseded => "um registro mais recente tomou o lugar",
        ErrorCode::InsurerRejected => "a seguradora recusou",
        ErrorCode::InsurerTimeout => "a seguradora não respondeu a tempo",
        ErrorCode::InsurerUnreachable => "sem conexão com a seguradora",
        ErrorCode::InsurerError => "a conexão caiu antes da resposta",
        ErrorCode::EmailNotFailed => "só um e-mail recusado de vez pode ser reenviado",
        ErrorCode::BodyErased => "corpo removido (prazo de retenção)",
        ErrorCode::Unavailable => "serviço indisponível no momento",
        ErrorCode::Internal => "erro interno",
    }
}

/// Why a callback failed, from the error code recorded on its receipt (a code this service
/// does not know, shown as it is).
pub fn failure(code: &str) -> String {
    match ErrorCode::parse(code) {
        Some(code) => error_code(code).to_owned(),
        None => format!("código {code}"),
    }
}

/// Why the callback log's filter names nothing there is.
pub fn filter_refusal(r: FilterRefusal) -> &'static str {
    match r {
        FilterRefusal::UnknownStatus | FilterRefusal::UnknownOutcome => "resultado desconhecido",
        FilterRefusal::UnknownInsurer => "seguradora desconhecida",
    }
}

/// A receipt's outcome in one phrase: `Falhou: proposta não encontrada`, `Processado`.
pub fn receipt_outcome(status: ReceiptStatus, code: Option<&str>) -> String {
    match (status, code) {
        (ReceiptStatus::Failed, Some(code)) => format!("Falhou: {}", failure(code)),
        (s, _) => receipt_status(s).to_owned(),
    }
}

/// The tone of a receipt's outcome: `ok`, `erro`, `aviso` or `neutro` (a CSS class).
pub fn receipt_tone(status: ReceiptStatus) -> &'static str {
    match status {
        ReceiptStatus::Processed => "ok",
        ReceiptStatus::Failed => "erro",
        ReceiptStatus::Received | ReceiptStatus::Deferred => "aviso",
        _ => "neutro",
    }
}

pub fn event_kind(kind: &str) -> &str {
    match kind {
        "callback_received" => "Callback recebido",
        "status_changed" => "Status alterado",
        "left_queue" => "Saiu da fila da seguradora",
        "email_queued" => "E-mail enfileirado",
        other => other,
    }
}

pub fn delivery(d: Delivery) -> &'static str {
    match d {
        Delivery::Queued => "Na fila de envio",
        Delivery::Retrying => "Falhou; nova tentativa agendada",
        Delivery::Failed => "Recusado pelo servidor de e-mail",
        Delivery::Sent => "Enviado",
    }
}

/// A registration attempt's outcome in one phrase, from its recorded code.
pub fn registration_outcome(code: &str, insurer_status: Option<i16>) -> String {
    if code == REGISTERED {
        return "Registrado (HTTP 200)".into();
    }
    match (ErrorCode::parse(code), insurer_status) {
        (Some(ErrorCode::InsurerRejected), Some(s)) => {
            format!("Falhou: a seguradora respondeu HTTP {s}")
        }
        (Some(ErrorCode::RegistrationSuperseded), _) => {
            "Sem efeito: um registro mais recente tomou o lugar".into()
        }
        (Some(code), _) => format!("Falhou: {}", error_code(code)),
        (None, _) => format!("Falhou: código {code}"),
    }
}

/// What the console tells an operator whose RegisterCallback failed (nothing changed).
pub fn registration_failure(e: &Error) -> Option<String> {
    Some(match e {
        Error::Registration(RegistrationFailure::Rejected(status)) => format!(
            "A seguradora recusou o registro: respondeu HTTP {}{}. Nada mudou: o callback \
             continua como estava.",
            status.as_u16(),
            status
                .canonical_reason()
                .map(|r| format!(" {r}"))
                .unwrap_or_default()
        ),
        Error::Registration(RegistrationFailure::Timeout(limit)) => format!(
            "A seguradora não respondeu em {} s. Ela pode ter recebido o pedido: registre de \
             novo para ter certeza de que ela tem o token atual.",
            limit.as_secs_f32()
        ),
        Error::Registration(RegistrationFailure::Unreachable) => {
            "Não foi possível conectar à seguradora (2 tentativas). Nada mudou.".into()
        }
        Error::Registration(RegistrationFailure::Transport) => {
            "A conexão com a seguradora caiu antes da resposta. Nada mudou aqui; registre de \
             novo."
                .into()
        }
        Error::NotConfigured(missing) => format!(
            "O registro com esta seguradora não está configurado neste serviço. Quem opera o \
             serviço deve definir: {}.",
            missing.0
        ),
        Error::RegistrationInProgress { retry_after_secs } => format!(
            "Já há um registro desta integração esperando a seguradora. Tente de novo em \
             {retry_after_secs} s."
        ),
        Error::RegistrationSuperseded => "A seguradora aceitou, mas um registro mais recente \
             desta integração tomou o lugar deste. Registre de novo."
            .into(),
        _ => return None,
    })
}

/// Why a token does not open the console, in words an operator can act on.
pub fn refusal(r: &Refusal) -> String {
    match r {
        Refusal::Token(TokenError::Expired) => {
            "O token expirou. Gere um token novo e entre de novo.".into()
        }
        Refusal::Token(TokenError::NotYetValid | TokenError::IssuedInFuture) => {
            "O token ainda não vale (data de emissão no futuro). Confira o relógio de quem o \
             gerou."
                .into()
        }
        Refusal::Token(TokenError::WrongAudience { .. }) => {
            "Este token não é de administrador deste serviço (é de outro serviço ou de uma \
             seguradora). Use um token gerado com `proposal-callback token --tenant … --admin`."
                .into()
        }
        Refusal::Token(TokenError::LifetimeTooLong { .. }) => {
            "Este token vale por tempo demais (mais de 24 h). Gere um com validade menor.".into()
        }
        Refusal::Token(TokenError::ProviderUnavailable) => {
            "O provedor de identidade não respondeu. Tente de novo em instantes.".into()
        }
        Refusal::Token(_) => "O token não é válido. Confira se colou o token inteiro, sem \
             espaços no meio."
            .into(),
        Refusal::Forbidden(_) => {
            "Este token não dá acesso de administrador a um cliente (tenant).".into()
        }
        Refusal::Internal(_) => "Erro interno ao conferir o token. Tente de novo.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_the_tenants_time_zone() {
        let t = DateTime::parse_from_rfc3339("2026-11-20T17:03:11Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            when(t, chrono_tz::America::Sao_Paulo),
            When {
                iso: "2026-11-20T17:03:11Z".into(),
                text: "20/11/2026 14:03:11".into()
            }
        );
        assert_eq!(
            when(t, chrono_tz::America::Manaus).text,
            "20/11/2026 13:03:11"
        );
        assert_eq!(
            when(t, chrono_tz::America::Rio_Branco).text,
            "20/11/2026 12:03:11"
        );
    }

    #[test]
    fn a_failed_receipt_says_why() {
        assert_eq!(
            receipt_outcome(ReceiptStatus::Failed, Some("proposal_not_found")),
            "Falhou: proposta não encontrada"
        );
    }

    #[test]
    fn a_receipt_that_did_not_fail_says_its_status() {
        assert_eq!(
            receipt_outcome(ReceiptStatus::Processed, None),
            "Processado"
        );
    }

    #[test]
    fn a_refused_registration_says_the_insurers_status() {
        assert_eq!(
            registration_outcome("insurer_rejected", Some(503)),
            "Falhou: a seguradora respondeu HTTP 503"
        );
    }

    #[test]
    fn a_code_this_service_does_not_know_is_shown_as_it_is() {
        assert_eq!(failure("teapot"), "código teapot");
        assert_eq!(
            registration_outcome("teapot", None),
            "Falhou: código teapot"
        );
    }
}
