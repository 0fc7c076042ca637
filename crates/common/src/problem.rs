//! RFC 9457 problem+json: the one error shape every route answers with.

use std::borrow::Cow;
use std::fmt;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

pub const CONTENT_TYPE: &str = "application/problem+json";

/// One wrong field or parameter, named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// An error response. `code` is stable and meant for clients to switch on; `type` and
/// `title` are derived from it and from the status when the problem is rendered.
#[derive(Debug, Clone)]
pub struct Problem {
    pub status: u16,
    pub code: Cow<'static, str>,
    pub detail: String,
    pub errors: Vec<FieldError>,
    retry_after_secs: Option<u32>,
}

/// The wire shape of [`Problem`], for the OpenAPI documents.
#[derive(Serialize, ToSchema)]
#[schema(title = "Problem")]
pub struct ProblemDocument<'a> {
    #[serde(rename = "type")]
    #[schema(example = "urn:problem-type:invalid_parameter")]
    pub type_: String,
    #[schema(example = "Bad Request")]
    pub title: &'a str,
    #[schema(example = 400)]
    pub status: u16,
    #[schema(example = "parameter `limit`: must be between 1 and 20")]
    pub detail: &'a str,
    #[schema(example = "invalid_parameter")]
    pub code: &'a str,
    #[serde(skip_serializing_if = "<[FieldError]>::is_empty")]
    pub errors: &'a [FieldError],
}

impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ProblemDocument {
            type_: format!("urn:problem-type:{}", self.code),
            title: self.status().canonical_reason().unwrap_or("Error"),
            status: self.status,
            detail: &self.detail,
            code: &self.code,
            errors: &self.errors,
        }
        .serialize(serializer)
    }
}

impl Problem {
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            status: status.as_u16(),
            code: code.into(),
            detail: detail.into(),
            errors: Vec::new(),
            retry_after_secs: None,
        }
    }

    pub fn with_errors(mut self, errors: Vec<FieldError>) -> Self {
        self.errors = errors;
        self
    }

    pub fn with_retry_after(mut self, secs: u32) -> Self {
        self.retry_after_secs = Some(secs);
        self
    }

    /// 400 `invalid_parameter`, naming the parameter in `detail` and `errors`.
    pub fn invalid_parameter(field: impl Into<String>, message: impl Into<String>) -> Self {
        let (field, message) = (field.into(), message.into());
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_parameter",
            format!("parameter `{field}`: {message}"),
        )
        .with_errors(vec![FieldError { field, message }])
    }

    /// 400 `invalid_payload`: the body is not what this route takes.
    pub fn invalid_payload(field: Option<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        match field {
            Some(field) => Self::new(
                StatusCode::BAD_REQUEST,
                "invalid_payload",
                format!("body field `{field}`: {message}"),
            )
            .with_errors(vec![FieldError { field, message }]),
            None => Self::new(StatusCode::BAD_REQUEST, "invalid_payload", message),
        }
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", detail)
    }

    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", detail)
    }

    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", detail)
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body is larger than {limit} bytes"),
        )
    }

    pub fn body_timeout(timeout: std::time::Duration) -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the body did not arrive within {} s of the request head",
                timeout.as_secs_f32()
            ),
        )
    }

    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the body must be application/json",
        )
    }

    /// 503: the database (or another dependency) does not answer; the client may retry.
    pub fn unavailable() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the service cannot reach its database; retry shortly",
        )
        .with_retry_after(1)
    }

    /// 500 with nothing internal in it; the cause goes to the log, not to the client.
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "an unexpected error occurred; it has been logged",
        )
    }

    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.detail)
    }
}

impl ResponseError for Problem {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = HttpResponse::build(self.status());
        res.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE)));
        if let Some(secs) = self.retry_after_secs {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        res.body(serde_json::to_vec(self).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    async fn body_of(p: &Problem) -> (StatusCode, String, serde_json::Value) {
        let res = p.error_response();
        let status = res.status();
        let ct = res
            .headers()
            .get(header::CONTENT_TYPE)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let bytes = to_bytes(res.into_body()).await.unwrap();
        (status, ct, serde_json::from_slice(&bytes).unwrap())
    }

    #[actix_web::test]
    async fn renders_rfc9457_with_code_and_named_field() {
        let (status, ct, body) =
            body_of(&Problem::invalid_parameter("limit", "must be 1..20")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(ct, CONTENT_TYPE);
        assert_eq!(
            body,
            serde_json::json!({
                "type": "urn:problem-type:invalid_parameter",
                "title": "Bad Request",
                "status": 400,
                "detail": "parameter `limit`: must be 1..20",
                "code": "invalid_parameter",
                "errors": [{"field": "limit", "message": "must be 1..20"}]
            })
        );
    }

    #[actix_web::test]
    async fn status_mapping_of_the_common_constructors() {
        let cases = [
            (Problem::not_found("x"), 404, "not_found"),
            (Problem::unauthorized("x"), 401, "unauthorized"),
            (Problem::forbidden("x"), 403, "forbidden"),
            (Problem::payload_too_large(10), 413, "payload_too_large"),
            (
                Problem::body_timeout(std::time::Duration::from_secs(10)),
                408,
                "request_timeout",
            ),
            (
                Problem::unsupported_media_type(),
                415,
                "unsupported_media_type",
            ),
            (Problem::unavailable(), 503, "unavailable"),
            (Problem::internal(), 500, "internal"),
            (
                Problem::invalid_payload(None, "not JSON"),
                400,
                "invalid_payload",
            ),
        ];
        for (p, status, code) in cases {
            let (s, _, body) = body_of(&p).await;
            assert_eq!(s.as_u16(), status, "{code}");
            assert_eq!(body["status"], status);
            assert_eq!(body["code"], code);
            assert!(body.get("errors").is_none(), "no empty errors array");
        }
    }

    #[actix_web::test]
    async fn unavailable_tells_when_to_retry() {
        let res = Problem::unavailable().error_response();
        assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "1");
    }
}
