//! `proposal-callback seed`: deterministic demo data (docs/proposal-callback.md). Running it again adds
//! nothing: tenants, integrations and proposals are created only when absent (an existing
//! proposal keeps whatever status callbacks gave it).
//!
//! Tokens: only hashes are stored, so a token can be printed only when it is made. The
//! first run makes one per integration and prints it; later runs keep the existing tokens
//! and print `"token": null`, unless `--rotate-tokens` asks for new ones (the old ones are
//! revoked).

use common::Clock;
use common::db::Conn;
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde::Serialize;

use crate::auth::basic::{generate_token, token_hash};
use crate::insurer::INSURERS;
use crate::proposal::status::Status;
use crate::registration::config::Environment;
use crate::schema::proposal::tenants;
use crate::store::{integrations, proposals};

pub const DEMO_TENANTS: [(&str, &str); 2] = [
    ("demo-a", "Imobiliária Demo A"),
    ("demo-b", "Imobiliária Demo B"),
];

/// The proposals named in the insurers' example payloads (`tests/fixtures/insurers`), all `under_analysis`
/// for tenant `demo-a`.
pub const DEMO_PROPOSALS: [&str; 9] = [
    "POR-2026-000123",
    "POR-2026-000124",
    "POR-2026-000125",
    "548812",
    "548813",
    "548814",
    "99120",
    "99121",
    "99122",
];

pub const DEMO_ENVIRONMENT: Environment = Environment::Homologation;

#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub tenants: Vec<String>,
    pub integrations: Vec<SeededIntegration>,
    pub proposals: Vec<SeededProposal>,
}

#[derive(Debug, Serialize)]
pub struct SeededIntegration {
    pub id: i64,
    pub tenant: String,
    pub insurer: String,
    pub environment: Environment,
    /// The Basic token for `/callback/auth`, shown this once; null when an earlier run made it.
    pub token: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct SeededProposal {
    pub tenant: String,
    pub proposal_id: String,
    pub status: Status,
    pub contact_email: String,
}

pub fn demo_email(proposal_id: &str) -> String {
    format!(
        "locatario.{}@demo-a.example.com",
        proposal_id.to_ascii_lowercase()
    )
}

/// Seeds in one transaction; proposals are created at `clock`'s now.
pub async fn run(
    conn: &mut Conn,
    clock: &Clock,
    rotate_tokens: bool,
) -> anyhow::Result<SeedReport> {
    Ok(conn
        .transaction::<_, diesel::result::Error, _>(async |conn| {
            seed(conn, clock, rotate_tokens).await
        })
        .await?)
}

async fn seed(
    conn: &mut diesel_async::AsyncPgConnection,
    clock: &Clock,
    rotate_tokens: bool,
) -> QueryResult<SeedReport> {
    let rows: Vec<_> = DEMO_TENANTS
        .iter()
        .map(|(id, name)| (tenants::id.eq(*id), tenants::name.eq(*name)))
        .collect();
    diesel::insert_into(tenants::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;

    let mut seeded = Vec::new();
    for (tenant, _) in DEMO_TENANTS {
        for insurer in INSURERS {
            let integration = integrations::ensure(conn, tenant, insurer, DEMO_ENVIRONMENT).await?;
            let token =
                if rotate_tokens || !integrations::has_live_token(conn, integration.id).await? {
                    let token = generate_token();
                    integrations::rotate_token(conn, integration.id, &token_hash(&token)).await?;
                    Some(token)
                } else {
                    None
                };
            seeded.push(SeededIntegration {
                id: integration.id,
                tenant: tenant.to_owned(),
                insurer: insurer.to_owned(),
                environment: integration.environment,
                token,
            });
        }
    }

    let mut demo = Vec::new();
    for id in DEMO_PROPOSALS {
        proposals::insert_if_absent(conn, "demo-a", id, &demo_email(id), clock.now()).await?;
        // Inside seed's transaction: the lock is released at its end.
        if let Some((p, _)) = proposals::lock(conn, "demo-a", id).await? {
            demo.push(SeededProposal {
                tenant: p.tenant_id,
                proposal_id: p.proposal_id,
                status: p.status,
                contact_email: p.contact_email,
            });
        }
    }

    Ok(SeedReport {
        tenants: DEMO_TENANTS
            .iter()
            .map(|(id, _)| (*id).to_owned())
            .collect(),
        integrations: seeded,
        proposals: demo,
    })
}
