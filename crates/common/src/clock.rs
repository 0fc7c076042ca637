//! The one source of "now" the services ask (docs/architecture.md, "Time").
//!
//! Production code holds a [`Clock`] (in its application state) and asks it for the time
//! instead of calling `Utc::now()` or writing PostgreSQL's `now()`: a write records the
//! instant its clock gave, so the row, its history entry and its event agree to the
//! microsecond. Tests and the demo seed hold a manual clock they set and advance, so a test
//! never compares a fixed date with the wall clock and the demo's timeline ends at the moment
//! it is seeded.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Duration, Utc};

/// The time, from the system or from whoever holds a manual clock. Cheap to clone; the
/// clones of a manual clock share its hands.
#[derive(Clone, Debug, Default)]
pub struct Clock(Source);

#[derive(Clone, Debug, Default)]
enum Source {
    #[default]
    System,
    /// Microseconds since the Unix epoch, set by the holder.
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// The system's clock: what every service runs on.
    pub fn system() -> Self {
        Self(Source::System)
    }

    /// A clock that stands at `at` until it is set or advanced.
    pub fn manual(at: DateTime<Utc>) -> Self {
        Self(Source::Manual(Arc::new(AtomicI64::new(
            at.timestamp_micros(),
        ))))
    }

    /// Now, to the microsecond (PostgreSQL's precision, so what is written reads back equal).
    pub fn now(&self) -> DateTime<Utc> {
        let micros = match &self.0 {
            Source::System => Utc::now().timestamp_micros(),
            Source::Manual(at) => at.load(Ordering::Acquire),
        };
        DateTime::from_timestamp_micros(micros).unwrap_or_default()
    }

    /// Sets a manual clock to `at`; a system clock cannot be set and ignores it.
    pub fn set(&self, at: DateTime<Utc>) {
        if let Source::Manual(hands) = &self.0 {
            hands.store(at.timestamp_micros(), Ordering::Release);
        }
    }

    /// Moves a manual clock forward (or back) by `by`; a system clock ignores it.
    pub fn advance(&self, by: Duration) {
        if let (Source::Manual(hands), Some(micros)) = (&self.0, by.num_microseconds()) {
            hands.fetch_add(micros, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_stands_still_until_moved_and_its_clones_share_it() {
        // Truncated to the microsecond, as PostgreSQL stores it.
        let fine = DateTime::from_timestamp(1_800_000_000, 123_456_789).unwrap();
        assert_eq!(
            Clock::manual(fine).now().timestamp_subsec_nanos(),
            123_456_000
        );
        let start = DateTime::from_timestamp(1_800_000_000, 123_456_000).unwrap();
        let clock = Clock::manual(start);
        let clone = clock.clone();
        assert_eq!(clock.now(), start);
        assert_eq!(clock.now(), clone.now());
        clock.advance(Duration::minutes(5));
        assert_eq!(clone.now() - clock.now(), Duration::zero());
        assert_eq!(
            (clone.now() - start).num_seconds(),
            300,
            "advanced five minutes"
        );
        clone.set(start);
        assert_eq!(clock.now().timestamp(), 1_800_000_000);
    }

    #[test]
    fn the_system_clock_follows_the_system_and_ignores_setting() {
        let clock = Clock::system();
        let before = Utc::now() - Duration::seconds(1);
        clock.set(DateTime::from_timestamp(0, 0).unwrap());
        clock.advance(Duration::days(-3));
        let now = clock.now();
        assert!(now >= before && now <= Utc::now() + Duration::seconds(1));
    }
}
