//! `dispatch-api seed`: deterministic demo data. Running it again changes nothing.

use common::db::Conn;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use crate::auth::Profile;
use crate::schema::{profiles, users};

const PROFILES: [(Profile, &str); 4] = [
    (Profile::Admin, "Administrador"),
    (Profile::Tarm, "Técnico Auxiliar de Regulação Médica"),
    (Profile::MedicoRegulador, "Médico Regulador"),
    (Profile::OperadorFrota, "Operador de Frota"),
];

/// The logins the README and the tests rely on: one active user per profile, one inactive.
pub const DEMO_USERS: [(&str, &str, Profile, &str); 5] = [
    ("admin", "Ana Administradora", Profile::Admin, "ativo"),
    ("tarm", "Tiago Atendente", Profile::Tarm, "ativo"),
    (
        "regulador",
        "Dra. Regina Reguladora",
        Profile::MedicoRegulador,
        "ativo",
    ),
    ("frota", "Fábio da Frota", Profile::OperadorFrota, "ativo"),
    ("inativo", "Ivo Inativo", Profile::Tarm, "inativo"),
];

#[derive(Debug, Serialize)]
pub struct SeededUser {
    pub id: i64,
    pub login: String,
    pub profile: String,
    pub status: String,
}

#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub users: Vec<SeededUser>,
}

pub async fn run(conn: &mut Conn) -> anyhow::Result<SeedReport> {
    use diesel_async::AsyncConnection;
    conn.transaction::<_, anyhow::Error, _>(async |conn| {
        let rows: Vec<_> = PROFILES
            .iter()
            .map(|(p, text)| (profiles::title.eq(p.title()), profiles::text.eq(*text)))
            .collect();
        diesel::insert_into(profiles::table)
            .values(rows)
            .on_conflict(profiles::title)
            .do_update()
            .set(profiles::text.eq(excluded(profiles::text)))
            .execute(conn)
            .await?;
        let mut report = SeedReport { users: Vec::new() };
        for (login, name, profile, status) in DEMO_USERS {
            let profile_id: i32 = profiles::table
                .filter(profiles::title.eq(profile.title()))
                .select(profiles::id)
                .first(conn)
                .await?;
            let id: i64 = diesel::insert_into(users::table)
                .values((
                    users::login.eq(login),
                    users::descriptive_name.eq(name),
                    users::profile_id.eq(profile_id),
                    users::status.eq(status),
                ))
                .on_conflict(users::login)
                .do_update()
                .set((
                    users::descriptive_name.eq(excluded(users::descriptive_name)),
                    users::profile_id.eq(excluded(users::profile_id)),
                    users::status.eq(excluded(users::status)),
                ))
                .returning(users::id)
                .get_result(conn)
                .await?;
            report.users.push(SeededUser {
                id,
                login: login.to_owned(),
                profile: profile.title().to_owned(),
                status: status.to_owned(),
            });
        }
        Ok(report)
    })
    .await
}
