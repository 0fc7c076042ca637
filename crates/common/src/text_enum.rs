//! [`text_enum!`](crate::text_enum!): a closed set of words stored in a `TEXT` column (whose
//! `CHECK` lists the same words) and written the same way on the wire. One declaration gives
//! the enum, `ALL`, `as_str`, `parse`, `Display`, serde (each variant spelled as its word),
//! an OpenAPI enum (`utoipa::ToSchema`) and diesel's mapping to `Text`, where a word the type
//! does not know is a database error naming the type and the word.
//!
//! The expansion names `serde`, `utoipa` and `diesel` directly, so a crate that uses the
//! macro depends on the three (both services do).

/// Declares a text enum; see the [module](crate::text_enum) for what it gives.
///
/// ```
/// common::text_enum! {
///     /// Where an incident is in its life.
///     pub enum State {
///         Registering = "registering",
///         Closed = "closed",
///     }
/// }
///
/// assert_eq!(State::parse("closed"), Some(State::Closed));
/// assert_eq!(State::parse("Closed"), None);
/// assert_eq!(State::Registering.as_str(), "registering");
/// assert_eq!(State::ALL, [State::Registering, State::Closed]);
/// assert_eq!(serde_json::to_string(&State::Closed).unwrap(), r#""closed""#);
/// ```
#[macro_export]
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:tt ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[derive(serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        #[derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow)]
        #[diesel(sql_type = diesel::sql_types::Text)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The value's one spelling, on the wire and in the database.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text ),+
                }
            }

            /// The value spelled `s`, if there is one.
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|v| v.as_str() == s)
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
            fn from_sql(value: diesel::pg::PgValue<'_>) -> diesel::deserialize::Result<Self> {
                let text = <String as diesel::deserialize::FromSql<
                    diesel::sql_types::Text,
                    diesel::pg::Pg,
                >>::from_sql(value)?;
                Self::parse(&text).ok_or_else(|| {
                    format!("unknown {} {text:?} in the database", stringify!($name)).into()
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::text_enum! {
        /// A test enum.
        pub enum Colour {
            Red = "red",
            /// A documented variant.
            DarkBlue = "DARK_BLUE",
        }
    }

    #[test]
    fn spelled_one_way_everywhere() {
        assert_eq!(Colour::ALL, [Colour::Red, Colour::DarkBlue]);
        assert_eq!(Colour::DarkBlue.as_str(), "DARK_BLUE");
        assert_eq!(Colour::parse("red"), Some(Colour::Red));
        assert_eq!(Colour::parse("Red"), None);
        assert_eq!(Colour::DarkBlue.to_string(), "DARK_BLUE");
        assert_eq!(
            serde_json::to_string(&Colour::DarkBlue).unwrap(),
            "\"DARK_BLUE\""
        );
        assert_eq!(
            serde_json::from_str::<Colour>("\"red\"").unwrap(),
            Colour::Red
        );
        assert!(serde_json::from_str::<Colour>("\"blue\"").is_err());
    }

    #[test]
    fn openapi_lists_the_words() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(Colour::schema()).unwrap();
        assert_eq!(schema["enum"], serde_json::json!(["red", "DARK_BLUE"]));
    }
}
