//! Who is calling: the token's user, read through the replica's user cache (see
//! `user_cache`), so a user deactivated after the token was issued is refused at once.
//! Tokens are issued by the `token` command; the extractor for [`CurrentUser`] is here.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use common::Problem;
use common::auth::{JwtKeys, authorization, now_secs};
use common::db::Pool;
use serde::{Deserialize, Serialize};

use crate::domain::Refusal;
pub use crate::domain::user::{ACTIVE, CurrentUser, Profile};
use crate::error::{Error, Result};
use crate::state::AppState;
use crate::store;

/// Claims of a dispatch access token.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// The user id, as a decimal string.
    pub sub: String,
    pub exp: i64,
    pub iat: i64,
}

pub fn issue_token(keys: &JwtKeys, user_id: i64, ttl: Duration) -> anyhow::Result<String> {
    let now = now_secs();
    let ttl = i64::try_from(ttl.as_secs())?;
    Ok(keys.issue(&Claims {
        sub: user_id.to_string(),
        iat: now,
        exp: now + ttl,
    })?)
}

fn verify(keys: &JwtKeys, token: &str) -> Result<i64> {
    let claims: Claims = keys.verify(token).map_err(Problem::from)?;
    claims
        .sub
        .parse()
        .map_err(|_| Problem::unauthorized("the token's subject is not a user id").into())
}

impl CurrentUser {
    /// Verifies `token` and loads its user; 401 when either fails or the user is not active.
    pub async fn from_token(keys: &JwtKeys, pool: &Pool, token: &str) -> Result<CurrentUser> {
        let id = verify(keys, token)?;
        load(pool, id).await
    }
}

/// As [`CurrentUser::from_token`], through the replica's user cache.
pub async fn authenticate(state: &AppState, token: &str) -> Result<CurrentUser> {
    let id = verify(&state.keys, token)?;
    if let Some(user) = state.users.get(id) {
        return Ok(user);
    }
    let user = load(&state.pool, id).await?;
    state.users.put(&user);
    Ok(user)
}

async fn load(pool: &Pool, id: i64) -> Result<CurrentUser> {
    let conn = pool.get().await?;
    match store::users::caller(&conn, id).await? {
        Some(c) if c.status == ACTIVE => Ok(CurrentUser {
            id: c.id,
            descriptive_name: c.descriptive_name,
            profile: c.profile,
        }),
        Some(_) => Err(Refusal::Unauthorized("this user is not active").into()),
        None => Err(Refusal::Unauthorized("this user does not exist").into()),
    }
}

impl FromRequest for CurrentUser {
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let token = authorization(req, "Bearer").map(str::to_owned);
        Box::pin(async move {
            let state = state.ok_or_else(|| Error::Internal("no AppState".to_owned()))?;
            let token = token.ok_or_else(|| {
                Problem::unauthorized("an `Authorization: Bearer <token>` header is required")
            })?;
            authenticate(&state, &token).await
        })
    }
}
