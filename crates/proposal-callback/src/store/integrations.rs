//! Integrations and their Token records (hash only).
//!
//! A token is *live* (authenticates at `/callback/auth`) when it is activated and not
//! revoked; *pending* while RegisterCallback waits for the insurer (never authenticates);
//! a pending token the insurer did not accept is revoked without ever having been live.

use chrono::{DateTime, Utc};
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::insurer::Insurer;
use crate::registration::config::Environment;
use crate::schema::proposal::{integrations, tokens};

/// `tokenType` of the Basic token an integration registers with its insurer.
pub const REGISTER_CALLBACK: &str = "registerCallback";

/// A live token's integration.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = integrations)]
pub struct TokenOwner {
    #[diesel(select_expression = tokens::token_hash)]
    pub token_hash: Vec<u8>,
    #[diesel(column_name = id)]
    pub integration_id: i64,
    pub tenant_id: String,
    pub insurer: Insurer,
}

/// The integration holding a live `registerCallback` token with this SHA-256.
pub async fn find_by_token_hash(
    conn: &mut AsyncPgConnection,
    hash: &[u8],
) -> QueryResult<Option<TokenOwner>> {
    tokens::table
        .inner_join(integrations::table)
        .filter(tokens::token_hash.eq(hash))
        .filter(tokens::token_type.eq(REGISTER_CALLBACK))
        .filter(tokens::revoked_at.is_null())
        .filter(tokens::activated_at.is_not_null())
        .select(TokenOwner::as_select())
        .first(conn)
        .await
        .optional()
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = integrations)]
pub struct IntegrationRow {
    pub id: i64,
    pub tenant_id: String,
    pub insurer: Insurer,
    pub environment: Environment,
    pub is_callback_active: bool,
    pub callback_registered_at: Option<DateTime<Utc>>,
    /// Set while the integration is paused (its callbacks are deferred).
    pub paused_at: Option<DateTime<Utc>>,
}

/// The integration, created if absent.
pub async fn ensure(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    insurer: Insurer,
    environment: Environment,
) -> QueryResult<IntegrationRow> {
    diesel::insert_into(integrations::table)
        .values((
            integrations::tenant_id.eq(tenant),
            integrations::insurer.eq(insurer),
            integrations::environment.eq(environment),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    integrations::table
        .filter(integrations::tenant_id.eq(tenant))
        .filter(integrations::insurer.eq(insurer))
        .filter(integrations::environment.eq(environment))
        .select(IntegrationRow::as_select())
        .first(conn)
        .await
}

pub async fn has_live_token(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        tokens::table
            .filter(tokens::integration_id.eq(integration_id))
            .filter(tokens::token_type.eq(REGISTER_CALLBACK))
            .filter(tokens::revoked_at.is_null())
            .filter(tokens::activated_at.is_not_null()),
    ))
    .get_result(conn)
    .await
}

/// Revokes the integration's live token (if any) and stores the hash of a new, live one. Call
/// it inside a transaction so the integration is never left without a token.
pub async fn rotate_token(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
    hash: &[u8],
) -> QueryResult<()> {
    revoke_live(conn, integration_id).await?;
    diesel::insert_into(tokens::table)
        .values((
            tokens::integration_id.eq(integration_id),
            tokens::token_type.eq(REGISTER_CALLBACK),
            tokens::token_hash.eq(hash),
            tokens::activated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

async fn revoke_live(conn: &mut AsyncPgConnection, integration_id: i64) -> QueryResult<()> {
    diesel::update(
        tokens::table
            .filter(tokens::integration_id.eq(integration_id))
            .filter(tokens::token_type.eq(REGISTER_CALLBACK))
            .filter(tokens::revoked_at.is_null())
            .filter(tokens::activated_at.is_not_null()),
    )
    .set(tokens::revoked_at.eq(diesel::dsl::now))
    .execute(conn)
    .await?;
    Ok(())
}

/// What a callback JWT's integration is now: whose (tenant, insurer) and whether it has a
/// live `registerCallback` token that was already live at `issued_at` (the JWT's `iat`, Unix
/// seconds; false once that token is revoked or replaced). `iat` counts whole seconds, so a
/// token activated within the JWT's second counts as live before it
/// (docs/proposal-callback.md, "Authentication"). None: no such integration.
pub async fn token_binding(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
    issued_at: i64,
) -> QueryResult<Option<TokenBinding>> {
    let Some(next_second) = DateTime::from_timestamp(issued_at.saturating_add(1), 0) else {
        return Ok(None);
    };
    integrations::table
        .find(integration_id)
        .select((
            integrations::tenant_id,
            integrations::insurer,
            diesel::dsl::exists(
                tokens::table
                    .filter(tokens::integration_id.eq(integration_id))
                    .filter(tokens::token_type.eq(REGISTER_CALLBACK))
                    .filter(tokens::revoked_at.is_null())
                    .filter(tokens::activated_at.lt(next_second)),
            ),
        ))
        .first::<(String, Insurer, bool)>(conn)
        .await
        .optional()
        .map(|row| {
            row.map(|(tenant_id, insurer, live)| TokenBinding {
                tenant_id,
                insurer,
                live,
            })
        })
}

/// An integration as a callback JWT issued for it is checked against ([`token_binding`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBinding {
    pub tenant_id: String,
    pub insurer: Insurer,
    /// Its Basic token the JWT was issued with is still live.
    pub live: bool,
}

/// The tenant's integrations, by id.
pub async fn list(conn: &mut AsyncPgConnection, tenant: &str) -> QueryResult<Vec<IntegrationRow>> {
    integrations::table
        .filter(integrations::tenant_id.eq(tenant))
        .order(integrations::id)
        .select(IntegrationRow::as_select())
        .load(conn)
        .await
}

/// The integration, whatever its tenant (the caller checks that).
pub async fn find(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<Option<IntegrationRow>> {
    integrations::table
        .find(id)
        .select(IntegrationRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// The integration, row-locked until the transaction ends: registrations of one integration
/// take turns here.
pub async fn lock(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<Option<IntegrationRow>> {
    integrations::table
        .find(id)
        .select(IntegrationRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// Whether a registration may start, after [`lock`] and inside its transaction.
#[derive(Debug, PartialEq, Eq)]
pub enum PendingSlot {
    /// No registration in flight (a stale pending token, older than the cutoff, was revoked).
    Free,
    /// Another registration of this integration is waiting for the insurer.
    Busy,
}

/// Frees the pending slot of a crashed registration (pending since before `stale_before`) and
/// tells whether another one is still in flight.
pub async fn claim_pending_slot(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
    stale_before: DateTime<Utc>,
) -> QueryResult<PendingSlot> {
    let pending = tokens::table
        .filter(tokens::integration_id.eq(integration_id))
        .filter(tokens::token_type.eq(REGISTER_CALLBACK))
        .filter(tokens::revoked_at.is_null())
        .filter(tokens::activated_at.is_null());
    diesel::update(pending.filter(tokens::created_at.lt(stale_before)))
        .set(tokens::revoked_at.eq(diesel::dsl::now))
        .execute(conn)
        .await?;
    let busy: bool = diesel::select(diesel::dsl::exists(pending))
        .get_result(conn)
        .await?;
    Ok(if busy {
        PendingSlot::Busy
    } else {
        PendingSlot::Free
    })
}

/// Stores a pending token made at `at` (it cannot authenticate yet; [`claim_pending_slot`]
/// compares `at` with its cutoff); returns its id.
pub async fn insert_pending_token(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
    hash: &[u8],
    at: DateTime<Utc>,
) -> QueryResult<i64> {
    diesel::insert_into(tokens::table)
        .values((
            tokens::integration_id.eq(integration_id),
            tokens::token_type.eq(REGISTER_CALLBACK),
            tokens::token_hash.eq(hash),
            tokens::created_at.eq(at),
        ))
        .returning(tokens::id)
        .get_result(conn)
        .await
}

/// After the insurer's 200, inside a transaction holding [`lock`]: the pending token replaces
/// the live one and the integration becomes active. False when the token is no longer pending
/// (a later registration declared it stale and took over): nothing is changed then.
pub async fn activate(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
    token_id: i64,
) -> QueryResult<bool> {
    let still_pending: bool = diesel::select(diesel::dsl::exists(
        tokens::table
            .find(token_id)
            .filter(tokens::revoked_at.is_null())
            .filter(tokens::activated_at.is_null()),
    ))
    .get_result(conn)
    .await?;
    if !still_pending {
        return Ok(false);
    }
    // The old live token goes first: at most one live token per integration (unique index).
    revoke_live(conn, integration_id).await?;
    diesel::update(tokens::table.find(token_id))
        .set(tokens::activated_at.eq(diesel::dsl::now))
        .execute(conn)
        .await?;
    diesel::update(integrations::table.find(integration_id))
        .set((
            integrations::is_callback_active.eq(true),
            integrations::callback_registered_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    Ok(true)
}

/// The insurer did not accept the registration: its pending token is revoked, never having
/// been live. The integration's live token and `is_callback_active` stay as they were.
pub async fn abandon(conn: &mut AsyncPgConnection, token_id: i64) -> QueryResult<()> {
    diesel::update(
        tokens::table
            .find(token_id)
            .filter(tokens::revoked_at.is_null())
            .filter(tokens::activated_at.is_null()),
    )
    .set(tokens::revoked_at.eq(diesel::dsl::now))
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether the integration is paused, read under a `FOR KEY SHARE` lock on its row that holds
/// until the transaction ends: every callback takes it while it decides and applies, so a
/// pause or resume step ([`hold_alone`]) waits for the callbacks in flight, and a callback
/// arriving meanwhile waits for that step and then reads the row as the step left it
/// (a locking read returns the newest committed version). One statement: the lock and the
/// read cannot disagree (docs/proposal-callback.md, "Pause and resume"). An unknown
/// integration is not paused. A callback with a result to apply takes the same lock in the
/// statement that locks its proposal (`proposals::lock_for_callback`); this one serves the
/// bodies that are not applied (unparsable, or an event without a result).
pub async fn hold_shared_is_paused(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
) -> QueryResult<bool> {
    integrations::table
        .find(integration_id)
        .select(integrations::paused_at.is_not_null())
        .for_key_share()
        .first(conn)
        .await
        .optional()
        .map(|p| p.unwrap_or(false))
}

/// Locks the integration's row alone until the transaction ends (`FOR UPDATE`, which
/// conflicts with the callbacks' [`hold_shared_is_paused`]): no callback of it is being
/// decided or applied meanwhile.
pub async fn hold_alone(conn: &mut AsyncPgConnection, integration_id: i64) -> QueryResult<()> {
    lock(conn, integration_id).await.map(|_| ())
}

/// Pauses the integration at `at` (keeping the first pause's time if it is paused already).
pub async fn set_paused(
    conn: &mut AsyncPgConnection,
    id: i64,
    at: DateTime<Utc>,
) -> QueryResult<IntegrationRow> {
    diesel::update(integrations::table.find(id))
        .set(
            integrations::paused_at.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>,
            >("coalesce(paused_at, ")
            .bind::<diesel::sql_types::Timestamptz, _>(at)
            .sql(")")),
        )
        .returning(IntegrationRow::as_returning())
        .get_result(conn)
        .await
}

/// Ends the integration's pause.
pub async fn clear_paused(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<IntegrationRow> {
    diesel::update(integrations::table.find(id))
        .set(integrations::paused_at.eq(None::<DateTime<Utc>>))
        .returning(IntegrationRow::as_returning())
        .get_result(conn)
        .await
}
