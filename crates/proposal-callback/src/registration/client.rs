//! The HTTP call to the insurer's registration route: one client for every registration,
//! how the insurer's credentials travel, the one retry of a call that could not connect, and
//! what each failure means.

use std::future::Future;
use std::time::Duration;

use reqwest::StatusCode;
use secrecy::ExposeSecret;

use crate::domain::code::ErrorCode;
use crate::domain::registration::RegistrationPayload;
use crate::registration::config::{InsurerCredentials, RETRY_PAUSE, RegistrationConfig, Target};

/// THE place that decides how the client id and secret travel on the registration call:
/// HTTP Basic (`Authorization: Basic base64(client_id:client_secret)`, marked sensitive so
/// it is never logged by the HTTP stack). The payload carries `clientId` as the spec asks.
/// If an insurer wants them otherwise (headers `client_id`/`client_secret`, an OAuth token
/// first), change this function only.
fn with_credentials(
    req: reqwest::RequestBuilder,
    credentials: &InsurerCredentials,
) -> reqwest::RequestBuilder {
    req.basic_auth(
        credentials.client_id.expose_secret(),
        Some(credentials.client_secret.expose_secret()),
    )
}

/// Why a registration did not succeed. Each is a 502 with its own `code`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationFailure {
    /// The insurer answered, with something else than 200.
    #[error(
        "the insurer answered HTTP {status}{reason}; only 200 registers the callback, nothing was changed",
        status = .0.as_u16(),
        reason = .0.canonical_reason().map(|r| format!(" {r}")).unwrap_or_default()
    )]
    Rejected(StatusCode),
    /// No answer within `REGISTRATION_TIMEOUT`. The insurer may have received the request.
    #[error(
        "the insurer did not answer within {0:?}; nothing was changed here, register again to be sure the insurer holds the current token"
    )]
    Timeout(Duration),
    /// No connection, on both attempts: the insurer received nothing.
    #[error("could not connect to the insurer (2 attempts); nothing was changed")]
    Unreachable,
    /// The connection failed after the request went out (reset, broken answer).
    #[error(
        "the connection to the insurer failed before it answered; nothing was changed here, register again"
    )]
    Transport,
}

impl RegistrationFailure {
    pub fn code(&self) -> ErrorCode {
        match self {
            RegistrationFailure::Rejected(_) => ErrorCode::InsurerRejected,
            RegistrationFailure::Timeout(_) => ErrorCode::InsurerTimeout,
            RegistrationFailure::Unreachable => ErrorCode::InsurerUnreachable,
            RegistrationFailure::Transport => ErrorCode::InsurerError,
        }
    }
}

/// Runs `attempt`, and once more if it failed with an error `retryable` accepts. Returns the
/// result and how many attempts were made.
pub async fn with_one_retry<T, E, F, Fut>(
    mut attempt: F,
    retryable: impl Fn(&E) -> bool,
    pause: Duration,
) -> (Result<T, E>, u32)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    match attempt().await {
        Err(e) if retryable(&e) => {
            tokio::time::sleep(pause).await;
            (attempt().await, 2)
        }
        other => (other, 1),
    }
}

/// A connection error: nothing reached the insurer, so trying again is safe. A timeout after
/// the connection was made, or any answer, is never retried.
fn is_connect_error(e: &reqwest::Error) -> bool {
    e.is_connect()
}

/// The configuration and the one HTTP client of every registration call.
pub struct Registrar {
    pub config: RegistrationConfig,
    client: reqwest::Client,
}

impl Registrar {
    pub fn new(config: RegistrationConfig) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            // A redirect is not a 200: the insurer's answer stands as it is.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("proposal-callback/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { config, client })
    }

    /// POSTs the payload; Ok on 200 only.
    pub async fn send(
        &self,
        target: &Target<'_>,
        payload: &RegistrationPayload<'_>,
    ) -> Result<(), RegistrationFailure> {
        let (result, attempts) = with_one_retry(
            || {
                with_credentials(self.client.post(target.url.clone()), target.credentials)
                    .json(payload)
                    .send()
            },
            is_connect_error,
            RETRY_PAUSE,
        )
        .await;
        match result {
            Ok(res) if res.status() == StatusCode::OK => Ok(()),
            Ok(res) => {
                let status = res.status();
                let body = res.text().await.unwrap_or_default();
                let excerpt: String = body.chars().take(500).collect();
                tracing::warn!(url = %target.url, status = status.as_u16(), body = %excerpt, "the insurer refused the callback registration");
                Err(RegistrationFailure::Rejected(status))
            }
            Err(e) => {
                let failure = if e.is_connect() {
                    RegistrationFailure::Unreachable
                } else if e.is_timeout() {
                    RegistrationFailure::Timeout(self.config.timeout)
                } else {
                    RegistrationFailure::Transport
                };
                tracing::warn!(url = %target.url, attempts, error = %e.without_url(), "the callback registration call failed");
                Err(failure)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn one_retry_on_retryable_errors_only() {
        let calls = AtomicU32::new(0);
        let attempt = |fail_times: u32, err: &'static str| {
            let calls = &calls;
            move || {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move { if n < fail_times { Err(err) } else { Ok(n) } }
            }
        };
        let retryable = |e: &&str| *e == "connect";
        // A connection error, then success: two attempts.
        let (r, n) = with_one_retry(attempt(1, "connect"), retryable, Duration::ZERO).await;
        assert_eq!((r, n), (Ok(1), 2));
        // Two connection errors: the second one stands; never a third attempt.
        calls.store(0, Ordering::SeqCst);
        let (r, n) = with_one_retry(attempt(5, "connect"), retryable, Duration::ZERO).await;
        assert_eq!((r, n, calls.load(Ordering::SeqCst)), (Err("connect"), 2, 2));
        // A timeout (or anything else) is not retried.
        calls.store(0, Ordering::SeqCst);
        let (r, n) = with_one_retry(attempt(5, "timeout"), retryable, Duration::ZERO).await;
        assert_eq!((r, n, calls.load(Ordering::SeqCst)), (Err("timeout"), 1, 1));
    }
}
