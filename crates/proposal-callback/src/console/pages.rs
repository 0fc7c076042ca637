//! The console's pages and actions. Each page reads through the same queries (`query/`) as
//! the admin JSON routes; each action (a POST) runs the same flow (`flow/`) as its JSON
//! route, then answers with a redirect to a page and a flash message saying how it went.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;

use crate::console::session::{
    self, BASE, ConsoleAdmin, Flash, FlashMessage, end_session, is_https, looks_like_jwt,
    same_origin, start_session,
};
use crate::console::views::{
    self, Choice, IntegrationLine, IntegrationsPage, Layout, ProposalPage, ReceiptLine,
    ReceiptPage, ReceiptsPage, SignInPage, SilentLine, StoryLines,
};
use crate::console::{ConsoleError, html, see_other, text};
use crate::domain::insurer::Insurer;
use crate::domain::registration::ApiCallback;
use crate::domain::status::ReceiptStatus;
use crate::domain::zone::Tz;
use crate::error::Error;
use crate::flow::email_retry;
use crate::flow::registration;
use crate::flow::replay::replay_one;
use crate::query::integrations::IntegrationView;
use crate::query::receipts::{self, FAILURE_CODES};
use crate::query::story::ProposalStory;
use crate::state::AppState;
use crate::store::receipts::ReceiptFilter;
use crate::store::{integrations, tenants};

/// Receipts per page of the callback log.
pub const PAGE_SIZE: i64 = 25;
/// The longest proposal id the console looks up (the tenant's ids are short).
const MAX_PROPOSAL_ID_CHARS: usize = 100;
/// What a typed text holding a NUL character (`%00`) is told: PostgreSQL's text cannot hold
/// one, so it is refused with a 400 page instead of failing the query.
const HOLDS_NUL: &str = "contém um caractere nulo (%00), que nenhum registro tem";

/// A proposal id as typed (the lookup form, a proposal's address): 400 when it holds a NUL.
fn typed_proposal_id(id: &str) -> Result<(), ConsoleError> {
    if id.contains('\0') {
        return Err(ConsoleError::page(
            StatusCode::BAD_REQUEST,
            format!("O número da proposta {HOLDS_NUL}. Volte e escreva o número de novo."),
        ));
    }
    Ok(())
}

pub(crate) fn render(page: &impl Template, flash: &Flash) -> Result<HttpResponse, ConsoleError> {
    let body = page
        .render()
        .map_err(|e| ConsoleError::internal(&format!("console template: {e}")))?;
    let mut res = html(StatusCode::OK);
    flash.clear(&mut res);
    Ok(res.body(body))
}

/// `see_other(location)` carrying `message` for the next page.
pub(crate) fn redirect(location: &str, message: FlashMessage, secure: bool) -> HttpResponse {
    let mut res = see_other(location);
    message.set(&mut res, secure);
    res.finish()
}

/// An id from the path; anything but a positive integer names nothing (404).
pub(crate) fn path_id(raw: &str, what: &str) -> Result<i64, ConsoleError> {
    raw.parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(|| {
        ConsoleError::page(
            StatusCode::NOT_FOUND,
            format!("Não há {what} com o número “{raw}”."),
        )
    })
}

pub(crate) fn layout(
    title: &str,
    section: &'static str,
    admin: &ConsoleAdmin,
    flash: &Flash,
    zone: Tz,
) -> Layout {
    Layout::new(title, section)
        .flash(flash.message.clone())
        .who(&admin.admin.tenant, &admin.admin.sub)
        .time_zone(zone)
}

/// The signed-in tenant's time zone, which its pages show every time in.
pub(crate) async fn tenant_zone(
    conn: &mut diesel_async::AsyncPgConnection,
    admin: &ConsoleAdmin,
) -> Result<Tz, ConsoleError> {
    Ok(tenants::time_zone(conn, &admin.admin.tenant).await?)
}

// --- sign-in -----------------------------------------------------------------------------

pub async fn sign_in_form(flash: Flash) -> Result<HttpResponse, ConsoleError> {
    let page = SignInPage {
        layout: Layout::new("Entrar", "").flash(flash.message.clone()),
    };
    render(&page, &flash)
}

#[derive(Debug, Deserialize)]
pub struct SignInForm {
    #[serde(default)]
    token: String,
}

/// Checks the pasted token as the admin routes check a Bearer token and, when it passes,
/// opens a session (its id in the cookie). The token is never stored, logged, shown or put
/// in a URL.
pub async fn sign_in(
    req: HttpRequest,
    form: web::Form<SignInForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let secure = is_https(&req);
    let pasted = form.token.trim();
    let token = pasted.strip_prefix("Bearer ").unwrap_or(pasted).trim();
    let again = |why: String| {
        Ok(redirect(
            &format!("{BASE}/entrar"),
            FlashMessage::erro(why),
            secure,
        ))
    };
    if token.is_empty() {
        return again("Cole o token de administrador no campo “Token de administrador”.".into());
    }
    if !looks_like_jwt(token) {
        return again(
            "Isto não é um token: um token tem só letras, números e os sinais - _ . (e no \
             máximo 3.800 caracteres)."
                .into(),
        );
    }
    match state.admin_tokens.check_with_expiry(token).await {
        Ok((admin, exp)) => {
            let id = session::start(&state, &req, &admin, exp).await?;
            tracing::info!(tenant = %admin.tenant, admin = %admin.sub, "console: signed in");
            let mut res = see_other(BASE);
            start_session(&mut res, &id, secure);
            FlashMessage::ok(format!(
                "Você entrou como administrador do cliente {}.",
                admin.tenant
            ))
            .set(&mut res, secure);
            Ok(res.finish())
        }
        Err(refusal) => {
            tracing::info!(reason = ?refusal, "console: sign-in refused");
            again(text::refusal(&refusal))
        }
    }
}

/// Ends the session (revoked: its id opens nothing any more).
pub async fn sign_out(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    session::revoke(&state, &req).await?;
    let secure = is_https(&req);
    let mut res = see_other(&format!("{BASE}/entrar"));
    end_session(&mut res, secure);
    FlashMessage::info("Você saiu do console. O token não ficou guardado neste navegador.")
        .set(&mut res, secure);
    Ok(res.finish())
}

// --- integrations ------------------------------------------------------------------------

pub async fn integrations(
    admin: ConsoleAdmin,
    flash: Flash,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    let tenant = &admin.admin.tenant;
    let mut conn = state.pool.get().await?;
    let zone = tenant_zone(&mut conn, &admin).await?;
    let base = &state.registrar.config.callback_base_url;
    let rows: Vec<IntegrationLine> = IntegrationView::list(&mut conn, tenant)
        .await?
        .into_iter()
        .map(|i| {
            let url = ApiCallback::new(base, tenant, i.insurer).url_callback;
            IntegrationLine::new(i, url, zone)
        })
        .collect();
    let now = state.clock.now();
    let silent = rows_silent(&rows, now, zone);
    let sender = crate::store::tenants::sender(&mut conn, tenant)
        .await?
        .unwrap_or_default();
    let failed = crate::store::outbox::failed_matching(
        &mut conn,
        tenant,
        &Default::default(),
        email_retry::RETRY_MAX,
    )
    .await?;
    let page = IntegrationsPage {
        layout: layout("Integrações", views::INTEGRATIONS, &admin, &flash, zone),
        rows,
        silent,
        sender: sender.own_from().map(|m| m.to_string()),
        reply_to: sender.reply_to().map(str::to_owned),
        failed_emails: failed.len(),
    };
    render(&page, &flash)
}

/// RegisterCallback for one integration (the domain function of
/// `POST /admin/integrations/{id}/register-callback`); the outcome comes back as a flash
/// message, with the insurer's HTTP status when it refused.
pub async fn register_callback(
    req: HttpRequest,
    admin: ConsoleAdmin,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let id = path_id(&path, "integração")?;
    let tenant = admin.admin.tenant.clone();
    let result = registration::register_detached(
        state.pool.clone(),
        state.registrar.clone(),
        state.clock.clone(),
        tenant.clone(),
        admin.admin.sub.clone(),
        id,
    )
    .await;
    let name = |row: &integrations::IntegrationRow| {
        format!(
            "{} ({})",
            text::insurer(row.insurer),
            text::environment(row.environment)
        )
    };
    let message = match result {
        Ok(row) => FlashMessage::ok(format!(
            "Callback registrado: {} aceitou o registro (HTTP 200) e o callback está ativo.",
            name(&row)
        )),
        Err(e) => {
            let Some(why) = text::registration_failure(&e) else {
                return Err(e.into());
            };
            let mut conn = state.pool.get().await?;
            let which = integrations::find(&mut conn, id)
                .await?
                .filter(|row| row.tenant_id == tenant)
                .map(|row| name(&row))
                .unwrap_or_else(|| format!("integração nº {id}"));
            FlashMessage::erro(format!("Registro de {which} não concluído. {why}"))
        }
    };
    Ok(redirect(
        &format!("{BASE}#integracao-{id}"),
        message,
        admin.secure,
    ))
}

/// The banner of each integration whose insurer is silent, as of `now`.
fn rows_silent(
    rows: &[IntegrationLine],
    now: chrono::DateTime<chrono::Utc>,
    zone: Tz,
) -> Vec<SilentLine> {
    rows.iter()
        .filter_map(|r| SilentLine::new(r, now, zone))
        .collect()
}

// --- the callback log --------------------------------------------------------------------

/// The callback log's filters as the GET form sends them (and each replay form sends back).
#[derive(Debug, Default, Deserialize)]
pub struct LogQuery {
    pub(crate) resultado: Option<String>,
    pub(crate) seguradora: Option<String>,
    pub(crate) proposta: Option<String>,
    pub(crate) antes: Option<String>,
    /// On a replay: `detalhe` comes back to the receipt's page, anything else to the list.
    pub(crate) voltar: Option<String>,
}

/// The filters, checked.
pub(crate) struct LogFilter {
    pub(crate) filter: ReceiptFilter,
    resultado: String,
    seguradora: String,
    proposta: String,
    pub(crate) antes: Option<i64>,
}

impl LogFilter {
    pub(crate) fn parse(q: &LogQuery) -> Result<Self, ConsoleError> {
        let bad = |what: &str| {
            ConsoleError::page(
                StatusCode::BAD_REQUEST,
                format!(
                    "Filtro inválido: {what}. Volte ao registro de callbacks e escolha de novo."
                ),
            )
        };
        let field = |v: &Option<String>| v.as_deref().unwrap_or("").trim().to_owned();
        let resultado = field(&q.resultado);
        let seguradora = field(&q.seguradora);
        let proposta = field(&q.proposta);
        for (name, value) in [
            ("resultado", &resultado),
            ("seguradora", &seguradora),
            ("proposta", &proposta),
        ] {
            if value.contains('\0') {
                return Err(bad(&format!("o campo “{name}” {HOLDS_NUL}")));
            }
        }
        let refused = |r| bad(text::filter_refusal(r));
        let mut filter = ReceiptFilter::default();
        if !resultado.is_empty() {
            let (status, code) = receipts::outcome(&resultado).map_err(refused)?;
            filter.status = Some(status);
            filter.code = code.map(|c| c.as_str().to_owned());
        }
        if !seguradora.is_empty() {
            filter.insurer = receipts::insurer(Some(seguradora.clone())).map_err(refused)?;
        }
        if !proposta.is_empty() {
            if proposta.chars().count() > MAX_PROPOSAL_ID_CHARS {
                return Err(bad("número de proposta longo demais"));
            }
            filter.proposal_id = Some(proposta.clone());
        }
        let antes = match field(&q.antes).as_str() {
            "" => None,
            raw => Some(
                raw.parse::<i64>()
                    .ok()
                    .filter(|id| *id > 0)
                    .ok_or_else(|| bad("página inválida"))?,
            ),
        };
        Ok(Self {
            filter,
            resultado,
            seguradora,
            proposta,
            antes,
        })
    }

    /// The filters that are set, as form fields.
    pub(crate) fn fields(&self) -> Vec<(&'static str, String)> {
        [
            ("resultado", &self.resultado),
            ("seguradora", &self.seguradora),
            ("proposta", &self.proposta),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, v.clone()))
        .collect()
    }

    /// The log's URL with these filters, before receipt `antes` when given.
    pub(crate) fn href(&self, antes: Option<i64>) -> String {
        let mut fields = self.fields();
        fields.extend(antes.map(|a| ("antes", a.to_string())));
        let query: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
            .collect();
        if query.is_empty() {
            format!("{BASE}/callbacks")
        } else {
            format!("{BASE}/callbacks?{}", query.join("&"))
        }
    }
}

fn outcome_choices(selected: &str) -> Vec<Choice> {
    let mut choices = vec![
        ("", "Todos".to_owned()),
        ("failed", "Falhou (qualquer motivo)".to_owned()),
    ];
    choices.extend(
        FAILURE_CODES
            .iter()
            .map(|c| (c.as_str(), format!("Falhou: {}", text::error_code(*c)))),
    );
    choices.extend(
        ReceiptStatus::ALL
            .into_iter()
            .filter(|s| *s != ReceiptStatus::Failed)
            .map(|s| (s.as_str(), text::receipt_status(s).to_owned())),
    );
    choices
        .into_iter()
        .map(|(value, label)| Choice {
            selected: value == selected,
            value: value.to_owned(),
            label,
        })
        .collect()
}

fn insurer_choices(selected: &str) -> Vec<Choice> {
    std::iter::once(("", "Todas"))
        .chain(Insurer::ALL.map(|i| (i.as_str(), text::insurer(i))))
        .map(|(value, label)| Choice {
            selected: value == selected,
            value: value.to_owned(),
            label: label.to_owned(),
        })
        .collect()
}

/// The tenant's receipts, newest first, [`PAGE_SIZE`] a page, filtered by outcome, insurer
/// and proposal (the store query of `GET /admin/receipts`).
pub async fn receipts(
    admin: ConsoleAdmin,
    flash: Flash,
    query: web::Query<LogQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    let f = LogFilter::parse(&query)?;
    let mut conn = state.pool.get().await?;
    let zone = tenant_zone(&mut conn, &admin).await?;
    let mut rows = receipts::list(
        &mut conn,
        &admin.admin.tenant,
        &f.filter,
        f.antes,
        PAGE_SIZE + 1,
    )
    .await?;
    let more = rows.len() as i64 > PAGE_SIZE;
    rows.truncate(PAGE_SIZE as usize);
    let older_href = more
        .then(|| rows.last().map(|r| f.href(Some(r.id))))
        .flatten();
    let mut back = f.fields();
    back.extend(f.antes.map(|a| ("antes", a.to_string())));
    let page = ReceiptsPage {
        layout: layout(
            "Registro de callbacks",
            views::RECEIPTS,
            &admin,
            &flash,
            zone,
        ),
        outcome_options: outcome_choices(&f.resultado),
        insurer_options: insurer_choices(&f.seguradora),
        proposal: f.proposta.clone(),
        rows: rows.iter().map(|r| ReceiptLine::new(r, zone)).collect(),
        back,
        newest_href: f.antes.map(|_| f.href(None)),
        older_href,
        filtered: !f.fields().is_empty(),
        bulk_href: f
            .href(None)
            .replacen("/callbacks", "/callbacks/reprocessar", 1),
    };
    render(&page, &flash)
}

/// One receipt: what it was, how it ended, the headers kept and the body as received.
pub async fn receipt(
    admin: ConsoleAdmin,
    flash: Flash,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    let id = path_id(&path, "callback")?;
    let mut conn = state.pool.get().await?;
    let zone = tenant_zone(&mut conn, &admin).await?;
    let receipt = receipts::find(&mut conn, &admin.admin.tenant, id).await?;
    let title = format!("Callback nº {id}");
    let mut page = ReceiptPage::new(
        layout(&title, views::RECEIPTS, &admin, &flash, zone),
        receipt,
        zone,
    );
    page.back = vec![("voltar", "detalhe".to_owned())];
    render(&page, &flash)
}

/// Processes a stored receipt again (the domain function of
/// `POST /admin/receipts/{id}/replay`), then back to where the operator was.
pub async fn replay(
    req: HttpRequest,
    admin: ConsoleAdmin,
    path: web::Path<String>,
    form: web::Form<LogQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let id = path_id(&path, "callback")?;
    let back = LogFilter::parse(&form)?;
    let mut conn = state.pool.get().await?;
    let message = match replay_one(&mut conn, &state.clock, &admin.admin.tenant, id).await {
        Ok(done) => {
            let now = match (&done.proposal_id, done.status) {
                (Some(p), Some(s)) => {
                    format!(" A proposta {p} está {}.", text::status(s).to_lowercase())
                }
                _ => String::new(),
            };
            FlashMessage::ok(format!(
                "Callback nº {id} reprocessado: {}.{now}",
                text::outcome(done.outcome)
            ))
        }
        // No such receipt of this tenant: nothing was replayed.
        Err(e @ Error::ReceiptNotFound(_)) => return Err(e.into()),
        // Nothing left to process: the receipt keeps the outcome it had.
        Err(Error::BodyErased { erased_at, .. }) => FlashMessage::erro(format!(
            "Callback nº {id} não pode ser reprocessado: corpo removido em {}, passado o prazo \
             de retenção do cliente. Nada mudou.",
            text::when(erased_at, tenant_zone(&mut conn, &admin).await?).text
        )),
        Err(e) if e.is_client_error() => FlashMessage::erro(format!(
            "Callback nº {id} reprocessado, e falhou de novo: {}.",
            text::error_code(e.code())
        )),
        Err(e) => return Err(e.into()),
    };
    let location = if form.voltar.as_deref() == Some("detalhe") {
        views::receipt_href(id)
    } else {
        format!("{}#callback-{id}", back.href(back.antes))
    };
    Ok(redirect(&location, message, admin.secure))
}

// --- emails ------------------------------------------------------------------------------

/// Where "Reenviar" comes back to: the proposal whose page holds the button.
#[derive(Debug, Deserialize)]
pub struct RetryForm {
    proposta: Option<String>,
}

/// "Reenviar": an email the relay refused for good goes back to the queue (the domain
/// function of `POST /admin/emails/{id}/retry`), then back to the proposal's emails.
pub async fn retry_email(
    req: HttpRequest,
    admin: ConsoleAdmin,
    path: web::Path<String>,
    form: web::Form<RetryForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let id = path_id(&path, "e-mail")?;
    let mut conn = state.pool.get().await?;
    let (proposal, message) =
        match email_retry::retry(&mut conn, &state.clock, &admin.admin.tenant, id).await {
            Ok(row) => (
                Some(row.proposal),
                FlashMessage::ok(format!(
                    "E-mail nº {id} de volta à fila: será enviado de novo em instantes, para {}.",
                    row.recipient
                )),
            ),
            Err(Error::EmailNotFailed { delivery, .. }) => (
                None,
                FlashMessage::erro(format!(
                    "E-mail nº {id} não foi reenviado: só um e-mail recusado pelo servidor de \
                     e-mail pode ser reenviado, e este está “{}”.",
                    text::delivery(delivery)
                )),
            ),
            Err(e) => return Err(e.into()),
        };
    let back = proposal
        .or_else(|| form.proposta.clone())
        .filter(|p| !p.contains('\0') && !p.is_empty());
    let location = match back {
        Some(p) => format!("{}#email-{id}", views::proposal_href(&p)),
        None => format!("{BASE}/propostas"),
    };
    Ok(redirect(&location, message, admin.secure))
}

/// "Reenviar os e-mails recusados": every email of the tenant the relay refused for good goes
/// back to the queue (the domain function of `POST /admin/emails/retry`, no filter), then back
/// to the integrations.
pub async fn retry_failed_emails(
    req: HttpRequest,
    admin: ConsoleAdmin,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    same_origin(&req)?;
    let mut conn = state.pool.get().await?;
    let done = email_retry::retry_many(
        &mut conn,
        &state.clock,
        &admin.admin.tenant,
        &Default::default(),
        email_retry::RETRY_MAX,
        false,
    )
    .await?;
    let n = done.ids.len();
    let message = FlashMessage::ok(format!(
        "{n} e-mail{} recusado{} de volta à fila: ser{} enviado{} de novo em instantes.",
        if n == 1 { "" } else { "s" },
        if n == 1 { "" } else { "s" },
        if n == 1 { "á" } else { "ão" },
        if n == 1 { "" } else { "s" },
    ));
    Ok(redirect(BASE, message, admin.secure))
}

// --- proposals ---------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
pub struct Lookup {
    id: Option<String>,
}

/// The lookup form; with an id, to that proposal's page.
pub async fn find_proposal(
    admin: ConsoleAdmin,
    flash: Flash,
    query: web::Query<Lookup>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    let wanted = query.id.as_deref().unwrap_or("").trim();
    typed_proposal_id(wanted)?;
    if !wanted.is_empty() {
        return Ok(see_other(&views::proposal_href(wanted)).finish());
    }
    let mut conn = state.pool.get().await?;
    let zone = tenant_zone(&mut conn, &admin).await?;
    let page = ProposalPage {
        layout: layout("Propostas", views::PROPOSALS, &admin, &flash, zone),
        lookup: String::new(),
        story: None,
    };
    render(&page, &flash)
}

/// A proposal's story (the data of `GET /admin/proposals/{id}`): status, history, events,
/// emails with their delivery state, and the callbacks that named it.
pub async fn proposal(
    admin: ConsoleAdmin,
    flash: Flash,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ConsoleError> {
    let proposal_id = path.into_inner();
    typed_proposal_id(&proposal_id)?;
    if proposal_id.chars().count() > MAX_PROPOSAL_ID_CHARS {
        return Err(Error::ProposalNotFound { proposal_id }.into());
    }
    let mut conn = state.pool.get().await?;
    let zone = tenant_zone(&mut conn, &admin).await?;
    let story = ProposalStory::load(&mut conn, &admin.admin.tenant, proposal_id).await?;
    let title = format!("Proposta {}", story.proposal_id);
    let page = ProposalPage {
        layout: layout(&title, views::PROPOSALS, &admin, &flash, zone),
        lookup: story.proposal_id.clone(),
        story: Some(StoryLines::new(story, zone)),
    };
    render(&page, &flash)
}
