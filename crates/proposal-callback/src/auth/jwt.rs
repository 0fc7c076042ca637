//! Who is calling: an insurer's integration (callback JWT) or a tenant's admin (admin JWT),
//! each an extractor, so a handler cannot forget the check. Also the Basic tokens' hashing.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use common::auth::{JwtKeys, authorization, now_secs};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::Error;
use crate::startup::AppState;

/// Lifetime of the JWT `/callback/auth` issues (CONTRACT §2).
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

/// The integration a callback's Bearer token was issued to.
#[derive(Debug, Clone)]
pub struct InsurerIntegration {
    pub integration_id: i64,
    pub tenant: String,
    pub insurer: String,
}

impl InsurerIntegration {
    /// 403 unless the token belongs to the tenant and insurer the path names.
    pub fn require(&self, tenant: &str, insurer: &str) -> Result<(), Error> {
        if self.tenant == tenant && self.insurer == insurer {
            Ok(())
        } else {
            Err(Error::Forbidden(
                "this token belongs to another tenant or insurer",
            ))
        }
    }
}

fn state(req: &HttpRequest) -> Result<&web::Data<AppState>, Error> {
    req.app_data::<web::Data<AppState>>()
        .ok_or_else(|| Error::Internal("AppState is not registered".into()))
}

impl FromRequest for InsurerIntegration {
    type Error = Error;
    type Future = std::future::Ready<Result<Self, Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(Self::from_callback_token(req))
    }
}

/// Claims of an operator's token (CONTRACT §2: `sub`, `tenant`, `role = "admin"`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdminClaims {
    pub sub: String,
    pub tenant: String,
    pub role: String,
    pub exp: i64,
    #[serde(default)]
    pub iat: i64,
}

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

/// A tenant's administrator; every admin route is scoped to `tenant`.
#[derive(Debug, Clone)]
pub struct TenantAdmin {
    pub sub: String,
    pub tenant: String,
}

impl FromRequest for TenantAdmin {
    type Error = Error;
    type Future = std::future::Ready<Result<Self, Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(Self::from_admin_token(req))
    }
}

impl InsurerIntegration {
    fn from_callback_token(req: &HttpRequest) -> Result<Self, Error> {
        let token = authorization(req, "Bearer").ok_or(Error::Unauthorized(
            "a Bearer token from /callback/auth is required",
        ))?;
        let claims: CallbackClaims = state(req)?
            .keys
            .verify(token)
            .map_err(|_| Error::Unauthorized("the token is not valid or has expired"))?;
        let integration_id = claims
            .sub
            .parse()
            .map_err(|_| Error::Unauthorized("the token is not a callback token"))?;
        Ok(InsurerIntegration {
            integration_id,
            tenant: claims.tenant,
            insurer: claims.insurer,
        })
    }
}

impl TenantAdmin {
    fn from_admin_token(req: &HttpRequest) -> Result<Self, Error> {
        let token = authorization(req, "Bearer")
            .ok_or(Error::Unauthorized("an admin Bearer token is required"))?;
        let claims: AdminClaims = state(req)?
            .keys
            .verify(token)
            .map_err(|_| Error::Unauthorized("the token is not valid or has expired"))?;
        if claims.role != "admin" {
            return Err(Error::Forbidden("this route needs role admin"));
        }
        Ok(TenantAdmin {
            sub: claims.sub,
            tenant: claims.tenant,
        })
    }
}

/// A new Basic token: 256 random bits, hex. Shown once; only [`token_hash`] is stored.
pub fn generate_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    crate::proposal::hex(&bytes)
}

pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Constant-time comparison of two digests.
pub fn same_hash(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hashes_compare() {
        let (a, b) = (generate_token(), generate_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(same_hash(&token_hash(&a), &token_hash(&a)));
        assert!(!same_hash(&token_hash(&a), &token_hash(&b)));
        assert!(!same_hash(&token_hash(&a), &[]));
    }

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
