//! `GET /phone-credentials`: the caller's softphone account (docs/dispatch-telephony.md,
//! "Softphone credentials"), for the logged-in call taker or regulator: the login is the
//! token's user's, never the client's.

use actix_web::http::StatusCode;
use actix_web::web;
use common::Problem;

use crate::routes::extract::{Caller, TarmOrRegulator};
use crate::routes::{Reply, Routes, ok};
use crate::state::AppState;
use crate::store;
use crate::views::PhoneCredentials;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_phone_credentials, phone_credentials);
}

/// Short-lived SIP credentials of the caller's softphone (`<expiry>:<login>` and its HMAC
/// under the secret shared with the switch), with the SIP domain and WebSocket URL. Nothing
/// is stored: ask again before `expires_at`.
#[utoipa::path(get, path = "/phone-credentials", tag = "telephony",
    responses((status = 200, body = PhoneCredentials),
        (status = 503, description = "`telephony_not_configured`: PHONE_SECRET is not set")))]
pub async fn phone_credentials(state: web::Data<AppState>, user: Caller<TarmOrRegulator>) -> Reply {
    let Some(sip) = &state.telephony.sip else {
        return Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "telephony_not_configured",
            "this centre gives no softphone credentials: PHONE_SECRET is not set",
        )
        .into());
    };
    let conn = state.pool.get().await?;
    let Some(login) = store::users::login_of(&conn, user.id).await? else {
        return Err(Problem::not_found("the token's user does not exist").into());
    };
    let c = sip.credentials(&login, state.clock.now());
    ok(&PhoneCredentials {
        uri: format!("sip:{login}@{}", sip.domain),
        username: c.username,
        password: c.password,
        domain: sip.domain.clone(),
        ws_url: sip.ws_url.clone(),
        expires_at: c.expires_at,
    })
}
