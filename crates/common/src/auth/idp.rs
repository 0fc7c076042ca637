//! Tokens of an identity provider (an OpenID Connect provider such as Keycloak): RS256 or
//! ES256, signed with keys the provider publishes as a JSON Web Key Set at `JWT_JWKS_URL`.
//!
//! - The keys are fetched once at start ([`IdpVerifier::warm_up`]) or on the first token, kept
//!   in memory, and fetched again when a token names a key (`kid`) we do not have: that is how
//!   a key rotation reaches us. Those fetches are rate-limited to one per
//!   [`IdpConfig::min_refresh_interval`], so a flood of tokens with made-up `kid`s cannot make
//!   us hammer the provider; a set older than [`IdpConfig::cache_ttl`] is fetched again, so a
//!   key the provider withdrew stops being accepted.
//! - Every fetch has a timeout; a provider that is down or hangs gives
//!   [`TokenError::ProviderUnavailable`] (503), never a hung request.
//! - `iss` must be one string equal to `JWT_ISSUER` (an array is refused, even one holding it)
//!   and `aud` must include `JWT_AUDIENCE` (both required), with the same time rules as the
//!   service's own tokens (see [`crate::auth`]); a header carrying `crit` is refused
//!   ([`super::refuse_critical_extensions`]).
//! - The verified claims are returned as they are ([`IdpVerifier::verify`]) or with the user
//!   named by the configured claim (`JWT_USER_CLAIM`, default `preferred_username`,
//!   [`IdpVerifier::verify_identity`]); mapping that name to a user is the service's job.
//!   `sub` and the user claim must hold no control character (see [`super::identity_claim`]).
//!
//! Nothing here reads the environment: `crate::settings::IdpSettings` reads it once, at start.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::{TokenError, base_validation, check_lifetime, check_subject, identity_claim, now_secs};
use crate::config::ConfigError;

/// The algorithms accepted from an identity provider. HS256 never is: it is the services'
/// own (see [`super::TokenVerifier`]), and accepting it here would let a published key be
/// used as an HMAC secret.
pub const IDP_ALGORITHMS: [Algorithm; 2] = [Algorithm::RS256, Algorithm::ES256];

/// The largest key set we read, in bytes; real ones are a few KiB.
const MAX_JWKS_BYTES: usize = 256 * 1024;

/// `JWT_USER_CLAIM` when unset.
pub const DEFAULT_USER_CLAIM: &str = "preferred_username";
/// `JWT_JWKS_TIMEOUT` when unset.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// `JWT_JWKS_MIN_REFRESH` when unset.
pub const DEFAULT_MIN_REFRESH: Duration = Duration::from_secs(10);
/// `JWT_JWKS_CACHE_TTL` when unset.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(3600);

/// Where the identity provider's keys are and what its tokens must say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdpConfig {
    /// `JWT_JWKS_URL`: the provider's JWKS (`https://`, or `http://` to a loopback address).
    pub jwks_url: reqwest::Url,
    /// `JWT_ISSUER`: the `iss` its tokens carry.
    pub issuer: String,
    /// `JWT_AUDIENCE`: the `aud` its tokens must include (this service's client id).
    pub audience: String,
    /// `JWT_USER_CLAIM`: the claim naming the user (default [`DEFAULT_USER_CLAIM`]).
    pub user_claim: String,
    /// `JWT_MAX_LIFETIME`: the longest `exp - iat` accepted (each service's default).
    pub max_lifetime: Duration,
    /// `JWT_JWKS_TIMEOUT`: the limit on one fetch of the keys, connection included (default 5 s).
    pub fetch_timeout: Duration,
    /// `JWT_JWKS_MIN_REFRESH`: the least time between two fetches (default 10 s).
    pub min_refresh_interval: Duration,
    /// `JWT_JWKS_CACHE_TTL`: how long a fetched set is used before it is fetched again
    /// (default 1 h).
    pub cache_ttl: Duration,
}

impl IdpConfig {
    /// A configuration with the defaults above, accepting tokens that live at most
    /// `max_lifetime` (each service has its own; see `crate::settings::IdpSettings`). Fails,
    /// naming `JWT_JWKS_URL`, when the URL is not `https://` (or `http://` to a loopback
    /// address).
    pub fn new(
        jwks_url: &str,
        issuer: &str,
        audience: &str,
        max_lifetime: Duration,
    ) -> Result<Self, ConfigError> {
        Ok(Self {
            jwks_url: jwks_url_from(jwks_url)?,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            user_claim: DEFAULT_USER_CLAIM.into(),
            max_lifetime,
            fetch_timeout: DEFAULT_FETCH_TIMEOUT,
            min_refresh_interval: DEFAULT_MIN_REFRESH,
            cache_ttl: DEFAULT_CACHE_TTL,
        })
    }
}

fn jwks_url_from(raw: &str) -> Result<reqwest::Url, ConfigError> {
    let invalid = |reason: String| ConfigError::Invalid {
        name: "JWT_JWKS_URL".into(),
        reason,
    };
    let url = reqwest::Url::parse(raw.trim()).map_err(|e| invalid(format!("{raw:?}: {e}")))?;
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(invalid(format!(
            "{raw:?}: the keys must be fetched over https:// (http:// only to a loopback address)"
        ))),
    }
}

/// Who an identity provider's token names, and everything it says.
#[derive(Debug, Clone, PartialEq)]
pub struct IdpIdentity {
    /// The value of the configured user claim (for example the `preferred_username`).
    pub user: String,
    /// All the token's claims, verified.
    pub claims: Map<String, Value>,
}

/// Verifies an identity provider's tokens. Cheap to clone: clones share the key cache.
#[derive(Clone)]
pub struct IdpVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    config: IdpConfig,
    client: reqwest::Client,
    validations: HashMap<Algorithm, Validation>,
    keys: RwLock<KeySet>,
    refresh: Mutex<RefreshState>,
}

/// The keys of the last successful fetch, by `kid`.
#[derive(Default)]
struct KeySet {
    keys: Arc<HashMap<String, Arc<CachedKey>>>,
    fetched_at: Option<Instant>,
}

struct CachedKey {
    key: DecodingKey,
    /// The only algorithm this key verifies (from its type, or its `alg` when published).
    alg: Algorithm,
}

#[derive(Default)]
struct RefreshState {
    last_attempt: Option<Instant>,
    /// Whether the last attempt failed (the provider was unreachable or answered nonsense).
    last_failed: bool,
}

impl std::fmt::Debug for IdpVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdpVerifier")
            .field("jwks_url", &self.inner.config.jwks_url.as_str())
            .field("issuer", &self.inner.config.issuer)
            .field("audience", &self.inner.config.audience)
            .finish_non_exhaustive()
    }
}

/// Why the key set could not be fetched; logged, never shown to a client.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("requesting the key set failed: {0}")]
    Request(#[from] reqwest::Error),
    #[error("the key set answered HTTP {0}")]
    Status(reqwest::StatusCode),
    #[error("the key set is larger than {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    #[error("the key set is not a JWKS: {0}")]
    NotJwks(String),
    #[error("the key set holds no usable RS256 or ES256 key with a `kid`")]
    NoUsableKey,
}

impl IdpVerifier {
    /// A verifier with an empty cache; nothing is fetched until [`IdpVerifier::warm_up`] or
    /// the first token.
    pub fn new(config: IdpConfig) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.fetch_timeout)
            .timeout(config.fetch_timeout)
            .redirect(reqwest::redirect::Policy::limited(3))
            .user_agent(concat!("common/", env!("CARGO_PKG_VERSION"), " (jwks)"))
            .build()?;
        let validations = IDP_ALGORITHMS
            .iter()
            .map(|&alg| {
                let mut v = base_validation(alg);
                v.set_audience(&[&config.audience]);
                v.set_issuer(&[&config.issuer]);
                v.set_required_spec_claims(&["exp", "aud", "iss"]);
                (alg, v)
            })
            .collect();
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                client,
                validations,
                keys: RwLock::new(KeySet::default()),
                refresh: Mutex::new(RefreshState::default()),
            }),
        })
    }

    pub fn config(&self) -> &IdpConfig {
        &self.inner.config
    }

    /// Fetches the keys now (at start, so the first request does not wait for them) and
    /// answers how many usable keys the set holds. A failure is worth a warning, not a
    /// refusal to start: the keys are fetched again on the first token.
    pub async fn warm_up(&self) -> Result<usize, FetchError> {
        let mut state = self.inner.refresh.lock().await;
        self.refresh_locked(&mut state).await?;
        Ok(self.snapshot().0.len())
    }

    /// Verifies an identity provider's token and returns its claims as `C`.
    pub async fn verify<C: DeserializeOwned>(&self, token: &str) -> Result<C, TokenError> {
        let claims = self.verify_claims(token).await?;
        serde_json::from_value(Value::Object(claims)).map_err(|_| TokenError::Invalid)
    }

    /// Verifies an identity provider's token and names its user by the configured claim
    /// ([`TokenError::MissingClaim`] when the claim is absent or not a non-empty string,
    /// [`TokenError::MalformedClaim`] when it holds a control character, see
    /// [`super::identity_claim`]).
    pub async fn verify_identity(&self, token: &str) -> Result<IdpIdentity, TokenError> {
        let claims = self.verify_claims(token).await?;
        let name = &self.inner.config.user_claim;
        let user = claims
            .get(name)
            .and_then(Value::as_str)
            .map(|user| identity_claim(name, user))
            .transpose()?
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .ok_or_else(|| TokenError::MissingClaim(name.clone()))?
            .to_owned();
        Ok(IdpIdentity { user, claims })
    }

    /// Verifies an identity provider's token and returns its claims.
    pub async fn verify_claims(&self, token: &str) -> Result<Map<String, Value>, TokenError> {
        super::refuse_critical_extensions(token)?;
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Invalid)?;
        if !IDP_ALGORITHMS.contains(&header.alg) {
            return Err(TokenError::UnsupportedAlgorithm {
                alg: format!("{:?}", header.alg),
                reason: " from the identity provider (RS256 or ES256 only)",
            });
        }
        let kid = header.kid.as_deref().ok_or(TokenError::NoKeyId)?;
        let key = self.key(kid).await?;
        if key.alg != header.alg {
            return Err(TokenError::Invalid);
        }
        let validation = &self.inner.validations[&header.alg];
        let claims = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, validation)
            .map(|data| data.claims)
            .map_err(|e| super::token_error(&e, Some(&self.inner.config.audience)))?;
        // jsonwebtoken also takes an `iss` array holding the issuer; RFC 7519 makes `iss` one
        // StringOrURI, and a token claiming several issuers is not the provider's.
        match claims.get("iss") {
            Some(Value::String(iss)) if *iss == self.inner.config.issuer => {}
            Some(Value::String(_)) => return Err(TokenError::WrongIssuer),
            _ => return Err(TokenError::MalformedClaim("iss".into())),
        }
        check_lifetime(&claims, Some(self.inner.config.max_lifetime), now_secs())?;
        check_subject(&claims)?;
        Ok(claims)
    }

    fn snapshot(&self) -> (Arc<HashMap<String, Arc<CachedKey>>>, Option<Instant>) {
        let set = self.inner.keys.read().unwrap_or_else(|e| e.into_inner());
        (set.keys.clone(), set.fetched_at)
    }

    /// The key named `kid`, fetching the set again when it is unknown (at most once per
    /// `min_refresh_interval`) or when the cached set is older than `cache_ttl`.
    async fn key(&self, kid: &str) -> Result<Arc<CachedKey>, TokenError> {
        let (keys, fetched_at) = self.snapshot();
        if let Some(key) = keys.get(kid) {
            let stale = fetched_at.is_some_and(|t| t.elapsed() >= self.inner.config.cache_ttl);
            if stale {
                // One request refreshes; the others go on with the keys they have, and so
                // does this one if the provider does not answer.
                if let Ok(mut state) = self.inner.refresh.try_lock()
                    && self.may_fetch(&state)
                    && self.refresh_locked(&mut state).await.is_ok()
                {
                    return self
                        .snapshot()
                        .0
                        .get(kid)
                        .cloned()
                        .ok_or(TokenError::UnknownKey);
                }
            }
            return Ok(key.clone());
        }
        let mut state = self.inner.refresh.lock().await;
        // Another request may have fetched the set while this one waited.
        if let Some(key) = self.snapshot().0.get(kid) {
            return Ok(key.clone());
        }
        if !self.may_fetch(&state) {
            return Err(if state.last_failed {
                TokenError::ProviderUnavailable
            } else {
                TokenError::UnknownKey
            });
        }
        match self.refresh_locked(&mut state).await {
            Ok(()) => self
                .snapshot()
                .0
                .get(kid)
                .cloned()
                .ok_or(TokenError::UnknownKey),
            Err(_) => Err(TokenError::ProviderUnavailable),
        }
    }

    fn may_fetch(&self, state: &RefreshState) -> bool {
        state
            .last_attempt
            .is_none_or(|t| t.elapsed() >= self.inner.config.min_refresh_interval)
    }

    /// Fetches the set and replaces the cache; the caller holds the refresh lock.
    async fn refresh_locked(&self, state: &mut RefreshState) -> Result<(), FetchError> {
        state.last_attempt = Some(Instant::now());
        let result = self.fetch().await;
        state.last_failed = result.is_err();
        match result {
            Ok(keys) => {
                tracing::info!(
                    url = %self.inner.config.jwks_url,
                    keys = keys.len(),
                    "fetched the identity provider's keys"
                );
                let mut set = self.inner.keys.write().unwrap_or_else(|e| e.into_inner());
                *set = KeySet {
                    keys: Arc::new(keys),
                    fetched_at: Some(Instant::now()),
                };
                Ok(())
            }
            Err(e) => {
                tracing::warn!(
                    url = %self.inner.config.jwks_url,
                    error = %e,
                    "fetching the identity provider's keys failed"
                );
                Err(e)
            }
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, Arc<CachedKey>>, FetchError> {
        let mut response = self
            .inner
            .client
            .get(self.inner.config.jwks_url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await?;
        if !response.status().is_success() {
            return Err(FetchError::Status(response.status()));
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_JWKS_BYTES as u64)
        {
            return Err(FetchError::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        parse_jwks(&body)
    }
}

/// The usable keys of a JWKS document, by `kid`. Keys we cannot use (other types or curves,
/// `use: enc`, no `kid`, malformed) are skipped one by one, so one odd key does not cost the
/// others.
fn parse_jwks(body: &[u8]) -> Result<HashMap<String, Arc<CachedKey>>, FetchError> {
    #[derive(serde::Deserialize)]
    struct RawSet {
        keys: Vec<Value>,
    }
    let raw: RawSet =
        serde_json::from_slice(body).map_err(|e| FetchError::NotJwks(e.to_string()))?;
    let mut keys = HashMap::new();
    for value in raw.keys {
        let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
            continue;
        };
        let Some(kid) = jwk.common.key_id.clone() else {
            continue;
        };
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            continue;
        }
        let (alg, key_alg) = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => (Algorithm::RS256, KeyAlgorithm::RS256),
            AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => {
                (Algorithm::ES256, KeyAlgorithm::ES256)
            }
            _ => continue,
        };
        // A key published for another algorithm (RS512, say) is not one we verify with.
        if jwk
            .common
            .key_algorithm
            .is_some_and(|published| published != key_alg)
        {
            continue;
        }
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        keys.insert(kid, Arc::new(CachedKey { key, alg }));
    }
    if keys.is_empty() {
        return Err(FetchError::NoUsableKey);
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_keys_are_skipped_one_by_one() {
        let body = serde_json::json!({"keys": [
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "EC", "kid": "enc", "use": "enc", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "kid": "ec", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "RSA", "kid": "rs512", "alg": "RS512", "n": "sXch", "e": "AQAB"},
            {"kty": "weird"},
        ]});
        let keys = parse_jwks(body.to_string().as_bytes()).unwrap();
        assert_eq!(keys.keys().collect::<Vec<_>>(), ["ec"]);
        assert_eq!(keys["ec"].alg, Algorithm::ES256);
        assert!(matches!(
            parse_jwks(br#"{"keys":[{"kty":"oct","kid":"a","k":"c2VjcmV0"}]}"#),
            Err(FetchError::NoUsableKey)
        ));
        assert!(matches!(parse_jwks(b"<html>"), Err(FetchError::NotJwks(_))));
    }
}
