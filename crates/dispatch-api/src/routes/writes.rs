//! The writes of CONTRACT §1: `POST /incident`, `PATCH /incident/{id}`, the
//! `POST /incident/{id}/...` actions and `POST /dispatch/{id}/status`. HTTP only: profile,
//! `If-Match`, body validation; the store runs each write in one transaction.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use common::extract::{Json, Path};
use common::{FieldError, Problem};
use diesel_async::AsyncPgConnection;
use serde::{Deserialize, Deserializer};
use utoipa::ToSchema;

use super::{FLEET, REGULATOR, Reply, conn};
use crate::auth::{CurrentUser, Profile};
use crate::domain::dispatch::Status;
use crate::domain::incident::State;
use crate::startup::AppState;
use crate::store::idempotency::{self, Key, Stored, once};
use crate::store::incident_writes::{self as store, DispatchCreated, DispatchProgress};
use crate::store::writes::{Editable, Written};

pub const TARM: &[Profile] = &[Profile::Tarm];
pub const TARM_OR_REGULATOR: &[Profile] = &[Profile::Tarm, Profile::MedicoRegulador];

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/incident", web::post().to(create))
        .route("/incident/{id}", web::patch().to(patch))
        .route("/incident/{id}/submit", web::post().to(submit))
        .route("/incident/{id}/cancel", web::post().to(cancel))
        .route("/incident/{id}/prank-call", web::post().to(prank_call))
        .route(
            "/incident/{id}/technical-decision",
            web::post().to(technical_decision),
        )
        .route("/incident/{id}/send-to", web::post().to(send_to))
        .route("/incident/{id}/dispatch", web::post().to(dispatch))
        .route(
            "/incident/{id}/intercurrence",
            web::post().to(intercurrence),
        )
        .route("/incident/{id}/transfer", web::post().to(transfer))
        .route("/incident/{id}/close", web::post().to(close))
        .route("/dispatch/{id}/status", web::post().to(dispatch_status));
}

/// The `If-Match: "<version>"` every incident write needs: 428 without it, 400 when it is
/// not a quoted version.
pub fn if_match(req: &HttpRequest) -> Result<i32, Problem> {
    let Some(raw) = req.headers().get(header::IF_MATCH) else {
        return Err(Problem::new(
            StatusCode::PRECONDITION_REQUIRED,
            "precondition_required",
            "this write needs `If-Match: \"<version>\"` with the version you read (the ETag)",
        ));
    };
    raw.to_str()
        .ok()
        .map(str::trim)
        .and_then(|v| v.strip_prefix('"')?.strip_suffix('"')?.parse::<i32>().ok())
        .filter(|v| *v > 0)
        .ok_or_else(|| {
            Problem::invalid_parameter(
                "If-Match",
                "must be the incident's ETag: a quoted version such as \"3\"",
            )
        })
}

fn stored(
    status: StatusCode,
    body: &impl serde::Serialize,
    location: Option<String>,
) -> Result<Stored, Problem> {
    let body = serde_json::to_value(body).map_err(|_| Problem::internal())?;
    Ok(Stored {
        status,
        etag: idempotency::etag_of(&body),
        body,
        location,
        replayed: false,
    })
}

fn written(status: StatusCode, w: &Written) -> Result<Stored, Problem> {
    let location = (status == StatusCode::CREATED).then(|| format!("/incident/{}", w.id));
    stored(status, w, location)
}

fn reply(s: Stored) -> HttpResponse {
    let mut res = HttpResponse::build(s.status);
    if let Some(etag) = s.etag {
        res.insert_header((header::ETAG, etag));
    }
    if let Some(location) = s.location {
        res.insert_header((header::LOCATION, location));
    }
    if s.replayed {
        res.insert_header(("Idempotent-Replayed", "true"));
    }
    res.json(s.body)
}

/// What every POST write reads before it touches the database, in this order: the caller's
/// profile (403), the body (413, 415, 400) and the `Idempotency-Key` (400). Incident writes
/// then read `If-Match` (428, 400).
fn accept<B: std::fmt::Debug>(
    user: &CurrentUser,
    profiles: &[Profile],
    req: &HttpRequest,
    body: Result<Json<B>, Problem>,
) -> Result<(B, Option<Key>), Problem> {
    user.require(profiles)?;
    let body = body?.0;
    let key = idempotency_key(req, user, &body)?;
    Ok((body, key))
}

/// Runs `write` in one transaction, once per idempotency key (a retry gets the stored
/// answer), and answers with what it stored.
async fn commit(
    state: &AppState,
    key: Option<Key>,
    write: impl AsyncFnOnce(&mut AsyncPgConnection) -> Result<Stored, Problem>,
) -> Reply {
    let mut conn = conn(state).await?;
    let stored = once(&mut conn, key, write).await?;
    Ok(reply(stored))
}

/// The request's `Idempotency-Key`, if any: 1 to 255 visible ASCII characters.
fn idempotency_key(
    req: &HttpRequest,
    user: &CurrentUser,
    request: impl std::fmt::Debug,
) -> Result<Option<Key>, Problem> {
    let Some(raw) = req.headers().get("idempotency-key") else {
        return Ok(None);
    };
    let key = raw
        .to_str()
        .ok()
        .filter(|k| (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| {
            Problem::invalid_parameter(
                "Idempotency-Key",
                "must be 1 to 255 visible ASCII characters (a UUID is ideal)",
            )
        })?;
    Ok(Some(Key::new(
        user.id,
        key.to_owned(),
        format!("{} {}", req.method(), req.path()),
        &format!("{request:?}"),
    )))
}

/// A body that must be `{}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// Collects every bad field, so the client fixes them all at once.
#[derive(Default)]
struct Check(Vec<FieldError>);

impl Check {
    fn fail(&mut self, field: &str, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_owned(),
            message: message.into(),
        });
    }

    fn text(&mut self, field: &str, value: &str, required: bool, max: usize) {
        let n = value.trim().chars().count();
        if required && n == 0 {
            self.fail(field, "must not be empty");
        } else if value.chars().count() > max {
            self.fail(field, format!("must be at most {max} characters"));
        } else if value
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        {
            // PostgreSQL's text cannot hold a NUL at all; the other control characters
            // would reach the screens as garbage. Line breaks and tabs are free text.
            self.fail(
                field,
                "must not contain control characters other than line breaks and tabs",
            );
        }
    }

    fn opt_text(&mut self, field: &str, value: Option<&str>, max: usize) {
        if let Some(v) = value {
            self.text(field, v, false, max);
        }
    }

    fn phone(&mut self, field: &str, value: &str) {
        let digits = value.chars().filter(char::is_ascii_digit).count();
        let allowed = value
            .chars()
            .all(|c| c.is_ascii_digit() || " +-().".contains(c));
        if !allowed || !(8..=15).contains(&digits) || value.chars().count() > 32 {
            self.fail(
                field,
                "must be a phone number: 8 to 15 digits, optionally with + - ( ) . or spaces",
            );
        }
    }

    fn one_of(&mut self, field: &str, value: Option<&str>, allowed: &[&str]) {
        if let Some(v) = value
            && !allowed.contains(&v)
        {
            self.fail(field, format!("must be one of {}", allowed.join(", ")));
        }
    }

    fn done(self) -> Result<(), Problem> {
        match self.0.as_slice() {
            [] => Ok(()),
            [one] => Err(Problem::invalid_payload(
                Some(one.field.clone()),
                one.message.clone(),
            )),
            many => Err(Problem::new(
                StatusCode::BAD_REQUEST,
                "invalid_payload",
                format!(
                    "body fields {}",
                    many.iter()
                        .map(|e| format!("`{}`: {}", e.field, e.message))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            )
            .with_errors(self.0)),
        }
    }
}

const PRIORITIES: &[&str] = &["low", "medium", "high", "critical"];
const SEXES: &[&str] = &["F", "M", "X"];
const NAME_MAX: usize = 200;
const NOTES_MAX: usize = 4000;

/// The Basic data form, plus optionally the Occurrence and Patient fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateIncident {
    pub caller_name: String,
    pub caller_phone: String,
    pub address: String,
    pub complaint: String,
    #[serde(default)]
    pub city: String,
    pub related_incident_id: Option<i64>,
    pub occurrence_type: Option<String>,
    /// `low`, `medium`, `high` or `critical`.
    pub priority: Option<String>,
    pub occurrence_notes: Option<String>,
    pub patient_name: Option<String>,
    pub patient_age: Option<i32>,
    /// `F`, `M` or `X`.
    pub patient_sex: Option<String>,
}

impl CreateIncident {
    fn into_fields(self) -> Result<Editable, Problem> {
        let e = Editable {
            caller_name: self.caller_name,
            caller_phone: self.caller_phone,
            address: self.address,
            city: self.city,
            complaint: self.complaint,
            related_incident_id: self.related_incident_id,
            occurrence_type: self.occurrence_type,
            priority: self.priority,
            occurrence_notes: self.occurrence_notes,
            patient_name: self.patient_name,
            patient_age: self.patient_age,
            patient_sex: self.patient_sex,
        };
        let mut check = Check::default();
        check_fields(&mut check, &e, |_| true);
        check.done()?;
        Ok(e)
    }
}

fn check_fields(check: &mut Check, e: &Editable, present: impl Fn(&str) -> bool) {
    let text = |check: &mut Check, f: &str, v: &str, req: bool, max: usize| {
        if present(f) {
            check.text(f, v, req, max);
        }
    };
    text(check, "caller_name", &e.caller_name, true, NAME_MAX);
    text(check, "address", &e.address, true, 300);
    text(check, "city", &e.city, false, 100);
    text(check, "complaint", &e.complaint, true, NOTES_MAX);
    if present("caller_phone") {
        check.phone("caller_phone", &e.caller_phone);
    }
    if present("occurrence_type") {
        check.opt_text("occurrence_type", e.occurrence_type.as_deref(), 100);
    }
    if present("occurrence_notes") {
        check.opt_text("occurrence_notes", e.occurrence_notes.as_deref(), NOTES_MAX);
    }
    if present("patient_name") {
        check.opt_text("patient_name", e.patient_name.as_deref(), NAME_MAX);
    }
    if present("priority") {
        check.one_of("priority", e.priority.as_deref(), PRIORITIES);
    }
    if present("patient_sex") {
        check.one_of("patient_sex", e.patient_sex.as_deref(), SEXES);
    }
    if present("patient_age") && e.patient_age.is_some_and(|a| !(0..=130).contains(&a)) {
        check.fail("patient_age", "must be between 0 and 130");
    }
}

/// `Some(None)` when the field is `null` (clear it), `None` when it is absent.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// Any subset of the editable fields; `null` clears an optional one.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchIncident {
    pub caller_name: Option<String>,
    pub caller_phone: Option<String>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub complaint: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i64>)]
    pub related_incident_id: Option<Option<i64>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub occurrence_type: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub priority: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub occurrence_notes: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub patient_name: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<i32>)]
    pub patient_age: Option<Option<i32>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub patient_sex: Option<Option<String>>,
}

impl PatchIncident {
    fn present(&self) -> Vec<&'static str> {
        let mut p = Vec::new();
        let mut add = |cond: bool, name: &'static str| {
            if cond {
                p.push(name);
            }
        };
        add(self.caller_name.is_some(), "caller_name");
        add(self.caller_phone.is_some(), "caller_phone");
        add(self.address.is_some(), "address");
        add(self.city.is_some(), "city");
        add(self.complaint.is_some(), "complaint");
        add(self.related_incident_id.is_some(), "related_incident_id");
        add(self.occurrence_type.is_some(), "occurrence_type");
        add(self.priority.is_some(), "priority");
        add(self.occurrence_notes.is_some(), "occurrence_notes");
        add(self.patient_name.is_some(), "patient_name");
        add(self.patient_age.is_some(), "patient_age");
        add(self.patient_sex.is_some(), "patient_sex");
        p
    }

    fn apply(self, e: &mut Editable) {
        fn set<T>(slot: &mut T, v: Option<T>) {
            if let Some(v) = v {
                *slot = v;
            }
        }
        set(&mut e.caller_name, self.caller_name);
        set(&mut e.caller_phone, self.caller_phone);
        set(&mut e.address, self.address);
        set(&mut e.city, self.city);
        set(&mut e.complaint, self.complaint);
        set(&mut e.related_incident_id, self.related_incident_id);
        set(&mut e.occurrence_type, self.occurrence_type);
        set(&mut e.priority, self.priority);
        set(&mut e.occurrence_notes, self.occurrence_notes);
        set(&mut e.patient_name, self.patient_name);
        set(&mut e.patient_age, self.patient_age);
        set(&mut e.patient_sex, self.patient_sex);
    }

    /// Validates the fields sent, on a scratch copy (the stored values are not judged).
    fn check(&self) -> Result<(), Problem> {
        let present = self.present();
        if present.is_empty() {
            return Err(Problem::invalid_payload(
                None,
                "send at least one field to change",
            ));
        }
        let mut scratch = Editable {
            caller_name: String::new(),
            caller_phone: String::new(),
            address: String::new(),
            city: String::new(),
            complaint: String::new(),
            related_incident_id: None,
            occurrence_type: None,
            priority: None,
            occurrence_notes: None,
            patient_name: None,
            patient_age: None,
            patient_sex: None,
        };
        let copy = PatchIncident {
            caller_name: self.caller_name.clone(),
            caller_phone: self.caller_phone.clone(),
            address: self.address.clone(),
            city: self.city.clone(),
            complaint: self.complaint.clone(),
            related_incident_id: self.related_incident_id,
            occurrence_type: self.occurrence_type.clone(),
            priority: self.priority.clone(),
            occurrence_notes: self.occurrence_notes.clone(),
            patient_name: self.patient_name.clone(),
            patient_age: self.patient_age,
            patient_sex: self.patient_sex.clone(),
        };
        copy.apply(&mut scratch);
        let mut check = Check::default();
        check_fields(&mut check, &scratch, |f| present.contains(&f));
        check.done()
    }
}

/// Create an incident from the Basic data form: `registering`, version 1.
#[utoipa::path(post, path = "/incident", tag = "writes", request_body = CreateIncident,
    params(("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 201, body = Written,
        headers(("ETag" = String), ("Location" = String)))))]
pub async fn create(
    state: web::Data<AppState>,
    user: CurrentUser,
    req: HttpRequest,
    body: Result<Json<CreateIncident>, Problem>,
) -> Reply {
    let (body, key) = accept(&user, TARM, &req, body)?;
    let fields = body.into_fields()?;
    commit(&state, key, async |c| {
        written(StatusCode::CREATED, &store::create(c, &user, fields).await?)
    })
    .await
}

/// Partial update of the Basic data, Occurrence and Patient forms.
#[utoipa::path(patch, path = "/incident/{id}", tag = "writes", request_body = PatchIncident,
    params(("id" = i64, Path), ("If-Match" = String, Header, description = "the ETag read")),
    responses((status = 200, body = Written, headers(("ETag" = String)))))]
pub async fn patch(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<PatchIncident>, Problem>,
) -> Reply {
    user.require(TARM_OR_REGULATOR)?;
    let body = body?;
    let expected = if_match(&req)?;
    body.0.check()?;
    commit(&state, None, async |c| {
        written(
            StatusCode::OK,
            &store::patch(c, &user, id.0, expected, |e| body.0.apply(e)).await?,
        )
    })
    .await
}

/// Hand the call to regulation: `registering` -> `awaiting_regulation`. Body `{}`.
#[utoipa::path(post, path = "/incident/{id}/submit", tag = "writes", request_body = Empty,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn submit(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<Empty>, Problem>,
) -> Reply {
    let (_, key) = accept(&user, TARM, &req, body)?;
    let expected = if_match(&req)?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::move_to(
                c,
                &user,
                id.0,
                expected,
                State::AwaitingRegulation,
                "submitted",
                None,
            )
            .await?,
        )
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelBody {
    /// Why the incident is cancelled (recorded in the history).
    pub reason: Option<String>,
}

/// Cancel an open incident (any open state -> `cancelled`).
#[utoipa::path(post, path = "/incident/{id}/cancel", tag = "writes", request_body = CancelBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn cancel(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<CancelBody>, Problem>,
) -> Reply {
    let (body, key) = accept(&user, TARM_OR_REGULATOR, &req, body)?;
    let expected = if_match(&req)?;
    let mut check = Check::default();
    check.opt_text("reason", body.reason.as_deref(), NOTES_MAX);
    check.done()?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::move_to(
                c,
                &user,
                id.0,
                expected,
                State::Cancelled,
                "cancelled",
                body.reason,
            )
            .await?,
        )
    })
    .await
}

/// Close as a prank call, recording the caller's phone. Body `{}`.
#[utoipa::path(post, path = "/incident/{id}/prank-call", tag = "writes", request_body = Empty,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn prank_call(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<Empty>, Problem>,
) -> Reply {
    let (_, key) = accept(&user, TARM_OR_REGULATOR, &req, body)?;
    let expected = if_match(&req)?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::prank_call(c, &user, id.0, expected).await?,
        )
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TechnicalDecisionBody {
    /// An active, not deleted technical decision action.
    pub action_id: i32,
    #[serde(default)]
    pub notes: String,
    /// The vehicle type asked for, when the decision sends one.
    pub mobile_unit_type_id: Option<i32>,
}

/// Record the regulator's decision: `awaiting_regulation` -> `regulated`.
#[utoipa::path(post, path = "/incident/{id}/technical-decision", tag = "writes",
    request_body = TechnicalDecisionBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn technical_decision(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<TechnicalDecisionBody>, Problem>,
) -> Reply {
    let (b, key) = accept(&user, REGULATOR, &req, body)?;
    let expected = if_match(&req)?;
    let mut check = Check::default();
    check.text("notes", &b.notes, false, NOTES_MAX);
    check.done()?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::technical_decision(
                c,
                &user,
                id.0,
                expected,
                b.action_id,
                b.mobile_unit_type_id,
                b.notes,
            )
            .await?,
        )
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendToBody {
    /// An active `MEDICO_REGULADOR` (see `GET /user/search`).
    pub user_id: i64,
}

/// Hand the incident to another regulating physician.
#[utoipa::path(post, path = "/incident/{id}/send-to", tag = "writes", request_body = SendToBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn send_to(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<SendToBody>, Problem>,
) -> Reply {
    let (body, key) = accept(&user, REGULATOR, &req, body)?;
    let expected = if_match(&req)?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::send_to(c, &user, id.0, expected, body.user_id).await?,
        )
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DispatchBody {
    /// An active unit with no dispatch that is not released.
    pub mobile_unit_id: i64,
}

/// Assign a mobile unit: `regulated` -> `dispatched` (or one more unit). 409 `unit_busy`.
#[utoipa::path(post, path = "/incident/{id}/dispatch", tag = "writes", request_body = DispatchBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 201, body = DispatchCreated, headers(("ETag" = String)))))]
pub async fn dispatch(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<DispatchBody>, Problem>,
) -> Reply {
    let (body, key) = accept(&user, FLEET, &req, body)?;
    let expected = if_match(&req)?;
    let unit = body.mobile_unit_id;
    commit(&state, key, async |c| {
        let d = store::dispatch_unit(c, &user, id.0, expected, unit).await?;
        stored(StatusCode::CREATED, &d, None)
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusBody {
    /// `en_route`, `on_scene`, `transporting`, `at_destination` or `released`.
    pub status: String,
}

/// One step of a unit. No `If-Match`: the order rule guards it.
#[utoipa::path(post, path = "/dispatch/{id}/status", tag = "writes", request_body = StatusBody,
    params(("id" = i64, Path, description = "dispatch id"),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = DispatchProgress)))]
pub async fn dispatch_status(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<StatusBody>, Problem>,
) -> Reply {
    let (body, key) = accept(&user, FLEET, &req, body)?;
    let to = Status::parse(&body.status)
        .filter(|s| *s != Status::Assigned)
        .ok_or_else(|| {
            Problem::invalid_payload(
                Some("status".to_owned()),
                "must be one of en_route, on_scene, transporting, at_destination, released",
            )
        })?;
    commit(&state, key, async |c| {
        let p: DispatchProgress = store::dispatch_status(c, &user, id.0, to).await?;
        stored(StatusCode::OK, &p, None)
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IntercurrenceBody {
    /// An active, not deleted intercurrence.
    pub intercurrence_id: i32,
    #[serde(default)]
    pub notes: String,
}

/// Record an intercurrence on the attendance.
#[utoipa::path(post, path = "/incident/{id}/intercurrence", tag = "writes",
    request_body = IntercurrenceBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn intercurrence(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<IntercurrenceBody>, Problem>,
) -> Reply {
    let (b, key) = accept(&user, FLEET, &req, body)?;
    let expected = if_match(&req)?;
    let mut check = Check::default();
    check.text("notes", &b.notes, false, NOTES_MAX);
    check.done()?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::intercurrence(c, &user, id.0, expected, b.intercurrence_id, b.notes).await?,
        )
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferBody {
    /// An active employee whose user is active.
    pub employee_id: i64,
}

/// "Transfer to" another employee.
#[utoipa::path(post, path = "/incident/{id}/transfer", tag = "writes", request_body = TransferBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn transfer(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<TransferBody>, Problem>,
) -> Reply {
    let (body, key) = accept(&user, FLEET, &req, body)?;
    let expected = if_match(&req)?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::transfer(c, &user, id.0, expected, body.employee_id).await?,
        )
    })
    .await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseBody {
    pub conclusion: String,
}

/// Close with a conclusion; 409 `unit_assigned` while a unit is not released.
#[utoipa::path(post, path = "/incident/{id}/close", tag = "writes", request_body = CloseBody,
    params(("id" = i64, Path), ("If-Match" = String, Header),
        ("Idempotency-Key" = Option<String>, Header, description = "makes a retry safe")),
    responses((status = 200, body = Written)))]
pub async fn close(
    state: web::Data<AppState>,
    user: CurrentUser,
    id: Path<i64>,
    req: HttpRequest,
    body: Result<Json<CloseBody>, Problem>,
) -> Reply {
    let (body, key) = accept(&user, REGULATOR, &req, body)?;
    let expected = if_match(&req)?;
    let mut check = Check::default();
    check.text("conclusion", &body.conclusion, true, NOTES_MAX);
    check.done()?;
    commit(&state, key, async |c| {
        written(
            StatusCode::OK,
            &store::close(c, &user, id.0, expected, body.conclusion).await?,
        )
    })
    .await
}
