//! Tokens: the HS256 tokens a service issues and verifies itself, the tokens of an identity
//! provider verified against its published keys (JWKS), and the checks `serve` runs on its
//! signing secret. The claim types belong to each service.
//!
//! The rules (docs/dispatch-routes.md "Authentication", docs/proposal-callback.md):
//!
//! - A token is bound to the service it was issued for: its `aud` is required and must be
//!   that service's name (or, for an identity provider's token, the configured
//!   `JWT_AUDIENCE`), so a token of one service is refused by the other even when both were
//!   given the same secret. Build such keys with [`JwtKeys::new`].
//! - `exp` is required; `nbf` is honoured; the clocks may drift by [`LEEWAY_SECS`].
//! - A token lives at most a bounded time (`exp - iat`, each service's maximum), so a token
//!   dated to the year 9999 is refused; a token without `iat` is
//!   refused whenever a maximum lifetime applies, and an `iat` in the future is refused.
//! - A claim that holds an id (a user's, an integration's) is read only in its canonical
//!   decimal form ([`id_claim`]): `"02"`, `"+2"` or `" 2"` is a malformed token, not user 2.
//! - Claims naming who calls (`sub`, an identity provider's user claim, a service's tenant
//!   claim) hold no control character ([`identity_claim`]): a NUL would fail the query that
//!   looks the caller up, a line break would forge a log line. Such a token is malformed.
//! - A token whose header carries `crit` is refused: RFC 7515 section 4.1.11 says a verifier must
//!   refuse one naming an extension it does not understand, and we understand none
//!   ([`refuse_critical_extensions`]).
//! - Each refusal is a [`TokenError`] whose message says which rule failed and nothing
//!   secret; it converts into a 401 `unauthorized` problem (503 `unavailable` when the
//!   identity provider cannot be reached).
//!
//! The pieces: [`JwtKeys`] (HS256, in `keys.rs`), [`idp::IdpVerifier`] (RS256/ES256 by JWKS, configured by
//! [`idp::IdpConfig`]), [`TokenVerifier`] (one call for both), [`check_secret`] (refuses
//! short and placeholder secrets at start).

pub mod idp;
mod keys;
mod secret;
mod verifier;

use std::time::Duration;

use actix_web::HttpRequest;
use actix_web::http::header;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use crate::Problem;

pub use keys::JwtKeys;
pub use secret::{MIN_SECRET_BYTES, PLACEHOLDER_SECRETS, check_secret};
pub use verifier::{TokenVerifier, Verified};

/// How far the issuer's clock and ours may disagree, in seconds, for `exp`, `nbf` and `iat`.
pub const LEEWAY_SECS: u64 = 5;

/// Why a token was refused. The message is meant for the client: it names the rule that
/// failed and never the secret, the expected signature or the token itself.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token is not valid")]
    Invalid,
    /// A required claim (`aud`, `exp`, `iat`, `iss`, or the claim naming the user) is absent.
    #[error("the token has no `{0}` claim")]
    MissingClaim(String),
    /// A claim is present but not of the type the rules need (a number for times).
    #[error("the token's `{0}` claim is malformed")]
    MalformedClaim(String),
    /// `aud` names another service (or another identity provider client).
    #[error("the token is meant for another audience than `{expected}`")]
    WrongAudience { expected: String },
    /// `iss` is not the configured identity provider.
    #[error("the token was not issued by the configured identity provider")]
    WrongIssuer,
    #[error("the token lives longer than the {max_secs} s allowed (`exp` - `iat`)")]
    LifetimeTooLong { max_secs: u64 },
    #[error("the token was issued in the future (`iat`)")]
    IssuedInFuture,
    /// The header's `alg` is not one this service accepts (or needs an identity provider
    /// that is not configured).
    #[error("tokens signed with {alg} are not accepted{reason}")]
    UnsupportedAlgorithm { alg: String, reason: &'static str },
    /// An identity provider's token names no key (`kid` absent from its header).
    #[error("the token's header names no key (`kid`)")]
    NoKeyId,
    /// The header carries `crit`: extensions the verifier must understand, and this service
    /// understands none (RFC 7515 section 4.1.11).
    #[error(
        "the token's header names critical extensions (`crit`) this service does not understand"
    )]
    CriticalExtension,
    /// The token's `kid` is not among the identity provider's published keys.
    #[error("the token's key (`kid`) is not one of the identity provider's keys")]
    UnknownKey,
    /// The identity provider's keys could not be fetched; the client may retry.
    #[error("the identity provider's keys cannot be fetched; retry shortly")]
    ProviderUnavailable,
}

impl From<TokenError> for Problem {
    fn from(e: TokenError) -> Self {
        match e {
            TokenError::ProviderUnavailable => Problem::new(
                actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                e.to_string(),
            )
            .with_retry_after(5),
            e => Problem::unauthorized(e.to_string()),
        }
    }
}

/// Maps what jsonwebtoken refused to our errors. `expected_aud` names the audience the
/// verifier wanted, for [`TokenError::WrongAudience`].
fn token_error(e: &jsonwebtoken::errors::Error, expected_aud: Option<&str>) -> TokenError {
    match e.kind() {
        ErrorKind::ExpiredSignature => TokenError::Expired,
        ErrorKind::ImmatureSignature => TokenError::NotYetValid,
        ErrorKind::InvalidAudience => TokenError::WrongAudience {
            expected: expected_aud.unwrap_or("none").to_owned(),
        },
        ErrorKind::InvalidIssuer => TokenError::WrongIssuer,
        ErrorKind::MissingRequiredClaim(claim) => TokenError::MissingClaim(claim.clone()),
        ErrorKind::InvalidClaimFormat(claim) => TokenError::MalformedClaim(claim.clone()),
        _ => TokenError::Invalid,
    }
}

/// A time claim as whole seconds: JSON numbers, fractional ones floored (RFC 7519 NumericDate).
fn numeric_date(claims: &Map<String, Value>, name: &str) -> Result<Option<i64>, TokenError> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite() && f.abs() < 1e15)
                    .map(|f| f.floor() as i64)
            })
            .map(Some)
            .ok_or_else(|| TokenError::MalformedClaim(name.to_owned())),
    }
}

/// The time rules jsonwebtoken leaves to us: `iat` not in the future (beyond the leeway) and,
/// when `max_lifetime` is set, `iat` present and `exp - iat` at most `max_lifetime`.
/// `exp` itself has already been required and checked against the clock.
pub(crate) fn check_lifetime(
    claims: &Map<String, Value>,
    max_lifetime: Option<Duration>,
    now: i64,
) -> Result<(), TokenError> {
    let iat = numeric_date(claims, "iat")?;
    if let Some(iat) = iat
        && iat > now.saturating_add(LEEWAY_SECS as i64)
    {
        return Err(TokenError::IssuedInFuture);
    }
    if let Some(max) = max_lifetime {
        let iat = iat.ok_or_else(|| TokenError::MissingClaim("iat".into()))?;
        let exp =
            numeric_date(claims, "exp")?.ok_or_else(|| TokenError::MissingClaim("exp".into()))?;
        let max_secs = max.as_secs();
        if exp.saturating_sub(iat) > i64::try_from(max_secs).unwrap_or(i64::MAX) {
            return Err(TokenError::LifetimeTooLong { max_secs });
        }
    }
    Ok(())
}

/// Refuses a token whose header carries `crit` ([`TokenError::CriticalExtension`]).
///
/// RFC 7515 section 4.1.11: `crit` lists header parameters that are extensions the recipient
/// must understand and process, and a token naming one it does not understand must be
/// refused. We understand no extension (`b64: false`, RFC 7797, would even change what the
/// signature covers), so any `crit` is refused, an empty list or a `null` included (the RFC
/// forbids both). jsonwebtoken reads `crit` and ignores it, so the header is read here, with
/// the same base64url (no padding) jsonwebtoken reads it with; a header that does not read as
/// a JSON object is [`TokenError::Invalid`], as jsonwebtoken would find it.
pub fn refuse_critical_extensions(token: &str) -> Result<(), TokenError> {
    use base64::Engine as _;
    let encoded = token.split('.').next().unwrap_or_default();
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()
        .and_then(|json| serde_json::from_slice::<Map<String, Value>>(&json).ok())
        .ok_or(TokenError::Invalid)?;
    if header.contains_key("crit") {
        return Err(TokenError::CriticalExtension);
    }
    Ok(())
}

/// `value`, the claim `name` of a verified token, when it can name someone: text without a
/// control character or a line separator (U+2028, U+2029). A NUL cannot reach PostgreSQL's
/// text (the lookup of the caller would fail with a 500), a line break in a logged identity
/// would write a forged log line; a token carrying either is refused as malformed
/// ([`TokenError::MalformedClaim`] naming the claim, 401). Services check their own identity
/// claims (a tenant) with it; `sub` and the identity provider's user claim are checked here.
pub fn identity_claim<'v>(name: &str, value: &'v str) -> Result<&'v str, TokenError> {
    if value.chars().any(breaks_text) {
        Err(TokenError::MalformedClaim(name.to_owned()))
    } else {
        Ok(value)
    }
}

/// `value`, the claim `name` of a verified token, as the id it names: a number in its one
/// canonical decimal form, `0|[1-9][0-9]*`, within `i64`. No sign, no leading zero, no space,
/// no other digits than ASCII ones: `"02"`, `"+2"`, `" 2"` and `"2 "` all name nobody, so one
/// id has exactly one spelling in a token (a cache keyed by the token, a log line, an audit
/// trail never see two spellings of one user). Anything else is a malformed token
/// ([`TokenError::MalformedClaim`] naming the claim, 401).
pub fn id_claim(name: &str, value: &str) -> Result<i64, TokenError> {
    let canonical = match value.as_bytes() {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    canonical
        .then(|| value.parse::<i64>().ok())
        .flatten()
        .ok_or_else(|| TokenError::MalformedClaim(name.to_owned()))
}

/// A control character (C0, DEL, C1: NUL, line feed, escape...) or a Unicode line or
/// paragraph separator: what must never travel from a token into a query or a log line.
pub(crate) fn breaks_text(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `sub`, when the token has one as text, names someone ([`identity_claim`]).
pub(crate) fn check_subject(claims: &Map<String, Value>) -> Result<(), TokenError> {
    match claims.get("sub") {
        Some(Value::String(sub)) => identity_claim("sub", sub).map(drop),
        _ => Ok(()),
    }
}

fn base_validation(alg: Algorithm) -> Validation {
    let mut validation = Validation::new(alg);
    validation.leeway = LEEWAY_SECS;
    validation.validate_nbf = true;
    validation.validate_exp = true;
    validation
}

/// Seconds since the Unix epoch, for `iat`/`exp`.
pub fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The credentials of an `Authorization: <scheme> <credentials>` header, scheme matched
/// case-insensitively.
pub fn authorization<'r>(req: &'r HttpRequest, scheme: &str) -> Option<&'r str> {
    let value = visible_ascii(req.headers().get(header::AUTHORIZATION)?.as_bytes())?;
    let (given, credentials) = value.split_once(' ')?;
    given
        .eq_ignore_ascii_case(scheme)
        .then(|| credentials.trim())
        .filter(|c| !c.is_empty())
}

/// `bytes` as text when they are visible ASCII or tabs: what `HeaderValue::to_str` accepts,
/// checked without a branch per byte (a token is a few hundred bytes, on every request).
fn visible_ascii(bytes: &[u8]) -> Option<&str> {
    let visible = bytes.iter().fold(true, |all, &b| {
        all & (matches!(b, b' '..=b'~') | (b == b'\t'))
    });
    visible.then(|| std::str::from_utf8(bytes).ok()).flatten()
}

#[cfg(test)]
mod tests;
