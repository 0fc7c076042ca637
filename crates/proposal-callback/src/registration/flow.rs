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

use common::db::Pool;
use diesel_async::AsyncConnection;
use secrecy::ExposeSecret;

use crate::auth::basic::{generate_token, token_hash};
use crate::error::Error;
use crate::metrics;
use crate::registration::client::Registrar;
use crate::registration::payload::{ApiCallback, RegistrationPayload};
use crate::store::integrations::{self, IntegrationRow, PendingSlot};

/// The operator asking for a registration: their tenant, and who they are (for the log).
pub struct Admin<'a> {
    pub tenant: &'a str,
    pub sub: &'a str,
}

/// RegisterCallback for integration `id` of the `admin`'s tenant; the integration as it is
/// afterwards.
pub async fn register(
    pool: &Pool,
    registrar: &Registrar,
    admin: &Admin<'_>,
    id: i64,
) -> Result<IntegrationRow, Error> {
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
    let target = registrar
        .config
        .target(&integration.insurer, env)
        .inspect_err(|_| {
            metrics::count_registration(&integration.insurer, env, "not_configured")
        })?;

    let token = generate_token();
    let lease = registrar.config.lease();
    let stale_before = chrono::Utc::now() - chrono::Duration::from_std(lease).unwrap_or_default();
    let token_id = conn
        .transaction::<_, Error, _>(async |c| {
            integrations::lock(c, id).await?;
            match integrations::claim_pending_slot(c, id, stale_before).await? {
                PendingSlot::Busy => Err(Error::RegistrationInProgress {
                    retry_after_secs: lease.as_secs().try_into().unwrap_or(u32::MAX),
                }),
                PendingSlot::Free => {
                    Ok(integrations::insert_pending_token(c, id, &token_hash(&token)).await?)
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
            &integration.insurer,
        ),
        token_api: &token,
    };
    let started = Instant::now();
    let outcome = registrar.send(&target, &payload).await;
    let log = |result: &str| {
        metrics::count_registration(&integration.insurer, env, result);
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
            let activated = conn
                .transaction::<_, Error, _>(async |c| {
                    integrations::lock(c, id).await?;
                    Ok(integrations::activate(c, id, token_id).await?)
                })
                .await?;
            if !activated {
                log("registration_superseded");
                return Err(Error::RegistrationSuperseded);
            }
            log("registered");
            integrations::find(&mut conn, id)
                .await?
                .ok_or(Error::IntegrationNotFound(id))
        }
        Err(failure) => {
            integrations::abandon(&mut conn, token_id).await?;
            log(failure.code());
            Err(Error::Registration(failure))
        }
    }
}
