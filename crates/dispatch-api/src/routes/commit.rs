//! How a write answers: its body is judged, then it runs in one transaction, once per
//! idempotency key (a retry gets the stored answer), and the answer carries its `ETag`
//! (and `Location` when it created an incident).

use actix_web::HttpResponse;
use actix_web::http::{StatusCode, header};
use chrono::{DateTime, Utc};
use diesel_async::AsyncPgConnection;

use super::Reply;
use super::extract::{Body, Judge, Post, Profiles, Versioned};
use crate::error::{Error, Result};
use crate::state::AppState;
use crate::store::idempotency::{self, Key, Stored, once};
use crate::store::writes::{Author, Written};
use crate::views::{Allocation, DispatchCreated, DispatchProgress, ManagedUnit, PositionRecorded};

/// What a write answers: never patient data (a write's answer is not recorded).
pub trait Answer: crate::patient_data::NoPatientData {
    /// `Location` of a created resource, if the answer is one.
    fn location(&self, _status: StatusCode) -> Option<String> {
        None
    }
}

impl Answer for Written {
    fn location(&self, status: StatusCode) -> Option<String> {
        (status == StatusCode::CREATED).then(|| format!("/incident/{}", self.id))
    }
}

impl Answer for DispatchCreated {}
impl Answer for DispatchProgress {}
impl Answer for PositionRecorded {}
impl Answer for ManagedUnit {}
impl Answer for Allocation {}

impl<P: Profiles, B: Judge> Post<P, B> {
    /// A POST without `If-Match`.
    pub async fn commit<T: Answer>(
        self,
        state: &AppState,
        status: StatusCode,
        write: impl AsyncFnOnce(&mut AsyncPgConnection, &Author<'_>, B::Judged) -> Result<T>,
    ) -> Reply {
        let Post {
            user, body, key, ..
        } = self;
        let judged = body.judge()?;
        run(state, key, status, async |c, at| {
            write(c, &Author::new(&user, at), judged).await
        })
        .await
    }
}

impl<P: Profiles, B: Judge> Versioned<Post<P, B>> {
    /// A POST on an incident: `expected` is its `If-Match` version.
    pub async fn commit<T: Answer>(
        self,
        state: &AppState,
        status: StatusCode,
        write: impl AsyncFnOnce(&mut AsyncPgConnection, &Author<'_>, B::Judged, i32) -> Result<T>,
    ) -> Reply {
        let expected = self.expected;
        self.write
            .commit(state, status, async |c, user, judged| {
                write(c, user, judged, expected).await
            })
            .await
    }
}

impl<P: Profiles, B: Judge> Versioned<Body<P, B>> {
    /// A PATCH: no idempotency key (a PATCH is idempotent by itself).
    pub async fn commit<T: Answer>(
        self,
        state: &AppState,
        write: impl AsyncFnOnce(&mut AsyncPgConnection, &Author<'_>, B::Judged, i32) -> Result<T>,
    ) -> Reply {
        let (expected, user) = (self.expected, self.write.user);
        let judged = self.write.body.judge()?;
        run(state, None, StatusCode::OK, async |c, at| {
            write(c, &Author::new(&user, at), judged, expected).await
        })
        .await
    }
}

async fn run<T: Answer>(
    state: &AppState,
    key: Option<Key>,
    status: StatusCode,
    write: impl AsyncFnOnce(&mut AsyncPgConnection, DateTime<Utc>) -> Result<T>,
) -> Reply {
    let mut conn = state.pool.get().await?;
    // The write's one instant, read from the service's clock once a connection is in hand.
    // The incident's version, not this time, orders its history (docs/dispatch-realtime.md).
    let at = state.clock.now();
    let stored = once(&mut conn, key, async |c| {
        let answer = write(c, at).await?;
        stored(status, &answer)
    })
    .await?;
    Ok(reply(stored))
}

fn stored<T: Answer>(status: StatusCode, answer: &T) -> Result<Stored> {
    let body = serde_json::to_value(answer).map_err(|e| Error::Internal(e.to_string()))?;
    Ok(Stored {
        status: status.as_u16(),
        etag: idempotency::etag_of(&body),
        body,
        location: answer.location(status),
        replayed: false,
    })
}

/// The stored JSON of an `Answer`: a view without patient data.
#[allow(clippy::disallowed_methods)]
fn reply(s: Stored) -> HttpResponse {
    let mut res = HttpResponse::build(StatusCode::from_u16(s.status).unwrap_or(StatusCode::OK));
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
