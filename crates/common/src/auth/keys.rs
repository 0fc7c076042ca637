//! [`JwtKeys`]: one service's HS256 keys, and the rules its tokens are issued and verified
//! with (see [`super`]).

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{
    TokenError, base_validation, check_lifetime, check_subject, now_secs, numeric_date,
    refuse_critical_extensions, token_error,
};

/// Keys and rules for one service's HS256 tokens.
///
/// Build them with [`JwtKeys::new`]: tokens are issued with `aud` set to the service and
/// `iat` set to now, and verified with `aud` required and checked, `exp` required, `nbf`
/// honoured, `iat` not in the future and `exp - iat` at most the maximum lifetime.
/// [`JwtKeys::lenient`] keys check none of that, for tests that forge tokens.
#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    audience: Option<Arc<str>>,
    max_lifetime: Option<Duration>,
}

fn signing_error(message: String) -> jsonwebtoken::errors::Error {
    jsonwebtoken::errors::Error::from(ErrorKind::Signing(message))
}

impl JwtKeys {
    /// Keys for the tokens of the service named `audience` (`"dispatch-api"`,
    /// `"proposal-callback"`): issued with that `aud`, and verified with `aud` required and
    /// equal to it, `exp` and `iat` required, and a lifetime (`exp - iat`) of at most
    /// `max_lifetime`, both when issued and when verified. Each service names its own
    /// maximum (dispatch-api's `auth::DEFAULT_MAX_LIFETIME`, proposal-callback's
    /// `auth::jwt::DEFAULT_MAX_LIFETIME`).
    ///
    /// ```
    /// # use secrecy::SecretString;
    /// # use std::time::Duration;
    /// use common::auth::JwtKeys;
    /// let secret = SecretString::from("x".repeat(32));
    /// let keys = JwtKeys::new(&secret, "dispatch-api", Duration::from_secs(8 * 3600));
    /// assert_eq!(keys.audience(), Some("dispatch-api"));
    /// ```
    pub fn new(secret: &SecretString, audience: &str, max_lifetime: Duration) -> Self {
        let mut keys = Self::lenient(secret);
        keys.bind_to(audience);
        keys.max_lifetime = Some(max_lifetime);
        keys
    }

    /// Lenient keys, bound to no service: HS256, `exp` required, `nbf` honoured, but no
    /// audience and no maximum lifetime, so any token signed with the same secret is
    /// accepted. No service verifies with these: tests use them to sign what a forger
    /// holding the secret would. Use [`JwtKeys::new`].
    pub fn lenient(secret: &SecretString) -> Self {
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

    /// The same secret and lifetime rule for another audience: for a service that issues
    /// two kinds of token (say, `proposal-callback` and `proposal-callback-admin`) so that
    /// neither is accepted where the other is expected.
    pub fn with_audience(&self, audience: &str) -> Self {
        let mut keys = self.clone();
        keys.bind_to(audience);
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

    /// The audience these keys issue and accept, `None` for [`JwtKeys::lenient`] keys.
    pub fn audience(&self) -> Option<&str> {
        self.audience.as_deref()
    }

    /// The longest lifetime a token may have, `None` for [`JwtKeys::lenient`] keys.
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
