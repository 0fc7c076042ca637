//! Timestamps written as chrono writes them (RFC 3339, `Z`, as many fractional digits as the
//! value needs: 0, 3, 6 or 9), rendered whole and then escaped once: chrono's own
//! `Serialize` writes through `Display`, which hands serde_json one or two characters at a
//! time to escape (a fifth of `GET /incident/{id}`'s serialisation, bench/dispatch/README.md).
//! For `#[serde(serialize_with = "...")]` on the hot views' fields.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serializer;

/// A `DateTime<Utc>` field, the same text as its own `Serialize`.
pub fn rfc3339<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&at.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// An `Option<DateTime<Utc>>` field: `null`, or as [`rfc3339`].
pub fn rfc3339_opt<S: Serializer>(at: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => rfc3339(at, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde::Serialize;

    use super::*;

    #[derive(Serialize)]
    struct Fast {
        #[serde(serialize_with = "rfc3339")]
        at: DateTime<Utc>,
        #[serde(serialize_with = "rfc3339_opt")]
        maybe: Option<DateTime<Utc>>,
    }

    #[derive(Serialize)]
    struct Chrono {
        at: DateTime<Utc>,
        maybe: Option<DateTime<Utc>>,
    }

    #[test]
    fn the_text_is_chronos_own() {
        let base = Utc.with_ymd_and_hms(2026, 11, 29, 7, 5, 9).unwrap();
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .unwrap()
            .and_hms_nano_opt(23, 59, 59, 1_500_000_000)
            .unwrap()
            .and_utc();
        let far = Utc.with_ymd_and_hms(12026, 1, 2, 3, 4, 5).unwrap();
        let old = Utc.with_ymd_and_hms(-44, 3, 15, 0, 0, 0).unwrap();
        // Whole seconds, milli-, micro- and nanosecond fractions, a leap second, years
        // beyond four digits and before year 0.
        for at in [
            base,
            base + chrono::Duration::milliseconds(120),
            base + chrono::Duration::microseconds(984_216),
            base + chrono::Duration::nanoseconds(7),
            leap,
            far,
            old,
        ] {
            for maybe in [None, Some(at)] {
                let fast = serde_json::to_string(&Fast { at, maybe }).unwrap();
                let chrono = serde_json::to_string(&Chrono { at, maybe }).unwrap();
                assert_eq!(fast, chrono);
            }
        }
    }
}
