//! Who may do what: the profiles of the dispatch centre and the caller a request runs for.

use common::text_enum;
use serde::{Deserialize, Serialize};

use super::Refusal;

/// Profiles of the dispatch centre (docs/dispatch-routes.md, "Routes": the "who" of each
/// route). A title we do not know grants nothing.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    diesel::expression::AsExpression,
    diesel::deserialize::FromSqlRow,
)]
#[diesel(sql_type = diesel::sql_types::Text)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Profile {
    Admin,
    Tarm,
    MedicoRegulador,
    OperadorFrota,
    Other,
}

impl Profile {
    pub fn from_title(title: &str) -> Self {
        match title {
            "ADMIN" => Self::Admin,
            "TARM" => Self::Tarm,
            "MEDICO_REGULADOR" => Self::MedicoRegulador,
            "OPERADOR_FROTA" => Self::OperadorFrota,
            _ => Self::Other,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Self::Admin => "ADMIN",
            Self::Tarm => "TARM",
            Self::MedicoRegulador => "MEDICO_REGULADOR",
            Self::OperadorFrota => "OPERADOR_FROTA",
            Self::Other => "OTHER",
        }
    }
}

/// `profiles` as a refusal names them: their titles, comma-separated (`OPERADOR_FROTA,
/// MEDICO_REGULADOR`), so the caller learns who may instead.
pub fn titles(profiles: &[Profile]) -> String {
    profiles
        .iter()
        .map(|p| p.title())
        .collect::<Vec<_>>()
        .join(", ")
}

impl diesel::serialize::ToSql<diesel::sql_types::Text, diesel::pg::Pg> for Profile {
    fn to_sql<'b>(
        &'b self,
        out: &mut diesel::serialize::Output<'b, '_, diesel::pg::Pg>,
    ) -> diesel::serialize::Result {
        <str as diesel::serialize::ToSql<diesel::sql_types::Text, diesel::pg::Pg>>::to_sql(
            self.title(),
            out,
        )
    }
}

/// Any stored title reads: one we do not know is [`Profile::Other`].
impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg> for Profile {
    fn from_sql(bytes: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
        let title = <String as diesel::deserialize::FromSql<
            diesel::sql_types::Text,
            diesel::pg::Pg,
        >>::from_sql(bytes)?;
        Ok(Profile::from_title(&title))
    }
}

text_enum! {
    /// A user's `status` as this service writes it (`users.status`): only an active user
    /// signs in, is picked, or takes an incident.
    pub enum UserStatus {
        Active = "ativo",
        Inactive = "inativo",
    }
}

impl UserStatus {
    /// Whether `status`, the text of `users.status` (a column without a `CHECK`, so it may
    /// hold words this service does not write), means active.
    pub fn is_active(status: &str) -> bool {
        UserStatus::parse(status) == Some(UserStatus::Active)
    }
}

/// What an authenticated request knows about its caller.
#[derive(Debug, Clone)]
pub struct CurrentUser {
    pub id: i64,
    pub descriptive_name: String,
    pub profile: Profile,
}

impl CurrentUser {
    /// Refused (403, naming `allowed`) unless the caller has one of `allowed`.
    pub fn require(&self, allowed: &'static [Profile]) -> Result<(), Refusal> {
        if allowed.contains(&self.profile) {
            Ok(())
        } else {
            Err(Refusal::Forbidden {
                profile: self.profile,
                allowed,
            })
        }
    }

    pub fn is_admin(&self) -> bool {
        self.profile == Profile::Admin
    }
}

/// Who may call which route (docs/dispatch-routes.md, "Routes", the "who" column): every
/// profile set, declared here once. Routes name them by type (`routes::extract`).
pub mod may {
    use super::Profile::{self, *};

    /// Whoever may read an incident (and follow it on the WebSocket).
    pub const READ: &[Profile] = &[Admin, Tarm, MedicoRegulador, OperadorFrota];
    pub const FLEET: &[Profile] = &[OperadorFrota];
    pub const REGULATOR: &[Profile] = &[MedicoRegulador];
    pub const TARM: &[Profile] = &[Tarm];
    pub const FLEET_OR_REGULATOR: &[Profile] = &[OperadorFrota, MedicoRegulador];
    pub const REGULATOR_OR_TARM: &[Profile] = &[MedicoRegulador, Tarm];
    pub const TARM_OR_REGULATOR: &[Profile] = &[Tarm, MedicoRegulador];
    /// An incident's response times (docs/dispatch-routes.md, "Response times").
    pub const TIMES: &[Profile] = &[Admin, MedicoRegulador, OperadorFrota];
    /// The response-time reports and the manager's page.
    pub const REPORTS: &[Profile] = &[Admin, MedicoRegulador];
    /// Changing the centre's targets.
    pub const ADMIN: &[Profile] = &[Admin];
    /// Managing the fleet and the team, and reporting a unit's position (the unit's tracker
    /// signs in as a fleet operator) (docs/dispatch-routes.md, "Managing the fleet and the team").
    pub const FLEET_OR_ADMIN: &[Profile] = &[OperadorFrota, Admin];
    /// Placing an incident on the map: who takes the call, regulates or sends the units.
    pub const LOCATE: &[Profile] = &[Tarm, MedicoRegulador, OperadorFrota];
}
