//! The two JWTs this service verifies: the callback token `/callback/auth` issues to an
//! integration, and the admin token of a tenant's operator (docs/proposal-callback.md).

use common::auth::{JwtKeys, now_secs};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Lifetime of the JWT `/callback/auth` issues (docs/proposal-callback.md, "Routes").
pub const CALLBACK_TOKEN_TTL_SECS: i64 = 3600;

/// Claims of the JWT an insurer presents on its callbacks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallbackClaims {
    /// The integration id, as a decimal string.
    pub sub: String,
    pub tenant: String,
    pub insurer: String,
    pub iat: i64,
    pub exp: i64,
}

pub fn issue_callback_token(
    keys: &JwtKeys,
    integration_id: i64,
    tenant: &str,
    insurer: &str,
) -> Result<String, Error> {
    let now = now_secs();
    keys.issue(&CallbackClaims {
        sub: integration_id.to_string(),
        tenant: tenant.to_owned(),
        insurer: insurer.to_owned(),
        iat: now,
        exp: now + CALLBACK_TOKEN_TTL_SECS,
    })
    .map_err(|e| Error::Internal(format!("signing a token: {e}")))
}

/// Claims of an operator's token: `sub`, `tenant`, `role = "admin"`. This service only
/// verifies them; another system issues them (tests issue their own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdminClaims {
    pub sub: String,
    pub tenant: String,
    pub role: String,
    pub exp: i64,
    #[serde(default)]
    pub iat: i64,
}

#[cfg(any(test, feature = "test-support"))]
pub fn issue_admin_token(
    keys: &JwtKeys,
    sub: &str,
    tenant: &str,
    ttl_secs: i64,
) -> Result<String, Error> {
    let now = now_secs();
    keys.issue(&AdminClaims {
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

    #[test]
    fn a_callback_token_is_not_an_admin_token_and_back() {
        let keys = JwtKeys::new(&secrecy::SecretString::from(
            "0123456789abcdef0123456789abcdef",
        ));
        let cb = issue_callback_token(&keys, 7, "demo-a", "porto").unwrap();
        assert!(keys.verify::<AdminClaims>(&cb).is_err());
        let admin = issue_admin_token(&keys, "ops", "demo-a", 60).unwrap();
        assert!(keys.verify::<CallbackClaims>(&admin).is_err());
    }
}
