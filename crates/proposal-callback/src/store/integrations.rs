//! Integrations and their Token records (hash only).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::error::Error;
use crate::schema::{integrations, tokens};

/// `tokenType` of the Basic token an integration registers with its insurer.
pub const REGISTER_CALLBACK: &str = "registerCallback";

/// A live token's integration.
#[derive(Debug, Clone, Queryable)]
pub struct TokenOwner {
    pub token_hash: Vec<u8>,
    pub integration_id: i64,
    pub tenant_id: String,
    pub insurer: String,
}

/// The integration holding a live `registerCallback` token with this SHA-256.
pub async fn find_by_token_hash(
    conn: &mut AsyncPgConnection,
    hash: &[u8],
) -> Result<Option<TokenOwner>, Error> {
    Ok(tokens::table
        .inner_join(integrations::table)
        .filter(tokens::token_hash.eq(hash))
        .filter(tokens::token_type.eq(REGISTER_CALLBACK))
        .filter(tokens::revoked_at.is_null())
        .select((
            tokens::token_hash,
            integrations::id,
            integrations::tenant_id,
            integrations::insurer,
        ))
        .first(conn)
        .await
        .optional()?)
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = integrations)]
pub struct IntegrationRow {
    pub id: i64,
    pub tenant_id: String,
    pub insurer: String,
    pub environment: String,
    pub is_callback_active: bool,
}

/// The integration, created if absent.
pub async fn ensure(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    insurer: &str,
    environment: &str,
) -> Result<IntegrationRow, Error> {
    diesel::insert_into(integrations::table)
        .values((
            integrations::tenant_id.eq(tenant),
            integrations::insurer.eq(insurer),
            integrations::environment.eq(environment),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(integrations::table
        .filter(integrations::tenant_id.eq(tenant))
        .filter(integrations::insurer.eq(insurer))
        .filter(integrations::environment.eq(environment))
        .select(IntegrationRow::as_select())
        .first(conn)
        .await?)
}

pub async fn has_live_token(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
) -> Result<bool, Error> {
    Ok(diesel::select(diesel::dsl::exists(
        tokens::table
            .filter(tokens::integration_id.eq(integration_id))
            .filter(tokens::token_type.eq(REGISTER_CALLBACK))
            .filter(tokens::revoked_at.is_null()),
    ))
    .get_result(conn)
    .await?)
}

/// Revokes the integration's live token (if any) and stores the hash of a new one. Call it
/// inside a transaction so the integration is never left without a token.
pub async fn rotate_token(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
    hash: &[u8],
) -> Result<(), Error> {
    diesel::update(
        tokens::table
            .filter(tokens::integration_id.eq(integration_id))
            .filter(tokens::token_type.eq(REGISTER_CALLBACK))
            .filter(tokens::revoked_at.is_null()),
    )
    .set(tokens::revoked_at.eq(diesel::dsl::now))
    .execute(conn)
    .await?;
    diesel::insert_into(tokens::table)
        .values((
            tokens::integration_id.eq(integration_id),
            tokens::token_type.eq(REGISTER_CALLBACK),
            tokens::token_hash.eq(hash),
        ))
        .execute(conn)
        .await?;
    Ok(())
}
