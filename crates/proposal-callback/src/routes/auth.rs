//! `POST /callback/auth`: an integration's Basic token for a short-lived Bearer JWT.

use actix_web::{HttpRequest, HttpResponse, web};
use common::auth::authorization;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::basic::{same_hash, token_hash};
use crate::auth::jwt::{CALLBACK_TOKEN_TTL_SECS, issue_callback_token};
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
/// `Authorization: Basic <token>`, the token exactly as registered with the insurer. Repeated
/// failures from one client address answer 429 with `Retry-After`.
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
    let client = req.peer_addr().map(|a| a.ip());
    state
        .auth_limiter
        .check(client)
        .map_err(|retry_after_secs| Error::TooManyAttempts { retry_after_secs })?;
    let refused = |state: &AppState| {
        state.auth_limiter.record_failure(client);
        Error::Unauthorized("the Basic token is not valid")
    };
    let Some(presented) = authorization(&req, "Basic") else {
        return Err(refused(&state));
    };
    let hash = token_hash(presented);
    let mut conn = state.pool.get().await?;
    // Looked up by its SHA-256 (indexed); timing of that lookup tells nothing about the
    // token itself. The digest comparison below is constant time all the same.
    let owner = integrations::find_by_token_hash(&mut conn, &hash).await?;
    let Some(owner) = owner.filter(|o| same_hash(&o.token_hash, &hash)) else {
        return Err(refused(&state));
    };
    state.auth_limiter.record_success(client);
    let access_token = issue_callback_token(
        &state.keys,
        owner.integration_id,
        &owner.tenant_id,
        &owner.insurer,
    )?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(AccessToken {
            access_token,
            token_type: "Bearer",
            expires_in: CALLBACK_TOKEN_TTL_SECS,
        }))
}
