//! What each console page shows, ready to print: the templates under `templates/console/`
//! and the lines they list, built from the same read models the admin JSON routes answer
//! with (`query::receipts`, `query::integrations`, `query::story`). Every text is escaped by
//! askama.

use askama::Template;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::console::session::{BASE, FlashMessage};
use crate::console::text::{self, When, when, when_opt};
use crate::console::{CSS_PATH, pretty};
use crate::domain::code::ErrorCode;
use crate::domain::silence::duration_text;
use crate::domain::status::ReceiptStatus;
use crate::domain::zone::Tz;
use crate::query::integrations::IntegrationView;
use crate::query::receipts::ReceiptView;
use crate::query::story::{EmailView, EventView, HistoryView, ProposalStory};

/// What a path segment may hold as it is; everything else is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

/// The console's sections, for the navigation (`aria-current`).
pub const INTEGRATIONS: &str = "integracoes";
pub const RECEIPTS: &str = "callbacks";
pub const PROPOSALS: &str = "propostas";

/// What every page shares: its title, where it is, the flash message, who is signed in.
pub struct Layout {
    pub title: String,
    pub section: &'static str,
    pub flash: Option<FlashMessage>,
    pub who: Option<Who>,
    pub css: &'static str,
    /// The tenant's time zone, which every time on the page is shown in.
    pub time_zone: Option<Tz>,
}

impl Layout {
    pub fn new(title: impl Into<String>, section: &'static str) -> Self {
        Self {
            title: title.into(),
            section,
            flash: None,
            who: None,
            css: CSS_PATH,
            time_zone: None,
        }
    }

    pub fn flash(mut self, flash: Option<FlashMessage>) -> Self {
        self.flash = flash;
        self
    }

    pub fn time_zone(mut self, zone: Tz) -> Self {
        self.time_zone = Some(zone);
        self
    }

    /// The time zone the page's times are in (`America/Sao_Paulo`).
    pub fn zone_name(&self) -> &'static str {
        self.time_zone
            .unwrap_or(crate::domain::zone::DEFAULT_ZONE)
            .name()
    }

    pub fn who(mut self, tenant: &str, sub: &str) -> Self {
        self.who = Some(Who {
            tenant: tenant.to_owned(),
            sub: sub.to_owned(),
        });
        self
    }
}

/// The signed-in administrator.
pub struct Who {
    pub tenant: String,
    pub sub: String,
}

pub fn proposal_href(proposal_id: &str) -> String {
    format!(
        "{BASE}/propostas/{}",
        utf8_percent_encode(proposal_id, SEGMENT)
    )
}

pub fn receipt_href(id: i64) -> String {
    format!("{BASE}/callbacks/{id}")
}

#[derive(Template)]
#[template(path = "console/sign_in.html")]
pub struct SignInPage {
    pub layout: Layout,
}

#[derive(Template)]
#[template(path = "console/integrations.html")]
pub struct IntegrationsPage {
    pub layout: Layout,
    pub rows: Vec<IntegrationLine>,
    /// A banner per integration whose insurer is silent.
    pub silent: Vec<SilentLine>,
    /// Who the tenant's emails come from: its sender, or none (`EMAIL_FROM`).
    pub sender: Option<String>,
    pub reply_to: Option<String>,
    /// The tenant's emails the relay refused for good (up to a bulk retry's worth).
    pub failed_emails: usize,
}

/// The banner of an integration whose insurer is silent (docs/proposal-callback.md, "Silent
/// insurers").
pub struct SilentLine {
    pub id: i64,
    pub insurer: String,
    pub environment: &'static str,
    pub since: When,
    /// How long it has been silent, in words.
    pub silent_for: String,
    /// How long a silence of it may last before it is flagged, in words.
    pub threshold: String,
}

impl SilentLine {
    pub fn new(
        row: &IntegrationLine,
        now: chrono::DateTime<chrono::Utc>,
        zone: Tz,
    ) -> Option<Self> {
        let (since, threshold) = row.silent?;
        Some(Self {
            id: row.id,
            insurer: row.insurer.clone(),
            environment: row.environment,
            since: when(since, zone),
            silent_for: duration_text((now - since).num_seconds() as f64),
            threshold: duration_text(threshold),
        })
    }
}

/// One integration's row.
pub struct IntegrationLine {
    pub id: i64,
    pub insurer: String,
    pub environment: &'static str,
    /// Whether the insurer calls back, in words (docs/operations.md, "The integrations
    /// console").
    pub state: CallbackState,
    /// The callback URL RegisterCallback gives the insurer, cut after each `/` (a line of
    /// the table breaks there, never inside a word).
    pub callback_url: Vec<String>,
    pub registered_at: Option<When>,
    pub last: Option<AttemptLine>,
    pub paused_at: Option<When>,
    /// When its newest callback arrived.
    pub last_callback_at: Option<When>,
    /// Silent since then, past this threshold (seconds).
    pub silent: Option<(chrono::DateTime<chrono::Utc>, f64)>,
}

/// What is true of an integration's callback, as the console says it: registered by the
/// console (the flag `is_callback_active`, set by the insurer's HTTP 200), registered
/// elsewhere (callbacks arrive, though the console registered none that the insurer
/// accepted), or not registered (no callback has arrived).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackState {
    Registered,
    RegisteredOutside,
    NotRegistered,
}

impl CallbackState {
    pub fn of(is_callback_active: bool, has_callbacks: bool) -> Self {
        match (is_callback_active, has_callbacks) {
            (true, _) => CallbackState::Registered,
            (false, true) => CallbackState::RegisteredOutside,
            (false, false) => CallbackState::NotRegistered,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            CallbackState::Registered => "Ativo",
            CallbackState::RegisteredOutside => "Registrado fora do console",
            CallbackState::NotRegistered => "Não registrado",
        }
    }

    /// The badge's tone: `ok` or `neutro`.
    pub fn tone(self) -> &'static str {
        match self {
            CallbackState::Registered | CallbackState::RegisteredOutside => "ok",
            CallbackState::NotRegistered => "neutro",
        }
    }

    pub fn is_outside(self) -> bool {
        self == CallbackState::RegisteredOutside
    }
}

/// `url` cut after each `/` that does not begin `//`: where a line may break.
pub fn url_parts(url: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = url.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        if c == '/' && chars.peek() != Some(&'/') {
            parts.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// The last registration attempt, in words.
pub struct AttemptLine {
    pub at: When,
    pub text: String,
    pub ok: bool,
    pub by: String,
}

impl IntegrationLine {
    pub fn new(i: IntegrationView, callback_url: String, zone: Tz) -> Self {
        Self {
            id: i.id,
            insurer: text::insurer(i.insurer).to_owned(),
            environment: text::environment(i.environment),
            state: CallbackState::of(i.is_callback_active, i.last_callback_at.is_some()),
            callback_url: url_parts(&callback_url),
            registered_at: when_opt(i.callback_registered_at, zone),
            last: i.last_registration.map(|a| AttemptLine {
                at: when(a.finished_at, zone),
                ok: a.outcome == crate::store::registration_attempts::REGISTERED,
                text: text::registration_outcome(&a.outcome, a.insurer_status),
                by: a.requested_by,
            }),
            paused_at: when_opt(i.paused_at, zone),
            last_callback_at: when_opt(i.last_callback_at, zone),
            silent: i.silent_since.zip(i.silence_threshold_seconds),
        }
    }
}

#[derive(Template)]
#[template(path = "console/receipts.html")]
pub struct ReceiptsPage {
    pub layout: Layout,
    pub outcome_options: Vec<Choice>,
    pub insurer_options: Vec<Choice>,
    pub proposal: String,
    pub rows: Vec<ReceiptLine>,
    /// The list's filters, as hidden fields of each replay form (it comes back to them).
    pub back: Vec<(&'static str, String)>,
    /// The first page with these filters, when this one is not.
    pub newest_href: Option<String>,
    /// The next (older) page, when there is one.
    pub older_href: Option<String>,
    /// Whether any filter is set (the empty list says so).
    pub filtered: bool,
    /// The bulk replay's preview of the receipts these filters show.
    pub bulk_href: String,
}

/// One `<option>` of a filter.
pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// A receipt's row in a list.
pub struct ReceiptLine {
    pub id: i64,
    pub href: String,
    pub received_at: When,
    pub insurer: String,
    pub proposal_id: Option<String>,
    pub proposal_href: Option<String>,
    pub outcome: String,
    /// `ok`, `erro`, `aviso` or `neutro`.
    pub tone: &'static str,
    pub detail: String,
    pub can_replay: bool,
    /// When its body was erased past the tenant's retention ("corpo removido em ...").
    pub body_erased: Option<When>,
}

impl ReceiptLine {
    pub fn new(r: &ReceiptView, zone: Tz) -> Self {
        Self {
            id: r.id,
            href: receipt_href(r.id),
            received_at: when(r.received_at, zone),
            insurer: text::insurer(r.insurer).to_owned(),
            proposal_id: r.proposal_id.clone(),
            // A proposal the callback could not find has no page.
            proposal_href: r
                .proposal_id
                .as_deref()
                .filter(|_| r.error_code.as_deref() != Some(ErrorCode::ProposalNotFound.as_str()))
                .map(proposal_href),
            outcome: text::receipt_outcome(r.status, r.error_code.as_deref()),
            tone: text::receipt_tone(r.status),
            detail: r.error_detail.clone().unwrap_or_default(),
            // A receipt whose body was erased has nothing left to process.
            can_replay: r.status == ReceiptStatus::Failed && r.body_erased_at.is_none(),
            body_erased: when_opt(r.body_erased_at, zone),
        }
    }
}

#[derive(Template)]
#[template(path = "console/receipt.html")]
pub struct ReceiptPage {
    pub layout: Layout,
    pub r: ReceiptLine,
    pub http_status: String,
    pub event_at: Option<When>,
    pub processed_at: Option<When>,
    pub attempts: i32,
    pub headers: Vec<(String, String)>,
    /// The body indented, when it is JSON.
    pub body_indented: Option<String>,
    /// The body exactly as received (invalid UTF-8 replaced).
    pub body: String,
    pub body_bytes: usize,
    pub back: Vec<(&'static str, String)>,
}

impl ReceiptPage {
    pub fn new(layout: Layout, r: ReceiptView, zone: Tz) -> Self {
        let headers = match &r.headers {
            serde_json::Value::Object(map) => map
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect(),
            _ => Vec::new(),
        };
        Self {
            layout,
            r: ReceiptLine::new(&r, zone),
            http_status: r
                .http_status
                .map(|s| s.to_string())
                .unwrap_or_else(|| "—".into()),
            event_at: when_opt(r.event_at, zone),
            processed_at: when_opt(r.processed_at, zone),
            attempts: r.attempts,
            headers,
            body_indented: pretty::indent_json(&r.body),
            body_bytes: r.body.len(),
            body: r.body,
            back: Vec::new(),
        }
    }
}

#[derive(Template)]
#[template(path = "console/proposal.html")]
pub struct ProposalPage {
    pub layout: Layout,
    /// What the lookup form shows.
    pub lookup: String,
    pub story: Option<StoryLines>,
}

/// A proposal's story, in lines.
pub struct StoryLines {
    pub proposal_id: String,
    pub status: &'static str,
    pub in_queue: bool,
    pub contact_email: String,
    pub created_at: When,
    pub updated_at: When,
    pub last_event_at: Option<When>,
    pub history: Vec<HistoryLine>,
    pub events: Vec<EventLine>,
    pub emails: Vec<EmailLine>,
    pub receipts: Vec<ReceiptLine>,
}

pub struct HistoryLine {
    pub at: When,
    pub from: &'static str,
    pub to: &'static str,
    pub insurer: String,
    pub note: String,
    pub insurer_time: Option<When>,
    pub receipt_href: Option<String>,
    pub receipt_id: Option<i64>,
}

pub struct EventLine {
    pub at: When,
    pub kind: String,
    pub data: String,
}

pub struct EmailLine {
    pub id: i64,
    pub queued_at: When,
    pub subject: String,
    pub recipient: String,
    pub delivery: &'static str,
    /// `ok` once sent, `erro` after a failed attempt (or refused for good), `aviso` while
    /// queued.
    pub tone: &'static str,
    pub sent_at: Option<When>,
    pub next_attempt_at: Option<When>,
    pub attempts: i32,
    pub last_error: String,
    /// When the relay refused it for good.
    pub failed_at: Option<When>,
    /// Refused for good: the operator may send it again ("Reenviar").
    pub can_retry: bool,
    /// Its last attempt found the relay refusing the sender (not the recipient): it is
    /// retried by itself once the relay lets us send.
    pub sender_refused: bool,
    pub message_id: String,
}

impl HistoryLine {
    fn new(h: HistoryView, zone: Tz) -> Self {
        Self {
            at: when(h.recorded_at, zone),
            from: text::status(h.from),
            to: text::status(h.to),
            insurer: text::insurer(h.insurer).to_owned(),
            note: h.insurer_note.unwrap_or_default(),
            insurer_time: when_opt(h.insurer_time, zone),
            receipt_href: h.receipt_id.map(receipt_href),
            receipt_id: h.receipt_id,
        }
    }
}

impl EventLine {
    fn new(e: EventView, zone: Tz) -> Self {
        Self {
            at: when(e.recorded_at, zone),
            kind: text::event_kind(&e.kind).to_owned(),
            data: e.data.to_string(),
        }
    }
}

impl EmailLine {
    fn new(e: EmailView, zone: Tz) -> Self {
        use crate::store::outbox::Delivery;
        Self {
            id: e.id,
            queued_at: when(e.queued_at, zone),
            subject: e.subject,
            recipient: e.recipient,
            delivery: text::delivery(e.status),
            tone: match e.status {
                Delivery::Sent => "ok",
                Delivery::Failed | Delivery::Retrying => "erro",
                Delivery::Queued => "aviso",
            },
            sent_at: when_opt(e.sent_at, zone),
            next_attempt_at: when_opt(e.next_attempt_at, zone),
            attempts: e.attempts,
            sender_refused: e.status == Delivery::Retrying
                && e.last_error
                    .as_deref()
                    .is_some_and(|l| l.starts_with(crate::flow::email_worker::SENDER_REFUSED)),
            last_error: e.last_error.unwrap_or_default(),
            failed_at: when_opt(e.failed_at, zone),
            can_retry: e.status == Delivery::Failed,
            message_id: e.message_id.unwrap_or_default(),
        }
    }
}

impl StoryLines {
    /// The story with its times in the tenant's `zone`.
    pub fn new(s: ProposalStory, zone: Tz) -> Self {
        Self {
            proposal_id: s.proposal_id,
            status: text::status(s.status),
            in_queue: s.in_queue,
            contact_email: s.contact_email,
            created_at: when(s.created_at, zone),
            updated_at: when(s.updated_at, zone),
            last_event_at: when_opt(s.last_event_at, zone),
            history: s
                .history
                .into_iter()
                .map(|h| HistoryLine::new(h, zone))
                .collect(),
            events: s
                .events
                .into_iter()
                .map(|e| EventLine::new(e, zone))
                .collect(),
            emails: s
                .emails
                .into_iter()
                .map(|e| EmailLine::new(e, zone))
                .collect(),
            receipts: s
                .receipts
                .iter()
                .map(|r| ReceiptLine::new(r, zone))
                .collect(),
        }
    }
}
