//! Tokens: the HS256 tokens a service issues and verifies itself, the tokens of an identity
//! provider verified against its published keys (JWKS), and the checks `serve` runs on its
//! signing secret. The claim types belong to each service.
//!
//! The rules (docs/dispatch-routes.md "Authentication", docs/proposal-callback.md):
//!
//! - A token is bound to the service it was issued for: its `aud` is required and must be
//!   that service's name (or, for an identity provider's token, the configured
//!   `JWT_AUDIENCE`), so a token of one service is refused by the other even when both were
//!   given the same secret. Build such keys with [`JwtKeys::for_service`].
//! - `exp` is required; `nbf` is honoured; the clocks may drift by [`LEEWAY_SECS`].
//! - A token lives at most a bounded time (`exp - iat`, [`DEFAULT_MAX_LIFETIME`] unless
//!   configured), so a token dated to the year 9999 is refused; a token without `iat` is
//!   refused whenever a maximum lifetime applies, and an `iat` in the future is refused.
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
//! The pieces: [`JwtKeys`] (HS256), [`idp::IdpVerifier`] (RS256/ES256 by JWKS, configured by
//! [`idp::IdpConfig`]), [`TokenVerifier`] (one call for both), [`check_secret`] (refuses
//! short and placeholder secrets at start).

pub mod idp;
mod secret;
mod verifier;

use std::sync::Arc;
use std::time::Duration;

use actix_web::HttpRequest;
use actix_web::http::header;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::Problem;

pub use secret::{MIN_SECRET_BYTES, PLACEHOLDER_SECRETS, check_secret};
pub use verifier::{TokenVerifier, Verified};

/// How far the issuer's clock and ours may disagree, in seconds, for `exp`, `nbf` and `iat`.
pub const LEEWAY_SECS: u64 = 5;

/// The longest a token may live (`exp - iat`) unless a service configures otherwise.
pub const DEFAULT_MAX_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// `JWT_MAX_LIFETIME` (`8h`, `1d`, ...; default [`DEFAULT_MAX_LIFETIME`]): the longest
/// lifetime a service gives its own tokens ([`JwtKeys::with_max_lifetime`]) and accepts from
/// its identity provider ([`idp::IdpConfig::max_lifetime`]). Read once, at start.
pub fn max_lifetime(
    src: &dyn crate::config::Source,
) -> Result<Duration, crate::config::ConfigError> {
    const NAME: &str = "JWT_MAX_LIFETIME";
    let invalid = |reason: String| crate::config::ConfigError::Invalid {
        name: NAME.into(),
        reason,
    };
    match src.get(NAME) {
        None => Ok(DEFAULT_MAX_LIFETIME),
        Some(raw) => match crate::config::parse_duration(&raw).map_err(invalid)? {
            d if d.as_secs() == 0 => Err(invalid("must be at least 1 s".into())),
            d => Ok(d),
        },
    }
}

/// Keys and rules for one service's HS256 tokens.
///
/// Build them with [`JwtKeys::for_service`]: tokens are issued with `aud` set to the service
/// and `iat` set to now, and verified with `aud` required and checked, `exp` required, `nbf`
/// honoured, `iat` not in the future and `exp - iat` at most the maximum lifetime.
///
/// [`JwtKeys::new`] builds the older, lenient keys (no audience, no maximum lifetime) that
/// the services used before tokens were bound to them; it stays until both services have
/// moved to [`JwtKeys::for_service`].
#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    audience: Option<Arc<str>>,
    max_lifetime: Option<Duration>,
}

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

fn signing_error(message: String) -> jsonwebtoken::errors::Error {
    jsonwebtoken::errors::Error::from(ErrorKind::Signing(message))
}

impl JwtKeys {
    /// The lenient keys of before: HS256, `exp` required, `nbf` honoured, but no audience and
    /// no maximum lifetime, so any token signed with the same secret is accepted. Prefer
    /// [`JwtKeys::for_service`]; this stays until both services have moved.
    pub fn new(secret: &SecretString) -> Self {
        let key = secret.expose_secret().as_bytes();
        let mut validation = base_validation(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp"]);
        Self {
            encoding: EncodingKey::from_secret(key),
            decoding: DecodingKey::from_secret(key),
            validation,
            audience: None,
            max_lifetime: None,
        }
    }

    /// Keys for the tokens of the service named `audience` (`"dispatch-api"`,
    /// `"proposal-callback"`): issued with that `aud`, and verified with `aud` required and
    /// equal to it, `exp` and `iat` required, and a lifetime of at most
    /// [`DEFAULT_MAX_LIFETIME`] (change it with [`JwtKeys::with_max_lifetime`]).
    ///
    /// ```
    /// # use secrecy::SecretString;
    /// use common::auth::JwtKeys;
    /// let keys = JwtKeys::for_service(&SecretString::from("x".repeat(32)), "dispatch-api");
    /// assert_eq!(keys.audience(), Some("dispatch-api"));
    /// ```
    pub fn for_service(secret: &SecretString, audience: &str) -> Self {
        let mut keys = Self::new(secret);
        keys.bind_to(audience);
        keys.max_lifetime = Some(DEFAULT_MAX_LIFETIME);
        keys
    }

    /// The same secret and lifetime rules for another audience: for a service that issues
    /// two kinds of token (say, `proposal-callback` and `proposal-callback-admin`) so that
    /// neither is accepted where the other is expected.
    pub fn with_audience(&self, audience: &str) -> Self {
        let mut keys = self.clone();
        keys.bind_to(audience);
        keys.max_lifetime = keys.max_lifetime.or(Some(DEFAULT_MAX_LIFETIME));
        keys
    }

    /// Sets the longest lifetime (`exp - iat`) a token may have, both when issued and when
    /// verified.
    pub fn with_max_lifetime(mut self, max: Duration) -> Self {
        self.max_lifetime = Some(max);
        self
    }

    fn bind_to(&mut self, audience: &str) {
        self.validation.set_audience(&[audience]);
        self.validation.set_required_spec_claims(&["exp", "aud"]);
        self.audience = Some(Arc::from(audience));
    }

    /// The audience these keys issue and accept, `None` for the lenient [`JwtKeys::new`].
    pub fn audience(&self) -> Option<&str> {
        self.audience.as_deref()
    }

    /// The longest lifetime a token may have, `None` for the lenient [`JwtKeys::new`].
    pub fn max_lifetime(&self) -> Option<Duration> {
        self.max_lifetime
    }

    /// Signs `claims` (a JSON object) with HS256. For keys bound to a service, `aud` is set
    /// to its audience and `iat` to now when the claims have none, and signing is refused
    /// when the claims name another audience, have no `exp`, or would live longer than the
    /// maximum lifetime: a token the service itself would refuse is never made.
    pub fn issue<C: Serialize>(&self, claims: &C) -> Result<String, jsonwebtoken::errors::Error> {
        let header = Header::new(Algorithm::HS256);
        let Some(audience) = self.audience.as_deref() else {
            return jsonwebtoken::encode(&header, claims, &self.encoding);
        };
        let Value::Object(mut map) = serde_json::to_value(claims)? else {
            return Err(signing_error("the claims are not a JSON object".into()));
        };
        match map.get("aud") {
            None | Some(Value::Null) => {
                map.insert("aud".into(), Value::from(audience));
            }
            Some(Value::String(aud)) if aud == audience => {}
            Some(_) => {
                return Err(signing_error(format!(
                    "these keys sign tokens for `{audience}` only"
                )));
            }
        }
        if !matches!(map.get("iat"), Some(v) if !v.is_null()) {
            map.insert("iat".into(), Value::from(now_secs()));
        }
        if numeric_date(&map, "exp").ok().flatten().is_none() {
            return Err(signing_error("the claims have no numeric `exp`".into()));
        }
        if let Err(e) = check_lifetime(&map, self.max_lifetime, now_secs()) {
            return Err(signing_error(e.to_string()));
        }
        jsonwebtoken::encode(&header, &map, &self.encoding)
    }

    /// Verifies an HS256 token against the rules these keys were built with and returns its
    /// claims. Claims the type does not name (such as `aud`) are ignored by the usual serde
    /// rules.
    pub fn verify<C: DeserializeOwned>(&self, token: &str) -> Result<C, TokenError> {
        let claims = if self.audience.is_none() {
            self.decode(token)?
        } else {
            self.verify_claims(token)?
        };
        serde_json::from_value(Value::Object(claims)).map_err(|_| TokenError::Invalid)
    }

    /// As [`JwtKeys::verify`], returning the claims as a JSON object.
    pub fn verify_claims(&self, token: &str) -> Result<Map<String, Value>, TokenError> {
        let claims = self.decode(token)?;
        check_lifetime(&claims, self.max_lifetime, now_secs())?;
        Ok(claims)
    }

    /// The claims of a token signed with these keys, checked by jsonwebtoken's rules
    /// (signature, `exp`, `nbf`, `aud`), its header without `crit`, its `sub` naming someone.
    fn decode(&self, token: &str) -> Result<Map<String, Value>, TokenError> {
        refuse_critical_extensions(token)?;
        let claims =
            jsonwebtoken::decode::<Map<String, Value>>(token, &self.decoding, &self.validation)
                .map(|data| data.claims)
                .map_err(|e| token_error(&e, self.audience.as_deref()))?;
        check_subject(&claims)?;
        Ok(claims)
    }
}

impl std::fmt::Debug for JwtKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtKeys")
            .field("audience", &self.audience)
            .field("max_lifetime", &self.max_lifetime)
            .finish_non_exhaustive()
    }
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
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Claims {
        sub: String,
        exp: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        nbf: Option<i64>,
    }

    fn keys(secret: &str) -> JwtKeys {
        JwtKeys::new(&SecretString::from(secret.to_owned()))
    }

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn round_trip() {
        let k = keys(SECRET);
        let claims = Claims {
            sub: "7".into(),
            exp: now_secs() + 60,
            nbf: None,
        };
        let token = k.issue(&claims).unwrap();
        assert_eq!(k.verify::<Claims>(&token).unwrap(), claims);
    }

    #[test]
    fn rejects_expired_wrong_key_not_yet_valid_and_malformed() {
        let k = keys(SECRET);
        let expired = k
            .issue(&Claims {
                sub: "7".into(),
                exp: now_secs() - 60,
                nbf: None,
            })
            .unwrap();
        assert_eq!(k.verify::<Claims>(&expired), Err(TokenError::Expired));

        let other = keys("another-secret-another-secret-another");
        let foreign = other
            .issue(&Claims {
                sub: "7".into(),
                exp: now_secs() + 60,
                nbf: None,
            })
            .unwrap();
        assert_eq!(k.verify::<Claims>(&foreign), Err(TokenError::Invalid));

        let early = k
            .issue(&Claims {
                sub: "7".into(),
                exp: now_secs() + 600,
                nbf: Some(now_secs() + 300),
            })
            .unwrap();
        assert_eq!(k.verify::<Claims>(&early), Err(TokenError::NotYetValid));

        for junk in ["", "abc", "a.b.c", "ey.ey.ey"] {
            assert_eq!(
                k.verify::<Claims>(junk),
                Err(TokenError::Invalid),
                "{junk:?}"
            );
        }
    }

    #[test]
    fn rejects_alg_none_and_missing_exp() {
        use base64_like::encode;
        let k = keys(SECRET);
        let header = encode(br#"{"alg":"none","typ":"JWT"}"#);
        let payload = encode(format!(r#"{{"sub":"7","exp":{}}}"#, now_secs() + 60).as_bytes());
        for token in [
            format!("{header}.{payload}."),
            format!("{header}.{payload}"),
        ] {
            assert_eq!(k.verify::<Claims>(&token), Err(TokenError::Invalid));
        }
        #[derive(Serialize)]
        struct NoExp {
            sub: String,
        }
        let token = k.issue(&NoExp { sub: "7".into() }).unwrap();
        assert_eq!(
            k.verify::<Claims>(&token),
            Err(TokenError::MissingClaim("exp".into()))
        );
    }

    /// Unpadded base64url, enough to forge the `alg: none` token above.
    mod base64_like {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        pub fn encode(input: &[u8]) -> String {
            let mut out = String::new();
            for chunk in input.chunks(3) {
                let b = [
                    chunk[0],
                    *chunk.get(1).unwrap_or(&0),
                    *chunk.get(2).unwrap_or(&0),
                ];
                let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
                for i in 0..=chunk.len() {
                    out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
                }
            }
            out
        }
    }

    // Tokens bound to their service.

    const DISPATCH: &str = "dispatch-api";
    const CALLBACK: &str = "proposal-callback";

    fn service(aud: &str) -> JwtKeys {
        JwtKeys::for_service(&SecretString::from(SECRET.to_owned()), aud)
    }

    /// Signs anything with the shared secret, as a forger holding it (or another service's
    /// lenient keys) would.
    fn forge(claims: serde_json::Value) -> String {
        keys(SECRET).issue(&claims).unwrap()
    }

    fn claims_of(token: &str) -> serde_json::Map<String, serde_json::Value> {
        jsonwebtoken::dangerous::insecure_decode::<serde_json::Map<String, serde_json::Value>>(
            token,
        )
        .unwrap()
        .claims
    }

    #[test]
    fn a_service_token_carries_its_audience_and_issue_time_and_verifies() {
        let k = service(DISPATCH);
        let now = now_secs();
        let claims = Claims {
            sub: "7".into(),
            exp: now + 300,
            nbf: None,
        };
        let token = k.issue(&claims).unwrap();
        let raw = claims_of(&token);
        assert_eq!(raw["aud"], DISPATCH);
        assert!((now..=now + 2).contains(&raw["iat"].as_i64().unwrap()));
        assert_eq!(k.verify::<Claims>(&token).unwrap(), claims);
        assert_eq!(k.verify_claims(&token).unwrap(), raw);
    }

    #[test]
    fn another_services_token_on_a_shared_secret_is_refused_both_ways() {
        let exp = now_secs() + 300;
        let dispatch = service(DISPATCH);
        let callback = service(CALLBACK);
        // What proposal-callback issues to an insurer, offered to dispatch-api.
        let insurer = callback
            .issue(&serde_json::json!({"sub": "1", "tenant": "demo-a", "insurer": "porto", "exp": exp}))
            .unwrap();
        assert_eq!(
            dispatch.verify::<Claims>(&insurer),
            Err(TokenError::WrongAudience {
                expected: DISPATCH.into()
            })
        );
        let user = dispatch
            .issue(&serde_json::json!({"sub": "1", "exp": exp}))
            .unwrap();
        assert_eq!(
            callback.verify::<serde_json::Value>(&user),
            Err(TokenError::WrongAudience {
                expected: CALLBACK.into()
            })
        );
        // A kind of token of the same service is refused where another kind is expected.
        let admin = callback.with_audience("proposal-callback-admin");
        let admin_token = admin
            .issue(&serde_json::json!({"sub": "ops", "exp": exp}))
            .unwrap();
        assert!(matches!(
            callback.verify::<serde_json::Value>(&admin_token),
            Err(TokenError::WrongAudience { .. })
        ));
        assert!(admin.verify::<serde_json::Value>(&admin_token).is_ok());
        assert!(matches!(
            admin.verify::<serde_json::Value>(&insurer),
            Err(TokenError::WrongAudience { .. })
        ));
        // The lenient keys of before refuse a token that names an audience, so a service
        // not yet moved does not take the other's new tokens either.
        assert!(matches!(
            keys(SECRET).verify::<Claims>(&insurer),
            Err(TokenError::WrongAudience { .. })
        ));
    }

    #[test]
    fn a_token_without_audience_is_refused() {
        let now = now_secs();
        let token = forge(serde_json::json!({"sub": "1", "iat": now, "exp": now + 60}));
        assert_eq!(
            service(DISPATCH).verify::<Claims>(&token),
            Err(TokenError::MissingClaim("aud".into()))
        );
        // Nor does an audience of the wrong type pass.
        let token = forge(serde_json::json!({"sub": "1", "aud": 7, "iat": now, "exp": now + 60}));
        assert_eq!(
            service(DISPATCH).verify::<Claims>(&token),
            Err(TokenError::MissingClaim("aud".into()))
        );
        // A list including the service is this service's token.
        let token = forge(
            serde_json::json!({"sub": "1", "aud": [CALLBACK, DISPATCH], "iat": now, "exp": now + 60}),
        );
        assert!(service(DISPATCH).verify::<Claims>(&token).is_ok());
    }

    #[test]
    fn a_lifetime_over_the_maximum_is_refused() {
        let now = now_secs();
        let k = service(DISPATCH);
        // The year 9999.
        let forever = forge(
            serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now, "exp": 253_402_300_799_i64}),
        );
        assert_eq!(
            k.verify::<Claims>(&forever),
            Err(TokenError::LifetimeTooLong { max_secs: 86_400 })
        );
        let day = forge(
            serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now, "exp": now + 86_400}),
        );
        assert!(
            k.verify::<Claims>(&day).is_ok(),
            "exactly the maximum is fine"
        );
        let hour = k.clone().with_max_lifetime(Duration::from_secs(3600));
        assert_eq!(
            hour.verify::<Claims>(&day),
            Err(TokenError::LifetimeTooLong { max_secs: 3600 })
        );
        // Issuing such a token is refused too: the service never makes one it would refuse.
        let err = hour
            .issue(&serde_json::json!({"sub": "1", "exp": now + 7200}))
            .unwrap_err();
        assert!(err.to_string().contains("3600 s"), "{err}");
        assert!(
            hour.issue(&serde_json::json!({"sub": "1"})).is_err(),
            "no exp"
        );
        assert!(
            hour.issue(&serde_json::json!({"sub": "1", "aud": CALLBACK, "exp": now + 60}))
                .is_err(),
            "another audience"
        );
    }

    #[test]
    fn a_token_without_issue_time_is_refused_when_a_maximum_lifetime_applies() {
        let now = now_secs();
        let token = forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "exp": now + 60}));
        assert_eq!(
            service(DISPATCH).verify::<Claims>(&token),
            Err(TokenError::MissingClaim("iat".into()))
        );
        let token =
            forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": "now", "exp": now + 60}));
        assert_eq!(
            service(DISPATCH).verify::<Claims>(&token),
            Err(TokenError::MalformedClaim("iat".into()))
        );
    }

    #[test]
    fn an_issue_time_in_the_future_is_refused_beyond_the_leeway() {
        let now = now_secs();
        let k = service(DISPATCH);
        let future = forge(
            serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now + 60, "exp": now + 120}),
        );
        assert_eq!(k.verify::<Claims>(&future), Err(TokenError::IssuedInFuture));
        // A clock a little ahead is tolerated (the leeway is 5 s; 2 s keeps the test clear
        // of a second boundary).
        let skewed = forge(
            serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now + 2, "exp": now + 120}),
        );
        assert!(k.verify::<Claims>(&skewed).is_ok());
    }

    #[test]
    fn expiry_and_not_before_still_apply_to_service_tokens() {
        let now = now_secs();
        let k = service(DISPATCH);
        let expired = forge(
            serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now - 120, "exp": now - 60}),
        );
        assert_eq!(k.verify::<Claims>(&expired), Err(TokenError::Expired));
        let early = forge(serde_json::json!(
            {"sub": "1", "aud": DISPATCH, "iat": now, "nbf": now + 300, "exp": now + 600}
        ));
        assert_eq!(k.verify::<Claims>(&early), Err(TokenError::NotYetValid));
        let no_exp = forge(serde_json::json!({"sub": "1", "aud": DISPATCH, "iat": now}));
        assert_eq!(
            k.verify::<Claims>(&no_exp),
            Err(TokenError::MissingClaim("exp".into()))
        );
        let other_secret = JwtKeys::for_service(
            &SecretString::from("another-secret-another-secret-another".to_owned()),
            DISPATCH,
        );
        let foreign = other_secret
            .issue(&serde_json::json!({"sub": "1", "exp": now + 60}))
            .unwrap();
        assert_eq!(k.verify::<Claims>(&foreign), Err(TokenError::Invalid));
    }

    #[test]
    fn refusals_are_401_problems_that_name_the_rule_and_nothing_secret() {
        let now = now_secs();
        let token =
            forge(serde_json::json!({"sub": "1", "aud": CALLBACK, "iat": now, "exp": now + 60}));
        let err = service(DISPATCH).verify::<Claims>(&token).unwrap_err();
        let problem = Problem::from(err);
        assert_eq!(problem.status, 401);
        assert_eq!(problem.code, "unauthorized");
        assert_eq!(
            problem.detail,
            "the token is meant for another audience than `dispatch-api`"
        );
        for (err, detail) in [
            (
                TokenError::LifetimeTooLong { max_secs: 86_400 },
                "the token lives longer than the 86400 s allowed (`exp` - `iat`)",
            ),
            (
                TokenError::IssuedInFuture,
                "the token was issued in the future (`iat`)",
            ),
            (
                TokenError::MissingClaim("aud".into()),
                "the token has no `aud` claim",
            ),
        ] {
            let problem = Problem::from(err);
            assert_eq!((problem.status, problem.detail.as_str()), (401, detail));
            assert!(!problem.detail.contains(SECRET));
        }
        let unavailable = Problem::from(TokenError::ProviderUnavailable);
        assert_eq!(unavailable.status, 503);
        assert_eq!(unavailable.code, "unavailable");
    }

    #[actix_web::test]
    async fn the_verifier_routes_by_algorithm() {
        let now = now_secs();
        let k = service(DISPATCH);
        let verifier = TokenVerifier::new(k.clone());
        let token = k
            .issue(&serde_json::json!({"sub": "7", "exp": now + 60}))
            .unwrap();
        match verifier.verify::<Claims>(&token).await.unwrap() {
            Verified::Local(claims) => assert_eq!(claims.sub, "7"),
            other => panic!("{other:?}"),
        }
        // Without an identity provider, RS256 is refused by name; unknown algorithms too.
        use base64_like::encode;
        let payload = encode(format!(r#"{{"sub":"7","exp":{}}}"#, now + 60).as_bytes());
        for (alg, detail) in [
            (
                "RS256",
                "tokens signed with RS256 are not accepted: no identity provider is configured",
            ),
            ("HS512", "tokens signed with HS512 are not accepted"),
        ] {
            let header = encode(format!(r#"{{"alg":"{alg}","kid":"k"}}"#).as_bytes());
            let err = verifier
                .verify::<Claims>(&format!("{header}.{payload}.c2ln"))
                .await
                .unwrap_err();
            assert_eq!(err.to_string(), detail);
        }
        assert_eq!(
            verifier.verify::<Claims>("junk").await.unwrap_err(),
            TokenError::Invalid
        );
    }

    #[test]
    fn a_token_whose_header_carries_crit_is_refused() {
        let now = now_secs();
        let k = service(DISPATCH);
        let claims = serde_json::json!({"sub": "7", "aud": DISPATCH, "iat": now, "exp": now + 60});
        let secret = EncodingKey::from_secret(SECRET.as_bytes());
        let signed = |header: &Header| jsonwebtoken::encode(header, &claims, &secret).unwrap();
        let mut headers = Vec::new();
        for names in [vec!["x-must"], vec!["b64"], vec!["exp", "x-other"], vec![]] {
            let mut header = Header::new(Algorithm::HS256);
            header.crit = Some(names.into_iter().map(str::to_owned).collect());
            headers.push(header);
        }
        // `null`, which jsonwebtoken reads as no `crit` at all.
        let mut header = Header::new(Algorithm::HS256);
        header.extras.insert("crit", Value::Null);
        headers.push(header);
        for header in &headers {
            let token = signed(header);
            assert_eq!(
                k.verify::<Claims>(&token),
                Err(TokenError::CriticalExtension),
                "{header:?}"
            );
            // The lenient keys too.
            assert_eq!(
                keys(SECRET).verify::<Claims>(&token),
                Err(TokenError::CriticalExtension)
            );
        }
        let problem = Problem::from(TokenError::CriticalExtension);
        assert_eq!(
            (problem.status, &*problem.code, problem.detail.as_str()),
            (
                401,
                "unauthorized",
                "the token's header names critical extensions (`crit`) this service does not understand"
            )
        );
        // The same token without it verifies.
        assert!(
            k.verify::<Claims>(&signed(&Header::new(Algorithm::HS256)))
                .is_ok()
        );
    }

    #[test]
    fn the_maximum_lifetime_comes_from_jwt_max_lifetime() {
        use crate::config::ConfigError;
        let env = |v: &str| {
            std::collections::HashMap::from([("JWT_MAX_LIFETIME".to_owned(), v.to_owned())])
        };
        let none: std::collections::HashMap<String, String> = Default::default();
        assert_eq!(max_lifetime(&none).unwrap(), DEFAULT_MAX_LIFETIME);
        assert_eq!(
            max_lifetime(&env("8h")).unwrap(),
            Duration::from_secs(8 * 3600)
        );
        for bad in ["forever", "0s", "12"] {
            assert!(
                matches!(max_lifetime(&env(bad)), Err(ConfigError::Invalid { name, .. }) if name == "JWT_MAX_LIFETIME"),
                "{bad}"
            );
        }
    }

    #[test]
    fn header_text_is_what_header_value_to_str_accepts() {
        for b in 0..=u8::MAX {
            let bytes = [b'a', b, b'\t', b'z'];
            if let Ok(value) = header::HeaderValue::from_bytes(&bytes) {
                assert_eq!(visible_ascii(&bytes), value.to_str().ok(), "byte {b}");
            }
            assert_eq!(
                visible_ascii(&bytes).is_some(),
                matches!(b, 9 | 32..=126),
                "byte {b}"
            );
        }
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3In0.c2lnbmF0dXJl".repeat(4);
        assert_eq!(visible_ascii(token.as_bytes()), Some(token.as_str()));
        assert_eq!(visible_ascii(b""), Some(""));
    }

    #[test]
    fn authorization_header_parsing() {
        let req = actix_web::test::TestRequest::default()
            .insert_header(("Authorization", "bearer abc"))
            .to_http_request();
        assert_eq!(authorization(&req, "Bearer"), Some("abc"));
        assert_eq!(authorization(&req, "Basic"), None);
        let req = actix_web::test::TestRequest::default()
            .insert_header(("Authorization", "Bearer "))
            .to_http_request();
        assert_eq!(authorization(&req, "Bearer"), None);
    }
}
