//! Who may use the admin routes (docs/proposal-callback.md, "Operators"): a tenant admin
//! token this service signed (`proposal-callback token --tenant T --admin`, HS256, audience
//! `proposal-callback-admin`) or, when an identity provider is configured, a token of the
//! tenant's staff signed by it (RS256/ES256, its keys fetched from `JWT_JWKS_URL`, checked by
//! `common::auth::idp`). The provider's token names the tenant in a claim
//! (`JWT_TENANT_CLAIM`, default `tenant`) and must carry the admin role in another
//! (`JWT_ROLES_CLAIM`, default `roles`, a dotted path such as `realm_access.roles` for
//! Keycloak; `JWT_ADMIN_ROLE`, default `admin`).

use std::sync::Arc;

use common::Problem;
use common::auth::idp::{IdpIdentity, IdpVerifier};
use common::auth::{JwtKeys, TokenError, TokenVerifier, Verified, identity_claim};
use serde_json::{Map, Value};

use crate::auth::jwt::AdminClaims;
use crate::error::Error;

/// A tenant's administrator; every admin route is scoped to `tenant`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admin {
    /// Who: the token's `sub`, or the provider's user claim.
    pub sub: String,
    pub tenant: String,
}

/// Where the provider's token says who the tenant is and whether its holder is an admin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaffClaims {
    /// `JWT_TENANT_CLAIM`: the claim holding the tenant id (dsTenantId).
    pub tenant_claim: String,
    /// `JWT_ROLES_CLAIM`: the claim holding the roles (a string or an array of strings); dots
    /// walk into objects.
    pub roles_claim: String,
    /// `JWT_ADMIN_ROLE`: the role that opens the admin routes.
    pub admin_role: String,
}

/// `JWT_TENANT_CLAIM` when unset.
pub const DEFAULT_TENANT_CLAIM: &str = "tenant";
/// `JWT_ROLES_CLAIM` when unset.
pub const DEFAULT_ROLES_CLAIM: &str = "roles";
/// `JWT_ADMIN_ROLE` when unset.
pub const DEFAULT_ADMIN_ROLE: &str = "admin";

impl Default for StaffClaims {
    fn default() -> Self {
        Self {
            tenant_claim: DEFAULT_TENANT_CLAIM.into(),
            roles_claim: DEFAULT_ROLES_CLAIM.into(),
            admin_role: DEFAULT_ADMIN_ROLE.into(),
        }
    }
}

impl StaffClaims {
    /// The admin a verified provider token names: 401 when its tenant claim holds a control
    /// character (a malformed token, as for `sub`), 403 when it names no valid tenant or lacks
    /// the admin role.
    pub fn admin(&self, identity: &IdpIdentity) -> Result<Admin, Refusal> {
        let tenant = match claim(&identity.claims, &self.tenant_claim) {
            Some(Value::String(t)) if valid_tenant(t) => t.clone(),
            Some(Value::String(t)) if identity_claim(&self.tenant_claim, t).is_err() => {
                return Err(Refusal::Token(TokenError::MalformedClaim(
                    self.tenant_claim.clone(),
                )));
            }
            _ => {
                return Err(Refusal::Forbidden(
                    "the token names no tenant this service knows how to read",
                ));
            }
        };
        let is_admin = match claim(&identity.claims, &self.roles_claim) {
            Some(Value::String(role)) => role == &self.admin_role,
            Some(Value::Array(roles)) => roles.iter().any(|r| r.as_str() == Some(&self.admin_role)),
            _ => false,
        };
        if !is_admin {
            return Err(Refusal::Forbidden(NOT_ADMIN));
        }
        Ok(Admin {
            sub: identity.user.clone(),
            tenant,
        })
    }
}

const NOT_ADMIN: &str = "this route needs role admin";

/// Why a token does not open the admin routes; [`Error`] answers it (401, 403 or 503), the
/// console says it in Portuguese.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not a valid admin token: the rule it breaks (expired, another audience, ...).
    Token(TokenError),
    /// A valid token that does not make its holder a tenant's admin.
    Forbidden(&'static str),
    /// A bug: a provider token verified without the claims that read it.
    Internal(&'static str),
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Token(e) => Error::Problem(Problem::from(e)),
            Refusal::Forbidden(why) => Error::Forbidden(why),
            Refusal::Internal(why) => Error::Internal(why.into()),
        }
    }
}

/// A claim by dotted path (`realm_access.roles`).
fn claim<'a>(claims: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut value = claims.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    Some(value)
}

/// A tenant id as the callback URL has it: `[A-Za-z0-9_-]{1,64}`.
fn valid_tenant(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Verifies admin tokens: this service's own and, when configured, the provider's. Cheap to
/// clone.
#[derive(Clone, Debug)]
pub struct AdminTokens {
    verifier: TokenVerifier,
    staff: Option<Arc<StaffClaims>>,
}

impl AdminTokens {
    /// Only this service's admin tokens (`keys` bound to the admin audience).
    pub fn new(keys: JwtKeys) -> Self {
        Self {
            verifier: TokenVerifier::new(keys),
            staff: None,
        }
    }

    /// The provider's staff tokens too.
    pub fn with_idp(mut self, idp: IdpVerifier, staff: StaffClaims) -> Self {
        self.verifier = self.verifier.with_idp(idp);
        self.staff = Some(Arc::new(staff));
        self
    }

    pub fn idp(&self) -> Option<&IdpVerifier> {
        self.verifier.idp()
    }

    /// The admin `token` is for: 401 naming the rule it breaks, 403 without the admin role,
    /// 503 when the provider's keys cannot be fetched.
    pub async fn admin(&self, token: &str) -> Result<Admin, Error> {
        self.check(token).await.map_err(Error::from)
    }

    /// The admin `token` is for, or why it is refused (the console words each reason). A
    /// tenant holding a control character is a malformed token (401), as `sub` is (checked
    /// by `common::auth`): it would fail every query, or forge a log line.
    pub async fn check(&self, token: &str) -> Result<Admin, Refusal> {
        self.check_with_expiry(token).await.map(|(admin, _)| admin)
    }

    /// As [`AdminTokens::check`], with when the token expires (`exp`, seconds since the
    /// epoch): what a console session opened with it must not outlive.
    pub async fn check_with_expiry(&self, token: &str) -> Result<(Admin, i64), Refusal> {
        match self.verifier.verify::<AdminClaims>(token).await {
            Ok(Verified::Local(claims)) => {
                // The tenant exactly as the callback URL spells it: no control character, no
                // case folded or space trimmed anywhere after this (`Demo-A` is not `demo-a`).
                if !valid_tenant(&claims.tenant) {
                    return Err(Refusal::Token(TokenError::MalformedClaim("tenant".into())));
                }
                if claims.role != "admin" {
                    return Err(Refusal::Forbidden(NOT_ADMIN));
                }
                Ok((
                    Admin {
                        sub: claims.sub,
                        tenant: claims.tenant,
                    },
                    claims.exp,
                ))
            }
            Ok(Verified::Idp(identity)) => match &self.staff {
                Some(staff) => {
                    // Verified present and numeric; a fractional `exp` is floored.
                    let exp = identity
                        .claims
                        .get("exp")
                        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f.floor() as i64)));
                    let exp = exp.ok_or(Refusal::Internal("a provider token without exp"))?;
                    Ok((staff.admin(&identity)?, exp))
                }
                None => Err(Refusal::Internal(
                    "a provider token verified without staff claims",
                )),
            },
            Err(e @ TokenError::ProviderUnavailable) => {
                tracing::warn!(error = %e, "admin token: identity provider unavailable");
                Err(Refusal::Token(e))
            }
            Err(e) => Err(Refusal::Token(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn identity(claims: Value) -> IdpIdentity {
        IdpIdentity {
            user: "maria".into(),
            claims: claims.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn the_tenant_and_the_role_come_from_the_configured_claims() {
        let staff = StaffClaims::default();
        assert_eq!(
            staff
                .admin(&identity(
                    json!({"tenant": "demo-a", "roles": ["viewer", "admin"]})
                ))
                .unwrap(),
            Admin {
                sub: "maria".into(),
                tenant: "demo-a".into()
            }
        );
        assert!(
            staff
                .admin(&identity(json!({"tenant": "demo-a", "roles": "admin"})))
                .is_ok()
        );
        for claims in [
            json!({"tenant": "demo-a", "roles": ["viewer"]}),
            json!({"tenant": "demo-a"}),
            json!({"roles": ["admin"]}),
            json!({"tenant": "demo a", "roles": ["admin"]}),
            json!({"tenant": 7, "roles": ["admin"]}),
        ] {
            assert!(
                matches!(
                    staff.admin(&identity(claims.clone())),
                    Err(Refusal::Forbidden(_))
                ),
                "{claims}"
            );
        }
    }
}
