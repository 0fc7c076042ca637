//! HS256 tokens: issuing and verifying. The claim types belong to each service.

use actix_web::HttpRequest;
use actix_web::http::header;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Problem;

/// Keys and rules for one service's tokens. Only HS256 is accepted, `exp` is required,
/// `nbf` is honoured, and the clock may drift by a few seconds.
#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token is not valid")]
    Invalid,
}

impl From<TokenError> for Problem {
    fn from(e: TokenError) -> Self {
        Problem::unauthorized(e.to_string())
    }
}

impl JwtKeys {
    pub fn new(secret: &SecretString) -> Self {
        let key = secret.expose_secret().as_bytes();
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp"]);
        Self {
            encoding: EncodingKey::from_secret(key),
            decoding: DecodingKey::from_secret(key),
            validation,
        }
    }

    pub fn issue<C: Serialize>(&self, claims: &C) -> Result<String, jsonwebtoken::errors::Error> {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
    }

    pub fn verify<C: DeserializeOwned>(&self, token: &str) -> Result<C, TokenError> {
        use jsonwebtoken::errors::ErrorKind;
        jsonwebtoken::decode::<C>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => TokenError::Expired,
                ErrorKind::ImmatureSignature => TokenError::NotYetValid,
                _ => TokenError::Invalid,
            })
    }
}

/// Seconds since the Unix epoch, for `iat`/`exp`.
pub fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The credentials of an `Authorization: <scheme> <credentials>` header, scheme matched
/// case-insensitively.
pub fn authorization<'r>(req: &'r HttpRequest, scheme: &str) -> Option<&'r str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (given, credentials) = value.split_once(' ')?;
    given
        .eq_ignore_ascii_case(scheme)
        .then(|| credentials.trim())
        .filter(|c| !c.is_empty())
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
        assert_eq!(k.verify::<Claims>(&token), Err(TokenError::Invalid));
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
