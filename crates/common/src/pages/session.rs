//! The pages' server-side sessions (docs/operations.md, "The integrations console";
//! docs/dispatch-routes.md, "The manager's page"): what both services share.
//!
//! - A session is named by a random 256-bit [`SessionId`], the only thing the cookie holds
//!   (never the token pasted at sign-in). The database keeps its SHA-256 ([`SessionId::hash`])
//!   alone, so a copy of the table opens no session.
//! - A session ends at the first of: its sign-out (the row revoked), [`SessionRules::idle`]
//!   without a request (`PAGE_SESSION_IDLE`), its absolute end ([`SessionRules::expires_at`]:
//!   `PAGE_SESSION_MAX` after sign-in, never later than the pasted token's own `exp`), and,
//!   in each service, whatever its own rule adds (dispatch: its user no longer active).
//! - A request's session is judged by [`SessionRules::judge`]; its `last_seen_at` is written
//!   at most once a [`TOUCH_EVERY`] ([`SessionRules::needs_touch`]), so the idle end may come
//!   up to that much early.
//!
//! Each service keeps its sessions in its own table and store module, and prunes the ended
//! ones when someone signs in.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use clap::Args;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::config::{positive_duration, show};

/// `PAGE_SESSION_IDLE` when unset: a page left alone this long needs a new sign-in.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);
/// `PAGE_SESSION_MAX` when unset: the longest a session lives, however busy.
pub const DEFAULT_MAX: Duration = Duration::from_secs(8 * 3600);
/// A session's `last_seen_at` is written at most this often.
pub const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// Characters of a session id in the cookie: 32 bytes in unpadded base64url.
const ID_CHARS: usize = 43;

/// A session's name: 256 random bits from the operating system's generator (through
/// `rand`'s thread generator, a CSPRNG seeded and reseeded by it). Shown only to the
/// browser that signed in ([`SessionId::cookie_value`]); stored only as its hash.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionId([u8; 32]);

impl std::fmt::Debug for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionId(..)")
    }
}

impl SessionId {
    /// A new random id.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        SessionId(bytes)
    }

    /// The id a cookie carries: exactly 43 base64url characters, else none (a cookie of
    /// another shape names no session, and is never looked up).
    pub fn parse(value: &str) -> Option<Self> {
        if value.len() != ID_CHARS {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(value).ok()?;
        Some(SessionId(bytes.try_into().ok()?))
    }

    /// What the cookie holds.
    pub fn cookie_value(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.0)
    }

    /// What the database holds: the id's SHA-256. A 256-bit random id needs no salt nor a
    /// slow hash: guessing one is as hard as guessing the id.
    pub fn hash(&self) -> Vec<u8> {
        Sha256::digest(self.0).to_vec()
    }
}

/// A stored session's times, as the rules judge them.
#[derive(Debug, Clone, Copy)]
pub struct SessionTimes {
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Why a stored session no longer opens the pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Signed out (or ended by the service: its user deactivated).
    Revoked,
    /// No request for [`SessionRules::idle`].
    Idle,
    /// Past its absolute end.
    Expired,
}

impl Ended {
    /// What the sign-in page says, in Portuguese.
    pub fn reason(self) -> &'static str {
        match self {
            Ended::Revoked => "A sessão foi encerrada.",
            Ended::Idle => "A sessão ficou parada por tempo demais.",
            Ended::Expired => "A sessão chegou ao fim do seu prazo.",
        }
    }
}

/// How long sessions live: `PAGE_SESSION_IDLE` and `PAGE_SESSION_MAX`, flattened into both
/// services' settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Args)]
pub struct SessionRules {
    /// How long a signed-in page session (the manager's /reports, the integrations console) lasts without a request before it needs a new sign-in
    #[arg(long = "page-session-idle", env = "PAGE_SESSION_IDLE", default_value = show(DEFAULT_IDLE), value_parser = positive_duration)]
    pub idle: Duration,

    /// The longest a page session lasts from its sign-in, however busy (never past the pasted token's own expiry)
    #[arg(long = "page-session-max", env = "PAGE_SESSION_MAX", default_value = show(DEFAULT_MAX), value_parser = positive_duration)]
    pub max: Duration,
}

impl Default for SessionRules {
    fn default() -> Self {
        Self {
            idle: DEFAULT_IDLE,
            max: DEFAULT_MAX,
        }
    }
}

fn chrono(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}

impl SessionRules {
    /// The absolute end of a session signed in at `now` with a token that has `token_left`
    /// of its life left: [`SessionRules::max`] from now, or the token's end if sooner.
    pub fn expires_at(&self, now: DateTime<Utc>, token_left: Duration) -> DateTime<Utc> {
        now + chrono(self.max.min(token_left))
    }

    /// Whether the session still opens the pages at `now`, or why not.
    pub fn judge(&self, now: DateTime<Utc>, times: &SessionTimes) -> Result<(), Ended> {
        if times.revoked_at.is_some() {
            Err(Ended::Revoked)
        } else if now >= times.expires_at {
            Err(Ended::Expired)
        } else if now >= times.last_seen_at + chrono(self.idle) {
            Err(Ended::Idle)
        } else {
            Ok(())
        }
    }

    /// Whether a request at `now` should write `last_seen_at` (at most once a
    /// [`TOUCH_EVERY`]).
    pub fn needs_touch(&self, now: DateTime<Utc>, last_seen_at: DateTime<Utc>) -> bool {
        now >= last_seen_at + chrono(TOUCH_EVERY)
    }

    /// The oldest `last_seen_at` of a session that may still be live at `now`: those seen
    /// before it are idle, and pruned.
    pub fn idle_before(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        now - chrono(self.idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn an_id_is_random_goes_into_a_cookie_as_is_and_is_stored_hashed() {
        let a = SessionId::generate();
        let b = SessionId::generate();
        assert_ne!(a, b);
        let value = a.cookie_value();
        assert_eq!(value.len(), 43);
        assert!(
            value
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_eq!(SessionId::parse(&value), Some(a.clone()));
        assert_eq!(a.hash().len(), 32);
        assert_ne!(a.hash(), a.0.to_vec());
        assert_ne!(a.hash(), value.as_bytes());
        assert_eq!(format!("{a:?}"), "SessionId(..)", "never in a log");
    }

    #[test]
    fn only_an_ids_shape_is_read_from_a_cookie() {
        for bad in [
            "",
            "a.b.c",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig-_",
            &"A".repeat(42),
            &"A".repeat(44),
            &"=".repeat(43),
            &format!("{}+", "A".repeat(42)),
        ] {
            assert_eq!(SessionId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_session_ends_at_sign_out_idle_or_its_absolute_end() {
        let rules = SessionRules::default();
        let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap();
        let min = |m: i64| chrono::Duration::minutes(m);
        // At most PAGE_SESSION_MAX, never past the token.
        assert_eq!(
            rules.expires_at(t0, Duration::from_secs(24 * 3600)),
            t0 + min(8 * 60)
        );
        assert_eq!(rules.expires_at(t0, Duration::from_secs(600)), t0 + min(10));
        let times = SessionTimes {
            last_seen_at: t0,
            expires_at: t0 + min(8 * 60),
            revoked_at: None,
        };
        assert_eq!(rules.judge(t0 + min(29), &times), Ok(()));
        assert_eq!(rules.judge(t0 + min(30), &times), Err(Ended::Idle));
        let busy = SessionTimes {
            last_seen_at: t0 + min(8 * 60 - 1),
            ..times
        };
        assert_eq!(rules.judge(t0 + min(8 * 60), &busy), Err(Ended::Expired));
        let revoked = SessionTimes {
            revoked_at: Some(t0),
            ..times
        };
        assert_eq!(rules.judge(t0, &revoked), Err(Ended::Revoked));
        assert!(!rules.needs_touch(t0 + chrono::Duration::seconds(59), t0));
        assert!(rules.needs_touch(t0 + min(1), t0));
        assert_eq!(rules.idle_before(t0), t0 - min(30));
    }
}
