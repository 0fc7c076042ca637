//! Who is calling: the token's user, read through the replica's caches (the tokens already
//! verified, `token_cache`; the users, `user_cache`), so a user deactivated after the token was issued is refused at once.
//!
//! Two kinds of token are accepted (docs/dispatch-routes.md, "Authentication"):
//!
//! - the service's own HS256 tokens (`JWT_SECRET`), issued by the `token` command: bound to
//!   this service (`aud` = [`AUDIENCE`], required), `sub` = the user id in its canonical
//!   decimal form (`common::auth::id_claim`: `"02"`, `"+2"` are refused), living at most
//!   `JWT_MAX_LIFETIME` (`exp - iat`, default [`DEFAULT_MAX_LIFETIME`]), `iat` not in the
//!   future;
//! - when `JWT_JWKS_URL` is set, the identity provider's RS256/ES256 tokens (`JWT_ISSUER`,
//!   `JWT_AUDIENCE`), whose `JWT_USER_CLAIM` (default `preferred_username`) is a user's login.
//!
//! The extractor for [`CurrentUser`] is here.

use std::future::{Future, Ready, ready};
use std::pin::Pin;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use common::Problem;
use common::auth::idp::IdpConfig;
use common::auth::{JwtKeys, TokenVerifier, Verified, authorization, id_claim, now_secs};
use common::db::Pool;
use futures_util::future::Either;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use crate::domain::Refusal;
use crate::domain::user::UserStatus;
pub use crate::domain::user::{CurrentUser, Profile};
use crate::error::{Error, Result};
use crate::state::AppState;
use crate::store;
use crate::store::users::Caller;

/// The `aud` of this service's own tokens: a token issued for another service (say, the
/// callback tokens of proposal-callback) is refused even when signed with the same secret.
pub const AUDIENCE: &str = "dispatch-api";

/// The longest a token may live (`exp - iat`) unless `JWT_MAX_LIFETIME` says otherwise: one
/// 12-hour shift of a dispatch centre.
pub const DEFAULT_MAX_LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// Claims of a dispatch access token (`aud` and `iat` are set by [`issue_token`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    /// The user id, as a decimal string in its one canonical form (`common::auth::id_claim`).
    pub sub: String,
    pub exp: i64,
    pub iat: i64,
}

/// What the tokens need from the environment, read once at start (`crate::settings`).
#[derive(Debug, Clone)]
pub struct TokenSettings {
    /// `JWT_MAX_LIFETIME`: the longest `exp - iat` of any token, ours or the identity
    /// provider's (default [`DEFAULT_MAX_LIFETIME`]).
    pub max_lifetime: Duration,
    /// `JWT_JWKS_URL`, `JWT_ISSUER`, `JWT_AUDIENCE`, `JWT_USER_CLAIM`, ...: the identity
    /// provider, when there is one.
    pub idp: Option<IdpConfig>,
}

/// This service's HS256 keys: tokens bound to [`AUDIENCE`], living at most `max_lifetime`.
pub fn service_keys(secret: &SecretString, max_lifetime: Duration) -> JwtKeys {
    JwtKeys::new(secret, AUDIENCE, max_lifetime)
}

/// A token for `user_id` living `ttl`; refused when `ttl` is longer than the keys allow.
pub fn issue_token(keys: &JwtKeys, user_id: i64, ttl: Duration) -> anyhow::Result<String> {
    let now = now_secs();
    let ttl = i64::try_from(ttl.as_secs())?;
    Ok(keys.issue(&Claims {
        sub: user_id.to_string(),
        iat: now,
        exp: now + ttl,
    })?)
}

/// Who a verified token names.
enum Subject {
    /// The service's own token: a user id.
    Id(i64),
    /// The identity provider's token: a login.
    Login(String),
}

/// Who the token names and when it expires (`exp`, seconds since the epoch).
async fn subject(tokens: &TokenVerifier, token: &str) -> Result<(Subject, i64)> {
    match tokens
        .verify::<Claims>(token)
        .await
        .map_err(Problem::from)?
    {
        Verified::Local(claims) => {
            // Only the canonical spelling: `"02"` is not user 2 (401 naming `sub`).
            let id = id_claim("sub", &claims.sub).map_err(Problem::from)?;
            Ok((Subject::Id(id), claims.exp))
        }
        Verified::Idp(identity) => {
            // Verified present and numeric; a fractional `exp` is floored.
            let exp = identity
                .claims
                .get("exp")
                .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f.floor() as i64)));
            Ok((Subject::Login(identity.user), exp.unwrap_or_else(now_secs)))
        }
    }
}

impl CurrentUser {
    /// Verifies `token` (one of the service's own) and loads its user; 401 when either fails
    /// or the user is not active.
    pub async fn from_token(keys: &JwtKeys, pool: &Pool, token: &str) -> Result<CurrentUser> {
        let (Subject::Id(id), _) = subject(&TokenVerifier::new(keys.clone()), token).await? else {
            unreachable!("without an identity provider every token names a user id");
        };
        let conn = pool.get().await?;
        active(store::users::caller(&conn, id).await?)
    }
}

/// Verifies `token` and loads its user through the replica's user cache; 401 when the
/// token is refused, names no user, or names one that is not active.
pub async fn authenticate(state: &AppState, token: &str) -> Result<CurrentUser> {
    authenticate_with_expiry(state, token).await.map(|a| a.user)
}

/// Who `token` names and when it expires: from the tokens already verified
/// (`token_cache::VerifiedTokens`) when it was accepted
/// before, else verified in full (and remembered when it is one of the service's own).
async fn verified_subject(state: &AppState, token: &str) -> Result<(Subject, i64)> {
    if let Some((id, exp)) = state.verified_tokens.get(token, now_secs()) {
        return Ok((Subject::Id(id), exp));
    }
    let verified = subject(&state.tokens, token).await?;
    if let (Subject::Id(id), exp) = verified {
        state.verified_tokens.put(token, id, exp, now_secs());
    }
    Ok(verified)
}

/// A caller and the end of its token's life.
#[derive(Debug, Clone)]
pub struct Authenticated {
    pub user: CurrentUser,
    /// The token's `exp` (seconds since the epoch), whichever kind of token it is: what a
    /// socket opened with it must not outlive.
    pub expires_at: i64,
}

/// As [`authenticate`], with when the token expires.
pub async fn authenticate_with_expiry(state: &AppState, token: &str) -> Result<Authenticated> {
    let (subject, expires_at) = verified_subject(state, token).await?;
    let user = match subject {
        Subject::Id(id) => active_user(state, id).await?,
        Subject::Login(login) => match state.users.get_by_login(&login) {
            Some(user) => user,
            None => {
                let conn = state.pool.get().await?;
                let user = active(store::users::caller_by_login(&conn, &login).await?)?;
                state.users.put_with_login(&user, &login);
                user
            }
        },
    };
    Ok(Authenticated { user, expires_at })
}

/// The user `id` when active, through the replica's user cache (so a user deactivated a
/// moment ago is refused at once); 401 when it is not active or does not exist.
pub async fn active_user(state: &AppState, id: i64) -> Result<CurrentUser> {
    if let Some(user) = state.users.get(id) {
        return Ok(user);
    }
    let conn = state.pool.get().await?;
    let user = active(store::users::caller(&conn, id).await?)?;
    state.users.put(&user);
    Ok(user)
}

fn active(caller: Option<Caller>) -> Result<CurrentUser> {
    match caller {
        Some(c) if UserStatus::is_active(&c.status) => Ok(CurrentUser {
            id: c.id,
            descriptive_name: c.descriptive_name,
            profile: c.profile,
        }),
        Some(_) => Err(Refusal::Unauthorized("this user is not active").into()),
        None => Err(Refusal::Unauthorized("this user does not exist").into()),
    }
}

/// The caller without waiting, when its token was accepted before (`token_cache`) and its
/// user is in the user cache: what [`authenticate`] finds then, without the database.
fn remembered(state: &AppState, token: &str) -> Option<CurrentUser> {
    let (id, _) = state.verified_tokens.get(token, now_secs())?;
    state.users.get(id)
}

impl FromRequest for CurrentUser {
    type Error = Error;
    type Future = Either<Ready<Result<Self>>, Pin<Box<dyn Future<Output = Result<Self>>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>();
        let token = authorization(req, "Bearer");
        if let (Some(state), Some(token)) = (state, token)
            && let Some(user) = remembered(state, token)
        {
            return Either::Left(ready(Ok(user)));
        }
        let state = state.cloned();
        let token = token.map(str::to_owned);
        Either::Right(Box::pin(async move {
            let state = state.ok_or_else(|| Error::Internal("no AppState".to_owned()))?;
            let token = token.ok_or_else(|| {
                Problem::unauthorized("an `Authorization: Bearer <token>` header is required")
            })?;
            authenticate(&state, &token).await
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_tokens_carry_our_audience_and_a_bounded_lifetime() {
        let keys = service_keys(
            &SecretString::from("q3JvZx0m5yq9cQ2Yt4mS7nKpV8wZ1bXe4uHj6LdRf0A="),
            DEFAULT_MAX_LIFETIME,
        );
        let token = issue_token(&keys, 7, Duration::from_secs(8 * 3600)).unwrap();
        let claims = keys.verify_claims(&token).unwrap();
        assert_eq!(claims["aud"], AUDIENCE);
        assert_eq!(claims["sub"], "7");
        let err = issue_token(&keys, 7, Duration::from_secs(13 * 3600)).unwrap_err();
        assert!(err.to_string().contains("43200 s"), "{err}");
    }
}
