//! The two JWTs this service verifies: the callback token `/callback/auth` issues to an
//! integration, and the admin token of a tenant's operator (docs/proposal-callback.md,
//! "Authentication"). Each kind has its own audience, so neither passes for the other, and
//! another service (dispatch-api, audience `dispatch-api`) refuses both even when it was given
//! the same secret.

use std::time::Duration;

use common::auth::{JwtKeys, now_secs};
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use crate::domain::insurer::Insurer;
use crate::error::Error;

/// `aud` of the callback tokens `/callback/auth` issues.
pub const CALLBACK_AUDIENCE: &str = "proposal-callback";
/// `aud` of the operators' admin tokens.
pub const ADMIN_AUDIENCE: &str = "proposal-callback-admin";

/// The longest any token of this service may live (`exp - iat`), callback and admin tokens
/// alike, and, unless `JWT_MAX_LIFETIME` says otherwise, the identity provider's staff
/// tokens (`crate::settings`).
pub const DEFAULT_MAX_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// The service's keys: callback tokens (audience [`CALLBACK_AUDIENCE`]), living at most
/// [`DEFAULT_MAX_LIFETIME`]. The admin keys are derived from them ([`admin_keys`]).
pub fn service_keys(secret: &SecretString) -> JwtKeys {
    JwtKeys::new(secret, CALLBACK_AUDIENCE, DEFAULT_MAX_LIFETIME)
}

/// The same secret, for admin tokens (audience [`ADMIN_AUDIENCE`]).
pub fn admin_keys(keys: &JwtKeys) -> JwtKeys {
    keys.with_audience(ADMIN_AUDIENCE)
}

/// Lifetime of the JWT `/callback/auth` issues (docs/proposal-callback.md, "Routes").
pub const CALLBACK_TOKEN_TTL_SECS: i64 = 3600;

/// Claims of the JWT an insurer presents on its callbacks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallbackClaims {
    /// The integration id, as a decimal string.
    pub sub: String,
    pub tenant: String,
    pub insurer: Insurer,
    pub iat: i64,
    pub exp: i64,
}

pub fn issue_callback_token(
    keys: &JwtKeys,
    integration_id: i64,
    tenant: &str,
    insurer: Insurer,
) -> Result<String, Error> {
    let now = now_secs();
    keys.issue(&CallbackClaims {
        sub: integration_id.to_string(),
        tenant: tenant.to_owned(),
        insurer,
        iat: now,
        exp: now + CALLBACK_TOKEN_TTL_SECS,
    })
    .map_err(|e| Error::Internal(format!("signing a token: {e}")))
}

/// Claims of an operator's token: `sub`, `tenant`, `role = "admin"`. Issued by
/// `proposal-callback token --tenant T --admin` ([`issue_admin_token`]); a tenant whose staff
/// log in through an identity provider may use its tokens instead (see `routes::extract`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdminClaims {
    pub sub: String,
    pub tenant: String,
    pub role: String,
    pub exp: i64,
    #[serde(default)]
    pub iat: i64,
}

/// The longest an admin token may live: what the admin keys accept
/// ([`DEFAULT_MAX_LIFETIME`], 24 h).
pub const ADMIN_TOKEN_MAX_TTL_SECS: i64 = DEFAULT_MAX_LIFETIME.as_secs() as i64;

/// An admin token signed with `keys`' secret, for [`ADMIN_AUDIENCE`] whatever audience
/// `keys` were built for. A lifetime over [`ADMIN_TOKEN_MAX_TTL_SECS`] is refused (the
/// service would refuse the token).
pub fn issue_admin_token(
    keys: &JwtKeys,
    sub: &str,
    tenant: &str,
    ttl_secs: i64,
) -> Result<String, Error> {
    let now = now_secs();
    admin_keys(keys)
        .issue(&AdminClaims {
            sub: sub.to_owned(),
            tenant: tenant.to_owned(),
            role: "admin".to_owned(),
            iat: now,
            exp: now + ttl_secs,
        })
        .map_err(|e| Error::Internal(format!("signing a token: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn a_callback_token_is_not_an_admin_token_and_back() {
        let keys = service_keys(&SecretString::from(SECRET));
        let cb = issue_callback_token(&keys, 7, "demo-a", Insurer::Porto).unwrap();
        assert!(admin_keys(&keys).verify::<AdminClaims>(&cb).is_err());
        assert!(keys.verify::<CallbackClaims>(&cb).is_ok());
        let admin = issue_admin_token(&keys, "ops", "demo-a", 60).unwrap();
        assert!(keys.verify::<CallbackClaims>(&admin).is_err());
        assert!(admin_keys(&keys).verify::<AdminClaims>(&admin).is_ok());
    }

    /// A token carrying both kinds of claims is still only what its audience says.
    #[test]
    fn the_audience_decides_the_kind() {
        let keys = service_keys(&SecretString::from(SECRET));
        let both = serde_json::json!({
            "sub": "7", "tenant": "demo-a", "insurer": "porto", "role": "admin",
            "iat": now_secs(), "exp": now_secs() + 60,
        });
        let as_callback = keys.issue(&both).unwrap();
        assert!(
            admin_keys(&keys)
                .verify::<AdminClaims>(&as_callback)
                .is_err()
        );
        let as_admin = admin_keys(&keys).issue(&both).unwrap();
        assert!(keys.verify::<CallbackClaims>(&as_admin).is_err());
    }

    /// dispatch-api binds its tokens to `dispatch-api`: on a shared secret it refuses ours.
    #[test]
    fn another_service_refuses_both_kinds_on_a_shared_secret() {
        let secret = SecretString::from(SECRET);
        let keys = service_keys(&secret);
        let dispatch = JwtKeys::new(&secret, "dispatch-api", DEFAULT_MAX_LIFETIME);
        let cb = issue_callback_token(&keys, 1, "demo-a", Insurer::Porto).unwrap();
        let admin = issue_admin_token(&keys, "1", "demo-a", 60).unwrap();
        for token in [cb, admin] {
            assert!(matches!(
                dispatch.verify::<serde_json::Value>(&token),
                Err(common::auth::TokenError::WrongAudience { .. })
            ));
        }
    }
}
