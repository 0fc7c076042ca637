//! `proposal-callback seed`: deterministic demo data. Running it again changes nothing.

use common::db::Conn;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use crate::schema::tenants;

pub const DEMO_TENANTS: [(&str, &str); 2] = [
    ("demo-a", "Imobiliária Demo A"),
    ("demo-b", "Imobiliária Demo B"),
];

#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub tenants: Vec<String>,
}

pub async fn run(conn: &mut Conn) -> anyhow::Result<SeedReport> {
    let rows: Vec<_> = DEMO_TENANTS
        .iter()
        .map(|(id, name)| (tenants::id.eq(*id), tenants::name.eq(*name)))
        .collect();
    diesel::insert_into(tenants::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(SeedReport {
        tenants: DEMO_TENANTS
            .iter()
            .map(|(id, _)| (*id).to_owned())
            .collect(),
    })
}
