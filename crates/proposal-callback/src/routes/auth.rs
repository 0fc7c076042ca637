//! `POST /callback/auth`: an integration's Basic token for a short-lived Bearer JWT.

use actix_web::{HttpRequest, HttpResponse, web};
use common::auth::authorization;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::jwt::{CALLBACK_TOKEN_TTL_SECS, issue_callback_token};
use crate::domain::basic_token::{same_hash, token_hash};
use crate::error::Error;
use crate::state::AppState;
use crate::store::integrations;

#[derive(Debug, Serialize, ToSchema)]
pub struct AccessToken {
    pub access_token: String,
    #[schema(example = "Bearer")]
    pub token_type: &'static str,
    #[schema(example = 3600)]
    pub expires_in: i64,
}

/// Exchange the integration's registered Basic token for a JWT valid 3600 s.
///
/// `Authorization: Basic <token>`, the token exactly as registered with the insurer. After 10
/// failures within 60 s from one client (the TCP peer, or behind a proxy listed in
/// `TRUSTED_PROXIES` the address it forwards), that client is answered 429 with `Retry-After`
/// until the 60 s are over, counted across replicas; a success does not reset the count.
#[utoipa::path(
    post,
    path = "/callback/auth",
    tag = "callback",
    security(("basic" = [])),
    responses(
        (status = 200, body = AccessToken),
        (status = 401, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
        (status = 429, body = common::problem::ProblemDocument, content_type = "application/problem+json", description = "too many failures from this address; see Retry-After"),
        (status = 503, body = common::problem::ProblemDocument, content_type = "application/problem+json"),
    )
)]
pub async fn token(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Error> {
    let forwarded_for = req
        .headers()
        .get_all("x-forwarded-for")
        // A value that is not text cannot be read: the walk stops at the proxy that sent it.
        .map(|v| v.to_str().unwrap_or("unreadable"))
        .collect::<Vec<_>>();
    let client = state
        .auth_limiter
        .client(req.peer_addr().map(|a| a.ip()), forwarded_for.into_iter());
    let mut conn = state.pool.get().await?;
    state
        .auth_limiter
        .check(&mut conn, &client)
        .await?
        .map_err(|retry_after_secs| Error::TooManyAttempts { retry_after_secs })?;
    let owner = match authorization(&req, "Basic") {
        Some(presented) => {
            let hash = token_hash(presented);
            // Looked up by its SHA-256 (indexed); timing of that lookup tells nothing about
            // the token itself. The digest comparison below is constant time all the same.
            integrations::find_by_token_hash(&mut conn, &hash)
                .await?
                .filter(|o| same_hash(&o.token_hash, &hash))
        }
        None => None,
    };
    // A success leaves the client's earlier failures counted: only the window ends them.
    let Some(owner) = owner else {
        state
            .auth_limiter
            .record_failure(&mut conn, &client)
            .await?;
        return Err(Error::Unauthorized("the Basic token is not valid"));
    };
    drop(conn);
    let access_token = issue_callback_token(
        &state.keys,
        owner.integration_id,
        &owner.tenant_id,
        owner.insurer,
    )?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(AccessToken {
            access_token,
            token_type: "Bearer",
            expires_in: CALLBACK_TOKEN_TTL_SECS,
        }))
}
