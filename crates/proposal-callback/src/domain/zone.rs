//! Local times: each tenant has an IANA time zone (`tenants.time_zone`, default
//! [`DEFAULT_ZONE`]), read through the tz database (`chrono-tz`), so a tenant in Manaus
//! (UTC-04:00) or Rio Branco (UTC-05:00) reads its own hours, and a date when São Paulo still
//! kept daylight saving time (before 2019) reads with the offset it had then. Nothing in this
//! service uses a fixed offset: a test walks the sources for one
//! (docs/proposal-callback.md, "Time zones").

use std::str::FromStr;

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
pub use chrono_tz::Tz;

/// A tenant's zone unless it says otherwise; also the insurers' own clocks (they are in São
/// Paulo: `docs/insurers.md`).
pub const DEFAULT_ZONE: Tz = chrono_tz::America::Sao_Paulo;

/// The zone named `name`, exactly as the tz database spells it (`America/Manaus`, `UTC`): no
/// case folded, no space trimmed, no fixed offset such as `-03:00`. The error says what
/// is wrong, for a 400 naming the field.
pub fn parse(name: &str) -> Result<Tz, String> {
    Tz::from_str(name).map_err(|_| {
        format!("{name:?} is not a time zone of the tz database (such as America/Sao_Paulo)")
    })
}

/// The zone a stored name says: the column only ever holds names [`parse`] accepted; one it
/// does not know (a tz database that dropped it) reads as [`DEFAULT_ZONE`], said in the log.
pub fn stored(name: &str) -> Tz {
    parse(name).unwrap_or_else(|e| {
        tracing::warn!(
            time_zone = name,
            "a stored time zone is unknown, {DEFAULT_ZONE} used: {e}"
        );
        DEFAULT_ZONE
    })
}

/// How a person is told which clock a time is on (pt-BR): `horário de Brasília` for São
/// Paulo's (the name every Brazilian knows), `fuso America/Manaus` for any other.
pub fn label(zone: Tz) -> String {
    if zone == DEFAULT_ZONE {
        "horário de Brasília".to_owned()
    } else {
        format!("fuso {}", zone.name())
    }
}

/// Why a local time names no instant: a clock set forward skipped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkippedTime;

/// The instant a wall clock in `zone` showed `local`. A time the clock showed twice (set
/// back) is the first of them; a time it skipped (set forward) is no instant.
pub fn instant(zone: Tz, local: NaiveDateTime) -> Result<DateTime<Utc>, SkippedTime> {
    zone.from_local_datetime(&local)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
        .ok_or(SkippedTime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveDate, Timelike};

    fn local(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
    }

    #[test]
    fn names_are_the_tz_databases_exactly() {
        assert_eq!(parse("America/Manaus"), Ok(chrono_tz::America::Manaus));
        assert_eq!(parse("UTC"), Ok(chrono_tz::UTC));
        for bad in [
            "america/manaus",
            " America/Manaus",
            "-03:00",
            "UTC-3",
            "",
            "Brasília",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(stored("Nowhere/Atlantis"), DEFAULT_ZONE);
    }

    #[test]
    fn offsets_follow_the_zone_and_the_date() {
        let at = |zone: Tz, s: &str| instant(zone, local(s)).unwrap().to_rfc3339();
        // Manaus and Rio Branco: one and two hours behind Brasília.
        assert_eq!(
            at(chrono_tz::America::Manaus, "2026-11-24 11:00"),
            "2026-11-24T15:00:00+00:00"
        );
        assert_eq!(
            at(chrono_tz::America::Rio_Branco, "2026-11-24 10:00"),
            "2026-11-24T15:00:00+00:00"
        );
        // São Paulo kept daylight saving time (UTC-02:00) until February 2019.
        assert_eq!(
            at(DEFAULT_ZONE, "2018-12-01 10:00"),
            "2018-12-01T12:00:00+00:00"
        );
        assert_eq!(
            at(DEFAULT_ZONE, "2026-12-01 10:00"),
            "2026-12-01T13:00:00+00:00"
        );
        // 2019-02-16 23:30 happened twice (clocks set back at midnight): the first one.
        assert_eq!(
            at(DEFAULT_ZONE, "2019-02-16 23:30"),
            "2019-02-17T01:30:00+00:00"
        );
        // 2018-11-04 00:30 never happened (clocks set forward to 01:00).
        assert_eq!(
            instant(DEFAULT_ZONE, local("2018-11-04 00:30")),
            Err(SkippedTime)
        );
        let back = instant(
            DEFAULT_ZONE,
            NaiveDate::from_ymd_opt(2018, 11, 4)
                .unwrap()
                .and_hms_opt(1, 0, 0)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(back.hour(), 3);
    }
}
