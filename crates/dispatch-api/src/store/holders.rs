//! Who holds an incident: its regulator (a technical decision, a send-to) and the one it was
//! transferred to. When they change, the users who came to hold it and those who no longer
//! do are announced on [`MINE_CHANNEL`], for the sockets following their own queue `mine`
//! (docs/dispatch-realtime.md, "Personal work").

use diesel_async::AsyncPgConnection;

use crate::store::error::Result;
use crate::store::writes::Written;

/// `NOTIFY` channel of incidents coming to a user or leaving them: payload
/// `<id>:<version>:<state>:<users who hold it now>:<users who no longer do>` (each a
/// comma-separated list of user ids, possibly empty), sent by the write in its transaction.
pub const MINE_CHANNEL: &str = "dispatch_mine";

/// An incident's holders: its regulator and its assignee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holders {
    pub regulator: Option<i64>,
    pub assigned_to: Option<i64>,
}

impl Holders {
    fn users(self) -> impl Iterator<Item = i64> {
        self.regulator.into_iter().chain(self.assigned_to)
    }

    fn holds(self, user: i64) -> bool {
        self.users().any(|u| u == user)
    }
}

/// The payload announcing that `written`'s incident passed from `before` to `after`, or
/// `None` when nobody came to hold it and nobody stopped (the same people, in other roles
/// or not, still hold it).
pub fn payload(written: &Written, before: Holders, after: Holders) -> Option<String> {
    let list = |from: Holders, not_in: Holders| {
        let mut ids: Vec<i64> = from.users().filter(|u| !not_in.holds(*u)).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    };
    let (came, left) = (list(after, before), list(before, after));
    if came.is_empty() && left.is_empty() {
        return None;
    }
    Some(format!(
        "{}:{}:{}:{came}:{left}",
        written.id, written.version, written.state
    ))
}

/// Queues the announcement (delivered on commit only) when the holders changed.
pub async fn announce(
    conn: &mut AsyncPgConnection,
    written: &Written,
    before: Holders,
    after: Holders,
) -> Result<()> {
    if let Some(payload) = payload(written, before, after) {
        common::listen::notify(conn, MINE_CHANNEL, &payload).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::incident::State;

    fn h(regulator: Option<i64>, assigned_to: Option<i64>) -> Holders {
        Holders {
            regulator,
            assigned_to,
        }
    }

    #[test]
    fn the_payload_names_who_came_and_who_left() {
        let w = Written {
            id: 12,
            version: 5,
            state: State::Regulated,
        };
        assert_eq!(
            payload(&w, h(Some(3), None), h(Some(4), None)).as_deref(),
            Some("12:5:regulated:4:3")
        );
        assert_eq!(
            payload(&w, h(Some(3), None), h(Some(3), Some(9))).as_deref(),
            Some("12:5:regulated:9:")
        );
        // Still held by 3 as the assignee: nobody left.
        assert_eq!(
            payload(&w, h(Some(3), Some(3)), h(Some(4), Some(3))).as_deref(),
            Some("12:5:regulated:4:")
        );
        assert_eq!(payload(&w, h(Some(3), None), h(Some(3), None)), None);
        assert_eq!(
            payload(&w, h(None, Some(7)), h(None, Some(8))).as_deref(),
            Some("12:5:regulated:8:7")
        );
    }
}
