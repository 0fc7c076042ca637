//! The frame of every write to an existing incident (docs/dispatch-realtime.md, "Writes"):
//! one transaction that locks the incident and checks the caller's version, runs the
//! write's own body on it, and commits what the body decided: the version raised, the
//! state moved, the judged phases kept, the history appended, the change announced (and,
//! when the body says who holds the incident now, `dispatch_mine`). Each write fills the
//! frame with its body; the body asks the domain whether the write is allowed (a state
//! move or an edit) and changes its own rows.

use chrono::{DateTime, Utc};
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, TransactionManager};

use crate::domain::history::HistoryAction;
use crate::domain::incident::State;
use crate::store::error::Result;
use crate::store::holders::{self, Holders};
use crate::store::writes::{self, Author, Changes, Locked, Written};

/// What a write's body decided, for the frame to commit: its history action, the state
/// it moves to (none: it stays), what changed, who holds the incident after it, the
/// write's instant when the body moved it later, and what else the write answers (`T`).
pub struct Commit<T = ()> {
    action: HistoryAction,
    to: Option<State>,
    changes: Changes,
    holders: Option<Holders>,
    at: Option<DateTime<Utc>>,
    answer: T,
}

impl Commit {
    /// A write that leaves the incident in its state.
    pub fn stay(action: HistoryAction, changes: Changes) -> Self {
        Self {
            action,
            to: None,
            changes,
            holders: None,
            at: None,
            answer: (),
        }
    }

    /// A write that moves the incident to `to` (the domain allowed it, or it is the state
    /// the incident is in).
    pub fn moving(action: HistoryAction, to: State, changes: Changes) -> Self {
        Self {
            to: Some(to),
            ..Self::stay(action, changes)
        }
    }
}

impl<T> Commit<T> {
    /// Who holds the incident once the write commits (its regulator, its assignee): the
    /// frame announces those who came to hold it and those who no longer do.
    pub fn holders(self, after: Holders) -> Self {
        Self {
            holders: Some(after),
            ..self
        }
    }

    /// The instant the write records (the incident's `updated_at`, the history entry's
    /// `at`), when it is not the author's: a dispatch step is never earlier than the
    /// dispatch's latest time.
    pub fn at(self, at: DateTime<Utc>) -> Self {
        Self {
            at: Some(at),
            ..self
        }
    }

    /// What the write answers besides the incident's new version.
    pub fn answer<U>(self, answer: U) -> Commit<U> {
        Commit {
            action: self.action,
            to: self.to,
            changes: self.changes,
            holders: self.holders,
            at: self.at,
            answer,
        }
    }
}

/// Who held the incident when it was locked.
pub fn held(cur: &Locked) -> Holders {
    Holders {
        regulator: cur.regulator_id,
        assigned_to: cur.assigned_to_id,
    }
}

/// A write to the incident `id`, in one transaction: locked (404 when it does not exist,
/// 412 `version_conflict` when `expected`, the caller's `If-Match`, is not its version;
/// `None` for the writes without one), `body` run on it, then what the body decided
/// committed (`writes::commit`). A refusal anywhere rolls it all back. (The transaction is
/// begun and ended as diesel-async's `transaction` does, without its `Send` bound on the
/// body's future, which a closure taking the locked incident cannot name.)
pub async fn write(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: Option<i32>,
    body: impl AsyncFnOnce(&mut AsyncPgConnection, &Locked) -> Result<Commit>,
) -> Result<Written> {
    let (written, ()) = write_answering(conn, by, id, expected, body).await?;
    Ok(written)
}

/// [`write`], for a write that answers more than the incident's version (`T`).
pub async fn write_answering<T>(
    conn: &mut AsyncPgConnection,
    by: &Author<'_>,
    id: i64,
    expected: Option<i32>,
    body: impl AsyncFnOnce(&mut AsyncPgConnection, &Locked) -> Result<Commit<T>>,
) -> Result<(Written, T)> {
    AnsiTransactionManager::begin_transaction(conn).await?;
    let framed: Result<(Written, T)> = async {
        let cur = writes::lock(conn, id, expected).await?;
        let entry = body(conn, &cur).await?;
        let to = entry.to.unwrap_or(cur.state);
        let by = &Author {
            at: entry.at.unwrap_or(by.at),
            ..*by
        };
        let written = writes::commit(conn, &cur, by, entry.action, to, entry.changes).await?;
        if let Some(after) = entry.holders {
            holders::announce(conn, &written, held(&cur), after).await?;
        }
        Ok((written, entry.answer))
    }
    .await;
    match framed {
        Ok(done) => {
            AnsiTransactionManager::commit_transaction(conn).await?;
            Ok(done)
        }
        // As diesel-async's `transaction`: a failed rollback's error wins, unless the
        // transaction manager is already broken (the write's own error says more then).
        Err(refused) => match AnsiTransactionManager::rollback_transaction(conn).await {
            Ok(()) | Err(diesel::result::Error::BrokenTransactionManager) => Err(refused),
            Err(rollback) => Err(rollback.into()),
        },
    }
}
