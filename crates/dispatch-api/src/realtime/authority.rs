//! When a socket's authority ends, and the close code and reason it ends with
//! (docs/dispatch-realtime.md, "Close codes"): its token expires, or its user is deactivated,
//! deleted or given another profile.

use crate::domain::user::{Profile, UserStatus};

/// Why a socket's authority ended; the socket closes with this code and reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The token's `exp` passed.
    TokenExpired,
    /// The user is no longer active.
    UserDeactivated,
    /// The user no longer exists.
    UserDeleted,
    /// The user's profile is not the one the socket was opened with.
    ProfileChanged,
    /// The user changed and could not be read again (the database is unreachable).
    Unconfirmed,
}

/// The close code of a socket whose authority ended (docs/dispatch-realtime.md, "Close
/// codes").
pub const AUTHORITY_ENDED: u16 = 4401;

impl Ending {
    /// The user the socket was opened for (with `profile`), as the database has it now
    /// (`status` and profile; `None` when the user is gone): why the socket must end, if it
    /// must.
    pub fn judge(profile: Profile, now: Option<(&str, Profile)>) -> Option<Ending> {
        match now {
            None => Some(Ending::UserDeleted),
            Some((status, _)) if !UserStatus::is_active(status) => Some(Ending::UserDeactivated),
            Some((_, p)) if p != profile => Some(Ending::ProfileChanged),
            Some(_) => None,
        }
    }

    pub fn code(self) -> u16 {
        match self {
            Ending::Unconfirmed => 1013,
            _ => AUTHORITY_ENDED,
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            Ending::TokenExpired => "token expired",
            Ending::UserDeactivated => "user deactivated",
            Ending::UserDeleted => "user deleted",
            Ending::ProfileChanged => "profile changed",
            Ending::Unconfirmed => "user changed and cannot be confirmed; reconnect",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_user_ends_the_socket() {
        assert_eq!(
            Ending::judge(Profile::Tarm, None),
            Some(Ending::UserDeleted)
        );
    }

    #[test]
    fn an_inactive_user_ends_the_socket() {
        assert_eq!(
            Ending::judge(Profile::Tarm, Some(("inativo", Profile::Tarm))),
            Some(Ending::UserDeactivated)
        );
    }

    #[test]
    fn another_profile_ends_the_socket() {
        assert_eq!(
            Ending::judge(
                Profile::Tarm,
                Some((UserStatus::Active.as_str(), Profile::MedicoRegulador))
            ),
            Some(Ending::ProfileChanged)
        );
        assert_eq!(
            Ending::judge(
                Profile::Tarm,
                Some((UserStatus::Active.as_str(), Profile::Tarm))
            ),
            None
        );
    }

    #[test]
    fn only_an_unconfirmed_change_closes_with_try_again_later() {
        assert_eq!(Ending::Unconfirmed.code(), 1013);
        for ending in [
            Ending::TokenExpired,
            Ending::UserDeactivated,
            Ending::UserDeleted,
            Ending::ProfileChanged,
        ] {
            assert_eq!(ending.code(), AUTHORITY_ENDED, "{ending:?}");
        }
    }
}
