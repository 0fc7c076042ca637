//! One call for every token a service accepts: its own HS256 tokens and, when configured, its
//! identity provider's RS256/ES256 tokens.

use jsonwebtoken::Algorithm;
use serde::de::DeserializeOwned;

use super::idp::{IDP_ALGORITHMS, IdpIdentity, IdpVerifier};
use super::{JwtKeys, TokenError};

/// What a verified token is: one of the service's own (with its claims as the service
/// defines them) or one of the identity provider's (with the user its configured claim
/// names, which the service maps to one of its users).
#[derive(Debug, Clone, PartialEq)]
pub enum Verified<C> {
    Local(C),
    Idp(IdpIdentity),
}

/// Verifies a service's own HS256 tokens with its [`JwtKeys`] and, when an identity provider
/// is configured, RS256/ES256 tokens with its [`IdpVerifier`]. The header's `alg` chooses:
/// HS256 is always the service's own (never checked against the provider's keys), RS256 and
/// ES256 always the provider's. Cheap to clone.
///
/// ```no_run
/// # async fn demo(keys: common::auth::JwtKeys, token: &str) -> Result<(), common::Problem> {
/// use common::auth::{TokenVerifier, Verified, idp::{IdpConfig, IdpVerifier}};
/// #[derive(serde::Deserialize)]
/// struct Claims { sub: String }
///
/// let mut verifier = TokenVerifier::new(keys);
/// # let config: Option<IdpConfig> = None; // from `common::settings::IdpSettings`
/// if let Some(config) = config {
///     verifier = verifier.with_idp(IdpVerifier::new(config).expect("HTTP client"));
/// }
/// match verifier.verify::<Claims>(token).await? {
///     Verified::Local(claims) => { /* claims.sub is a user id */ }
///     Verified::Idp(identity) => { /* identity.user is, say, the login */ }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct TokenVerifier {
    local: JwtKeys,
    idp: Option<IdpVerifier>,
}

impl TokenVerifier {
    /// Only the service's own tokens.
    pub fn new(local: JwtKeys) -> Self {
        Self { local, idp: None }
    }

    /// The identity provider's tokens too.
    pub fn with_idp(mut self, idp: IdpVerifier) -> Self {
        self.idp = Some(idp);
        self
    }

    pub fn local(&self) -> &JwtKeys {
        &self.local
    }

    pub fn idp(&self) -> Option<&IdpVerifier> {
        self.idp.as_ref()
    }

    /// Verifies `token` by the rules of whoever signed it.
    pub async fn verify<C: DeserializeOwned>(
        &self,
        token: &str,
    ) -> Result<Verified<C>, TokenError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Invalid)?;
        match (header.alg, &self.idp) {
            (Algorithm::HS256, _) => self.local.verify(token).map(Verified::Local),
            (alg, Some(idp)) if IDP_ALGORITHMS.contains(&alg) => {
                idp.verify_identity(token).await.map(Verified::Idp)
            }
            (alg, None) if IDP_ALGORITHMS.contains(&alg) => Err(TokenError::UnsupportedAlgorithm {
                alg: format!("{alg:?}"),
                reason: ": no identity provider is configured",
            }),
            (alg, _) => Err(TokenError::UnsupportedAlgorithm {
                alg: format!("{alg:?}"),
                reason: "",
            }),
        }
    }
}
