//! The console's repairs (docs/operations.md, "The integrations console"): pausing an
//! integration, and resuming it or replaying the callbacks the log's filter shows, each
//! after a preview. A preview is a GET page that runs the repair's dry run (`flow::preview`:
//! the same code, rolled back) and lists what each callback would do; its form confirms
//! with a POST that runs the repair (the same flows as the JSON routes) and comes back with a
//! flash message saying what was done.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use crate::console::pages::{LogFilter, LogQuery, layout, path_id, redirect, render, tenant_zone};
use crate::console::session::{BASE, ConsoleAdmin, Flash, FlashMessage, same_origin};
use crate::console::views::{self, Layout, proposal_href, receipt_href};
use crate::console::{ConsoleError, text};
use crate::domain::code::ErrorCode;
use crate::domain::status::{ReceiptStatus, Status};
use crate::error::Error;
use crate::flow::pause::{self, RESUME_MAX, Resumed};
use crate::flow::preview::Effect;
use crate::flow::replay::{REPLAY_DEFAULT, Replayed, preview_matching, replay_matching};
use crate::state::AppState;
use crate::store::integrations::IntegrationRow;

/// A repair's preview: what each callback would do, and the form that confirms it.
#[derive(Template)]
#[template(path = "console/preview.html")]
pub struct PreviewPage {
    pub layout: Layout,
    pub lead: String,
    /// What it would do, in one or two sentences.
    pub summary: Vec<String>,
    pub caption: String,
    pub rows: Vec<EffectLine>,
    /// Said instead of the table when no callback is concerned.
    pub empty: String,
    /// Whether there is anything to confirm (an integration that is not paused, a filter that
    /// shows no callback: only the way back).
    pub can_confirm: bool,
    /// Where the confirmation posts, with its hidden fields.
    pub action: String,
    pub fields: Vec<(&'static str, String)>,
    pub confirm: String,
    pub cancel_href: String,
}

/// One callback of a preview.
pub struct EffectLine {
    pub receipt_id: i64,
    pub href: String,
    pub insurer: String,
    pub proposal: String,
    pub proposal_href: Option<String>,
    pub before: &'static str,
    pub after: &'static str,
    /// Whether the proposal's status would change.
    pub moves: bool,
    pub outcome: String,
    pub tone: &'static str,
    pub email: bool,
}

/// A receipt's outcome as the log shows it, from an effect's `outcome` (a receipt status or,
/// when it failed, the error code).
fn outcome_text(outcome: &str) -> (String, &'static str) {
    match ReceiptStatus::parse(outcome) {
        Some(status) => (
            text::receipt_outcome(status, None),
            text::receipt_tone(status),
        ),
        None => (
            text::receipt_outcome(ReceiptStatus::Failed, Some(outcome)),
            text::receipt_tone(ReceiptStatus::Failed),
        ),
    }
}

impl From<&Effect> for EffectLine {
    fn from(e: &Effect) -> Self {
        let (outcome, tone) = outcome_text(e.outcome.as_str());
        let status = |s: Option<Status>| s.map(text::status).unwrap_or("—");
        Self {
            receipt_id: e.receipt_id,
            href: receipt_href(e.receipt_id),
            insurer: text::insurer(e.insurer).to_owned(),
            proposal: e.proposal_id.clone().unwrap_or_else(|| "—".into()),
            proposal_href: e
                .proposal_id
                .as_deref()
                .filter(|_| e.status_before.is_some())
                .map(proposal_href),
            before: status(e.status_before),
            after: status(e.status_after),
            moves: e.status_before != e.status_after,
            outcome,
            tone,
            email: e.email,
        }
    }
}

/// `Processado: 10; Falhou: proposta não encontrada: 2`, in the order of the outcomes.
fn outcomes_text(outcomes: &BTreeMap<String, usize>) -> String {
    outcomes
        .iter()
        .map(|(o, n)| format!("{}: {n}", outcome_text(o).0))
        .collect::<Vec<_>>()
        .join("; ")
}

fn emails(effects: &[Effect]) -> usize {
    effects.iter().filter(|e| e.email).count()
}

fn integration_name(row: &IntegrationRow) -> String {
    format!(
        "{} ({})",
        text::insurer(row.insurer),
        text::environment(row.environment)
    )
}

/// The phrase of a callback count: `1 callback`, `12 callbacks`.
fn callbacks(n: usize) -> String {
    if n == 1 {
        "1 callback".into()
    } else {
        format!("{n} callbacks")
    }
}

fn emails_phrase(n: usize) -> String {
    match n {
        0 => "nenhum e-mail ao locatário".into(),
        1 => "1 e-mail ao locatário".into(),
        n => format!("{n} e-mails aos locatários"),
    }
}

// --- pause and resume --------------------------------------------------------------------

/// Pauses an integration (the flow of `POST /admin/integrations/{id}/pause`): nothing to
/// preview, it applies nothing and is undone by a resume.
pub async fn pause(
    req: HttpRequest,
    admin: ConsoleAdmin,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let id = path_id(&path, "integração")?;
    let mut conn = state.pool.get().await?;
    let row = pause::pause(&mut conn, &state.clock, &admin.admin.tenant, id).await?;
    tracing::info!(integration = id, admin = %admin.admin.sub, "console: integration paused");
    let message = FlashMessage::ok(format!(
        "{} pausada: os callbacks dela são guardados e respondidos 202 (adiados), sem ser \
         aplicados, até você retomar.",
        integration_name(&row)
    ));
    Ok(redirect(
        &format!("{BASE}#integracao-{id}"),
        message,
        admin.secure,
    ))
}

/// The resume's preview: the deferred callbacks applied in a transaction that is rolled
/// back, listed with what each would do; the form confirms.
pub async fn resume_preview(
    admin: ConsoleAdmin,
    flash: Flash,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    let id = path_id(&path, "integração")?;
    let mut conn = state.pool.get().await?;
    let preview =
        pause::preview_resume(&mut conn, &state.clock, &admin.admin.tenant, id, RESUME_MAX).await?;
    let name = integration_name(&preview.integration);
    let title = format!("Retomar {name}");
    let applied = preview.effects.len();
    let mut summary = Vec::new();
    if preview.integration.paused_at.is_none() {
        summary.push("Esta integração não está pausada: retomar não muda nada.".to_owned());
    } else if applied == 0 {
        summary.push(
            "Nenhum callback adiado: retomar apenas encerra a pausa, e os callbacks \
             seguintes são aplicados ao chegar."
                .to_owned(),
        );
    } else {
        summary.push(format!(
            "Retomar aplicaria {} {}, na ordem em que chegaram ({}), e enviaria {}.",
            callbacks(applied),
            if applied == 1 { "adiado" } else { "adiados" },
            outcomes_text(&preview.outcomes),
            emails_phrase(emails(&preview.effects)),
        ));
        summary.push(if preview.remaining > 0 {
            format!(
                "Restariam {} adiados (no máximo {RESUME_MAX} por vez): a integração continuaria \
                 pausada; retome de novo depois.",
                preview.remaining
            )
        } else {
            "Depois a pausa termina. Callbacks que chegarem até você confirmar também são \
             aplicados, depois destes."
                .to_owned()
        });
    }
    let page = PreviewPage {
        layout: layout(
            &title,
            views::INTEGRATIONS,
            &admin,
            &flash,
            tenant_zone(&mut conn, &admin).await?,
        ),
        lead: format!(
            "Prévia: nada foi aplicado ainda. Isto é o que retomar {name} faria agora, \
             callback por callback."
        ),
        summary,
        caption: "Callbacks adiados, na ordem em que seriam aplicados".into(),
        rows: preview.effects.iter().map(EffectLine::from).collect(),
        empty: "Nenhum callback adiado.".into(),
        can_confirm: preview.integration.paused_at.is_some(),
        action: format!("{BASE}/integracoes/{id}/retomar"),
        fields: Vec::new(),
        confirm: if applied == 0 {
            "Confirmar: retomar".into()
        } else {
            format!("Confirmar: retomar e aplicar {}", callbacks(applied))
        },
        cancel_href: format!("{BASE}#integracao-{id}"),
    };
    render(&page, &flash)
}

fn resumed_message(name: &str, resumed: &Resumed) -> FlashMessage {
    let applied = resumed.effects.len();
    let what = if applied == 0 {
        "nenhum callback adiado a aplicar".to_owned()
    } else {
        format!(
            "{} {} na ordem em que chegaram ({}), {}",
            callbacks(applied),
            if applied == 1 {
                "aplicado"
            } else {
                "aplicados"
            },
            outcomes_text(&resumed.outcomes),
            emails_phrase(emails(&resumed.effects))
        )
    };
    if resumed.remaining > 0 {
        FlashMessage::info(format!(
            "{name}: {what}. Ainda restam {} adiados: a integração continua pausada; retome de \
             novo.",
            resumed.remaining
        ))
    } else {
        FlashMessage::ok(format!("{name} retomada: {what}. A pausa terminou."))
    }
}

/// Resumes an integration (the flow of `POST /admin/integrations/{id}/resume`), on a task of
/// its own (an operator who closes the page does not stop it half way).
pub async fn resume(
    req: HttpRequest,
    admin: ConsoleAdmin,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let id = path_id(&path, "integração")?;
    let tenant = admin.admin.tenant.clone();
    let (pool, clock) = (state.pool.clone(), state.clock.clone());
    let resumed = actix_web::rt::spawn(async move {
        let mut conn = pool.get().await?;
        pause::resume(&mut conn, &clock, &tenant, id, RESUME_MAX).await
    })
    .await
    .map_err(|e| ConsoleError::internal(&format!("the resume task failed: {e}")))??;
    tracing::info!(integration = id, admin = %admin.admin.sub, applied = resumed.effects.len(), remaining = resumed.remaining, "console: integration resumed");
    let message = resumed_message(&integration_name(&resumed.integration), &resumed);
    Ok(redirect(
        &format!("{BASE}#integracao-{id}"),
        message,
        admin.secure,
    ))
}

// --- bulk replay -------------------------------------------------------------------------

/// The log's filters, and on the confirmation the last receipt the preview showed.
#[derive(Debug, Default, Deserialize)]
pub struct BulkQuery {
    resultado: Option<String>,
    seguradora: Option<String>,
    proposta: Option<String>,
    /// The confirmation replays the receipts up to this one: those the preview showed.
    ate: Option<String>,
}

impl BulkQuery {
    fn filter(&self) -> Result<LogFilter, ConsoleError> {
        let mut f = LogFilter::parse(&LogQuery {
            resultado: self.resultado.clone(),
            seguradora: self.seguradora.clone(),
            proposta: self.proposta.clone(),
            antes: None,
            voltar: None,
        })?;
        f.filter.up_to_id = match self.ate.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(raw) => Some(raw.parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(|| {
                ConsoleError::page(
                    StatusCode::BAD_REQUEST,
                    "Confirmação inválida: volte ao registro de callbacks e abra a prévia de novo.",
                )
            })?),
        };
        Ok(f)
    }
}

/// The bulk replay's preview: the oldest [`REPLAY_DEFAULT`] receipts the log's filter shows,
/// processed again in a transaction that is rolled back; the form confirms those.
pub async fn replay_preview(
    admin: ConsoleAdmin,
    flash: Flash,
    query: web::Query<BulkQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    let f = query.filter()?;
    let mut conn = state.pool.get().await?;
    let preview = preview_matching(
        &mut conn,
        &state.clock,
        &admin.admin.tenant,
        &f.filter,
        None,
        REPLAY_DEFAULT,
    )
    .await?;
    let n = preview.effects.len();
    let mut summary = Vec::new();
    if n > 0 {
        summary.push(format!(
            "Reprocessar {} (os mais antigos primeiro) daria: {}; e enviaria {}.",
            callbacks(n),
            outcomes_text(&preview.outcomes),
            emails_phrase(emails(&preview.effects)),
        ));
        summary.push(
            "Cada callback segue as regras de sempre: um que já foi aplicado volta como \
             duplicado e não muda nada."
                .to_owned(),
        );
    }
    if preview.next_after_id.is_some() {
        summary.push(format!(
            "Mais callbacks têm estes filtros: a confirmação reprocessa só estes {n}; depois, \
             abra a prévia de novo para os seguintes."
        ));
    }
    let mut fields = f.fields();
    if let Some(last) = preview.effects.last() {
        fields.push(("ate", last.receipt_id.to_string()));
    }
    let page = PreviewPage {
        layout: layout(
            "Reprocessar callbacks",
            views::RECEIPTS,
            &admin,
            &flash,
            tenant_zone(&mut conn, &admin).await?,
        ),
        lead: "Prévia: nada foi reprocessado ainda. Isto é o que reprocessar os callbacks \
               destes filtros faria agora, callback por callback."
            .into(),
        summary,
        caption: "Callbacks, na ordem em que seriam reprocessados".into(),
        rows: preview.effects.iter().map(EffectLine::from).collect(),
        empty: "Nenhum callback com estes filtros.".into(),
        can_confirm: n > 0,
        action: format!("{BASE}/callbacks/reprocessar"),
        fields,
        confirm: format!("Confirmar: reprocessar {}", callbacks(n)),
        cancel_href: f.href(None),
    };
    render(&page, &flash)
}

fn replayed_message(replayed: &Replayed) -> FlashMessage {
    if replayed.replayed == 0 {
        return FlashMessage::info("Nenhum callback com estes filtros: nada foi reprocessado.");
    }
    let failed = replayed
        .outcomes
        .keys()
        .any(|o| ReceiptStatus::parse(o).is_none() && ErrorCode::parse(o).is_some());
    let text = format!(
        "{} {}: {}; {}.",
        callbacks(replayed.replayed),
        if replayed.replayed == 1 {
            "reprocessado"
        } else {
            "reprocessados"
        },
        outcomes_text(&replayed.outcomes),
        emails_phrase(emails(&replayed.effects)),
    );
    if failed {
        FlashMessage::info(text)
    } else {
        FlashMessage::ok(text)
    }
}

/// Replays the receipts the preview showed (the flow of `POST /admin/receipts/replay`), on a
/// task of its own, then back to the log with its filters.
pub async fn replay(
    req: HttpRequest,
    admin: ConsoleAdmin,
    form: web::Form<BulkQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let f = form.filter()?;
    let back = f.href(None);
    let tenant = admin.admin.tenant.clone();
    let filter = f.filter;
    let (pool, clock) = (state.pool.clone(), state.clock.clone());
    let replayed = actix_web::rt::spawn(async move {
        let mut conn = pool.get().await?;
        replay_matching(&mut conn, &clock, &tenant, &filter, None, REPLAY_DEFAULT).await
    })
    .await
    .map_err(|e| ConsoleError::internal(&format!("the replay task failed: {e}")))?
    .map_err(|e: Error| ConsoleError::from(e))?;
    tracing::info!(admin = %admin.admin.sub, replayed = replayed.replayed, "console: callbacks replayed in bulk");
    Ok(redirect(&back, replayed_message(&replayed), admin.secure))
}
