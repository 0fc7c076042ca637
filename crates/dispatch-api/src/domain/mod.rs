//! The rules of the dispatch centre, with no HTTP and no queries in them: the incident and
//! dispatch state machines (each one table that every write consults and the tests
//! enumerate), the profiles, the phone rule, and the refusals a rule can answer with.
//!
//! The enums here are stored as text columns; [`text_enum!`] gives each its one spelling,
//! used alike by serde, OpenAPI and diesel.

/// An enum spelled as text everywhere: `as_str`/`parse`, `Display`, serde, an OpenAPI enum,
/// and diesel's `Text` (a spelling the type does not know is a database error).
macro_rules! text_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:tt,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[derive(serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        #[derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow)]
        #[diesel(sql_type = diesel::sql_types::Text)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.into_iter().find(|v| v.as_str() == s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl diesel::serialize::ToSql<diesel::sql_types::Text, diesel::pg::Pg> for $name {
            fn to_sql<'b>(
                &'b self,
                out: &mut diesel::serialize::Output<'b, '_, diesel::pg::Pg>,
            ) -> diesel::serialize::Result {
                <str as diesel::serialize::ToSql<diesel::sql_types::Text, diesel::pg::Pg>>::to_sql(
                    self.as_str(),
                    out,
                )
            }
        }

        impl diesel::deserialize::FromSql<diesel::sql_types::Text, diesel::pg::Pg> for $name {
            fn from_sql(bytes: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
                let text = <String as diesel::deserialize::FromSql<
                    diesel::sql_types::Text,
                    diesel::pg::Pg,
                >>::from_sql(bytes)?;
                $name::parse(&text).ok_or_else(|| {
                    format!(concat!("`{}` is not a ", stringify!($name)), text).into()
                })
            }
        }
    };
}

pub mod dispatch;
pub mod form;
pub mod incident;
pub mod phone;
pub mod queue;
pub mod refusal;
pub mod user;

pub use refusal::Refusal;
