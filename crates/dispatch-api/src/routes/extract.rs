//! The typed extractors every handler is built from: the caller with the profile the route
//! needs ([`Caller`]), a write's body and `Idempotency-Key` ([`Body`], [`Post`]; the body's
//! own rules are its [`Judge`]) and the incident's `If-Match` ([`Versioned`]). Each reads
//! what it needs in the order the writes promise (docs/dispatch-realtime.md, "Writes"): the
//! caller's profile (403), the body (413, 415, 400), the `Idempotency-Key` (400), then
//! `If-Match` (428, 400).

use std::future::Future;
use std::marker::PhantomData;
use std::ops::Deref;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::{StatusCode, header};
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest};
use common::extract::{BodyLimit, DEFAULT_BODY_LIMIT, misfit, parse_json, read_body, require_json};
use common::{FieldError, Problem};
use serde::de::DeserializeOwned;

use crate::domain::Refusal;
use crate::domain::refusal::FieldFault;
use crate::domain::user::{CurrentUser, Profile, may};
use crate::error::{Error, Result};
use crate::store::idempotency::Key;

type Extracting<T> = Pin<Box<dyn Future<Output = Result<T>>>>;

/// A set of profiles, named by a type so a handler's signature says who may call it.
pub trait Profiles: 'static {
    const ALLOWED: &'static [Profile];
}

macro_rules! profiles {
    ($($(#[$doc:meta])* $name:ident = $set:path;)+) => {$(
        $(#[$doc])*
        pub struct $name;
        impl Profiles for $name {
            const ALLOWED: &'static [Profile] = $set;
        }
    )+};
}

profiles! {
    /// Any profile that may read incidents.
    Reader = may::READ;
    Fleet = may::FLEET;
    Regulator = may::REGULATOR;
    Tarm = may::TARM;
    FleetOrRegulator = may::FLEET_OR_REGULATOR;
    RegulatorOrTarm = may::REGULATOR_OR_TARM;
    TarmOrRegulator = may::TARM_OR_REGULATOR;
    /// An incident's response times: the administrator, regulators, fleet operators.
    TimesReader = may::TIMES;
    /// The centre's reports: the administrator (its manager) and regulators.
    Manager = may::REPORTS;
    Admin = may::ADMIN;
    FleetOrAdmin = may::FLEET_OR_ADMIN;
    Locator = may::LOCATE;
}

/// The authenticated caller, refused (403) unless its profile is one of `P`.
pub struct Caller<P>(pub CurrentUser, PhantomData<P>);

impl<P> Deref for Caller<P> {
    type Target = CurrentUser;

    fn deref(&self) -> &CurrentUser {
        &self.0
    }
}

impl<P: Profiles> FromRequest for Caller<P> {
    type Error = Error;
    type Future = Extracting<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let user = CurrentUser::from_request(req, payload);
        Box::pin(async move {
            let user = user.await?;
            user.require(P::ALLOWED)?;
            Ok(Caller(user, PhantomData))
        })
    }
}

/// A body's own rules, judged after every header is read and before the database is
/// touched: what the write receives is the judged value.
pub trait Judge: Sized {
    type Judged;
    fn judge(self) -> Result<Self::Judged, Refusal>;
}

/// A write's caller (one of `P`) and its JSON body `B`, read in that order.
pub struct Body<P, B> {
    pub user: CurrentUser,
    pub body: B,
    /// The body as sent, for the idempotency fingerprint.
    raw: Bytes,
    _profiles: PhantomData<P>,
}

impl<P: Profiles, B: DeserializeOwned + Judge + 'static> FromRequest for Body<P, B> {
    type Error = Error;
    type Future = Extracting<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let caller = Caller::<P>::from_request(req, payload);
        let limit = req
            .app_data::<BodyLimit>()
            .map_or(DEFAULT_BODY_LIMIT, |l| l.0);
        let is_json = require_json(req);
        let raw = read_body(req, payload.take(), limit);
        Box::pin(async move {
            let Caller(user, _) = caller.await?;
            is_json?;
            let raw = raw.await?;
            let body = parse_body(&raw)?;
            Ok(Body {
                user,
                body,
                raw,
                _profiles: PhantomData,
            })
        })
    }
}

/// A write's body as `B`. One that does not fit `B` (a field missing, of the wrong type,
/// unknown) is 400 `invalid_payload` naming every such field and, beside them, every field
/// that fits but that `B`'s own rules ([`Judge`]) refuse, all in one `errors` list in the
/// order of `B`'s fields: the client fixes the whole form at once. A body that fits is judged
/// later, after the headers, as every write promises (docs/dispatch-realtime.md, "Writes").
/// A body that is not JSON, or not an object, names no field.
fn parse_body<B: DeserializeOwned + Judge>(raw: &[u8]) -> Result<B> {
    let first = match parse_json::<B>(raw) {
        Ok(body) => return Ok(body),
        Err(problem) => problem,
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(raw) else {
        return Err(first.into());
    };
    let mut misfit = misfit::<B>(&value);
    if misfit.faults.is_empty() {
        // What the strict reading refused is nothing a field can be blamed for (a key given
        // twice, say): its own answer stands.
        return Err(first.into());
    }
    let judged = match misfit.stand_in.take().map(Judge::judge) {
        Some(Err(Refusal::InvalidFields(faults))) => faults,
        _ => Vec::new(),
    };
    let every = misfit.and(judged.into_iter().map(|f| FieldError {
        field: f.field,
        message: f.message,
    }));
    let faults = every
        .into_iter()
        .map(|f| FieldFault {
            field: f.field,
            message: f.message,
        })
        .collect();
    Err(Refusal::InvalidFields(faults).into())
}

/// A POST write: its [`Body`] and, when sent, its `Idempotency-Key`.
pub struct Post<P, B> {
    pub user: CurrentUser,
    pub body: B,
    pub key: Option<Key>,
    _profiles: PhantomData<P>,
}

impl<P: Profiles, B: DeserializeOwned + Judge + 'static> FromRequest for Post<P, B> {
    type Error = Error;
    type Future = Extracting<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = Body::<P, B>::from_request(req, payload);
        let header = req.headers().get("idempotency-key").cloned();
        let route = format!("{} {}", req.method(), req.path());
        Box::pin(async move {
            let Body {
                user, body, raw, ..
            } = body.await?;
            let key = match header {
                None => None,
                Some(raw_key) => Some(Key::new(user.id, idempotency_key(&raw_key)?, route, &raw)),
            };
            Ok(Post {
                user,
                body,
                key,
                _profiles: PhantomData,
            })
        })
    }
}

/// An `Idempotency-Key`: 1 to 255 visible ASCII characters.
fn idempotency_key(raw: &header::HeaderValue) -> Result<String> {
    raw.to_str()
        .ok()
        .filter(|k| (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_owned)
        .ok_or_else(|| {
            Problem::invalid_parameter(
                "Idempotency-Key",
                "must be 1 to 255 visible ASCII characters (a UUID is ideal)",
            )
            .into()
        })
}

/// An incident write `T` and the version its `If-Match: "<version>"` names, read after `T`:
/// 428 without it, 400 when it is not a quoted version.
pub struct Versioned<T> {
    pub write: T,
    pub expected: i32,
}

impl<T: FromRequest<Error = Error> + 'static> FromRequest for Versioned<T> {
    type Error = Error;
    type Future = Extracting<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let write = T::from_request(req, payload);
        let expected = if_match(req);
        Box::pin(async move {
            let write = write.await?;
            Ok(Versioned {
                write,
                expected: expected?,
            })
        })
    }
}

fn if_match(req: &HttpRequest) -> Result<i32> {
    let Some(raw) = req.headers().get(header::IF_MATCH) else {
        return Err(Problem::new(
            StatusCode::PRECONDITION_REQUIRED,
            "precondition_required",
            "this write needs `If-Match: \"<version>\"` with the version you read (the ETag)",
        )
        .into());
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
            .into()
        })
}
