//! RegisterCallback: registers an integration's callback endpoint with its insurer
//! (docs/proposal-callback.md, "Registering the callback").
//!
//! In the spec's order: a fixed Basic token is generated and stored as a Token record
//! (`registerCallback`, SHA-256 only) — *pending*, so it cannot authenticate yet; the payload
//! describing `/callback/auth` and the integration's callback URL, with the token in
//! `tokenApi`, is POSTed to `{insurer_webhook_url}/envio/v1/inclusaoCadastro` of the
//! integration's environment; on the insurer's 200 one transaction activates the token,
//! revokes the integration's previous one and sets `is_callback_active`. Any other answer,
//! a timeout or no connection revokes the pending token and changes nothing else: the
//! previous token (if any) keeps working.

use std::time::Instant;

use common::Clock;
use common::db::Pool;
use diesel_async::AsyncConnection;
use secrecy::ExposeSecret;

use crate::domain::basic_token::{generate_token, token_hash};
use crate::domain::code::ErrorCode;
use crate::domain::registration::{ApiCallback, RegistrationPayload};
use crate::error::Error;
use crate::metrics;
use crate::registration::client::{Registrar, RegistrationFailure};
use crate::store::integrations::{self, IntegrationRow, PendingSlot};
use crate::store::registration_attempts::{self as attempts, NewAttempt, REGISTERED};

/// The operator asking for a registration: their tenant, and who they are (for the log).
pub struct Admin<'a> {
    pub tenant: &'a str,
    pub sub: &'a str,
}

/// RegisterCallback for integration `id` of the `admin`'s tenant; the integration as it is
/// afterwards. Each attempt that reaches the insurer, or finds it not configured, is recorded
/// with its outcome (`store::registration_attempts`).
pub async fn register(
    pool: &Pool,
    registrar: &Registrar,
    clock: &Clock,
    admin: &Admin<'_>,
    id: i64,
) -> Result<IntegrationRow, Error> {
    let asked = Asked {
        integration_id: id,
        at: clock.now(),
        clock,
        admin: admin.sub,
    };
    let mut conn = pool.get().await?;
    let integration = integrations::find(&mut conn, id)
        .await?
        .ok_or(Error::IntegrationNotFound(id))?;
    if integration.tenant_id != admin.tenant {
        return Err(Error::Forbidden(
            "this integration belongs to another tenant",
        ));
    }
    let env = integration.environment;
    // Before any token is made: an unconfigured insurer changes nothing.
    let target = match registrar.config.target(integration.insurer, env) {
        Ok(target) => target,
        Err(missing) => {
            metrics::count_registration(integration.insurer, env, Some(ErrorCode::NotConfigured));
            let e = Error::from(missing);
            let detail = e.to_string();
            attempts::record(
                &mut conn,
                &asked.ended(e.code().as_str(), None, Some(&detail)),
            )
            .await?;
            return Err(e);
        }
    };

    let token = generate_token();
    let lease = registrar.config.lease();
    let made_at = clock.now();
    let stale_before = made_at - chrono::Duration::from_std(lease).unwrap_or_default();
    let token_id = conn
        .transaction::<_, Error, _>(async |c| {
            integrations::lock(c, id).await?;
            match integrations::claim_pending_slot(c, id, stale_before).await? {
                PendingSlot::Busy => Err(Error::RegistrationInProgress {
                    retry_after_secs: lease.as_secs().try_into().unwrap_or(u32::MAX),
                }),
                PendingSlot::Free => {
                    Ok(
                        integrations::insert_pending_token(c, id, &token_hash(&token), made_at)
                            .await?,
                    )
                }
            }
        })
        .await?;
    // No database connection is held while the insurer is called.
    drop(conn);

    let credentials = target.credentials;
    let payload = RegistrationPayload {
        nome_parceiro: format!("{}/{}", integration.tenant_id, integration.insurer),
        client_id: credentials.client_id.expose_secret(),
        api_callback: ApiCallback::new(
            &registrar.config.callback_base_url,
            &integration.tenant_id,
            integration.insurer,
        ),
        token_api: &token,
    };
    let started = Instant::now();
    let outcome = registrar.send(&target, &payload).await;
    let log = |failure: Option<ErrorCode>| {
        metrics::count_registration(integration.insurer, env, failure);
        let result = failure.map_or(REGISTERED, ErrorCode::as_str);
        tracing::info!(
            integration = id,
            tenant = %integration.tenant_id,
            insurer = %integration.insurer,
            environment = env.as_str(),
            admin = %admin.sub,
            result,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "callback registration"
        )
    };

    let mut conn = pool.get().await.inspect_err(|e| {
        tracing::error!(
            integration = id,
            insurer_accepted = outcome.is_ok(),
            error = %e,
            "the registration's outcome could not be recorded; its token stays pending (never live) until its lease passes, then register again"
        )
    })?;
    match outcome {
        Ok(()) => {
            let superseded = Error::RegistrationSuperseded;
            let superseded_detail = superseded.to_string();
            let activated = conn
                .transaction::<_, Error, _>(async |c| {
                    integrations::lock(c, id).await?;
                    let activated = integrations::activate(c, id, token_id).await?;
                    let recorded = if activated {
                        asked.ended(REGISTERED, Some(200), None)
                    } else {
                        asked.ended(
                            superseded.code().as_str(),
                            Some(200),
                            Some(&superseded_detail),
                        )
                    };
                    attempts::record(c, &recorded).await?;
                    Ok(activated)
                })
                .await?;
            if !activated {
                log(Some(superseded.code()));
                return Err(superseded);
            }
            log(None);
            integrations::find(&mut conn, id)
                .await?
                .ok_or(Error::IntegrationNotFound(id))
        }
        Err(failure) => {
            let insurer_status = match &failure {
                RegistrationFailure::Rejected(status) => i16::try_from(status.as_u16()).ok(),
                _ => None,
            };
            let e = Error::Registration(failure);
            let detail = e.to_string();
            conn.transaction::<_, Error, _>(async |c| {
                integrations::abandon(c, token_id).await?;
                attempts::record(
                    c,
                    &asked.ended(e.code().as_str(), insurer_status, Some(&detail)),
                )
                .await?;
                Ok(())
            })
            .await?;
            log(Some(e.code()));
            Err(e)
        }
    }
}

/// Which integration an attempt was for, when it was asked for and by whom; the clock that
/// says when it ended.
struct Asked<'a> {
    integration_id: i64,
    at: chrono::DateTime<chrono::Utc>,
    clock: &'a Clock,
    admin: &'a str,
}

impl<'a> Asked<'a> {
    /// The attempt as it ended (now), to record.
    fn ended<'b>(
        &self,
        outcome: &'b str,
        insurer_status: Option<i16>,
        detail: Option<&'b str>,
    ) -> NewAttempt<'b>
    where
        'a: 'b,
    {
        NewAttempt {
            integration_id: self.integration_id,
            started_at: self.at,
            finished_at: self.clock.now(),
            outcome,
            insurer_status,
            detail,
            admin: self.admin,
        }
    }
}

/// [`register`] on a task of its own, for the operators' routes and pages: an operator who
/// disconnects while the insurer is being called does not cancel it, so the insurer's answer
/// is always recorded (and the token never left pending until its lease runs out).
pub async fn register_detached(
    pool: Pool,
    registrar: std::sync::Arc<Registrar>,
    clock: Clock,
    tenant: String,
    sub: String,
    id: i64,
) -> Result<IntegrationRow, Error> {
    actix_web::rt::spawn(async move {
        let admin = Admin {
            tenant: &tenant,
            sub: &sub,
        };
        register(&pool, &registrar, &clock, &admin, id).await
    })
    .await
    .map_err(|e| Error::Internal(format!("the registration task failed: {e}")))?
}
