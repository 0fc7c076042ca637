//! The writes' building blocks, each used inside the write's one transaction: lock the
//! incident (and check the caller's version), raise the version with the check in the
//! UPDATE's WHERE, append the history row, and announce the change with a NOTIFY that
//! PostgreSQL delivers only if the transaction commits.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::domain::Refusal;
use crate::domain::form::IncidentForm;
use crate::domain::history::{ChangeGroup, HistoryAction};
use crate::domain::incident::State;
use crate::domain::user::CurrentUser;
use crate::schema::dispatch::{incident_history, incidents};
use crate::store::error::Result;
use crate::store::{INCIDENT_CHANNEL, phases};

/// The incident as a write found it, locked until the transaction ends: its state, version,
/// editable fields and the people it names (for the history of a write that changes them).
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = incidents, check_for_backend(diesel::pg::Pg))]
pub struct Locked {
    pub id: i64,
    pub number: String,
    pub state: State,
    pub version: i32,
    pub regulator_id: Option<i64>,
    pub assigned_to_id: Option<i64>,
    pub regulated_at: Option<DateTime<Utc>>,
    pub conclusion: Option<String>,
    pub closed_at: Option<DateTime<Utc>>,
    /// When it entered its current state.
    pub waiting_since: DateTime<Utc>,
    #[diesel(embed)]
    pub fields: IncidentForm,
}

/// Locks the incident (`FOR UPDATE`); 404 when it does not exist, 412 `version_conflict`
/// when `expected` (the caller's `If-Match`) is not its version.
pub async fn lock(conn: &mut AsyncPgConnection, id: i64, expected: Option<i32>) -> Result<Locked> {
    let locked: Locked = incidents::table
        .filter(incidents::id.eq(id))
        .select(Locked::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| Refusal::not_found("incident", id))?;
    if let Some(expected) = expected
        && expected != locked.version
    {
        return Err(Refusal::VersionConflict {
            current: locked.version,
        }
        .into());
    }
    Ok(locked)
}

/// Who writes and when: the caller and the one instant (from the service's clock) that the
/// write records everywhere: the incident's `updated_at`, the history entry's `at`, and the
/// time of whatever the write adds (a decision, a dispatch step, a prank call).
#[derive(Debug, Clone, Copy)]
pub struct Author<'a> {
    pub user: &'a CurrentUser,
    pub at: DateTime<Utc>,
}

impl<'a> Author<'a> {
    pub fn new(user: &'a CurrentUser, at: DateTime<Utc>) -> Self {
        Self { user, at }
    }

    pub fn id(&self) -> i64 {
        self.user.id
    }
}

/// One history row's `changes`: `{"field": {"from": .., "to": ..}, ...}` plus extras.
#[derive(Debug, Default)]
pub struct Changes {
    map: Map<String, Value>,
    groups: Vec<ChangeGroup>,
}

impl Changes {
    pub fn new() -> Self {
        Self::default()
    }

    /// A field that moved from `from` to `to`, in the real-time group `group`.
    pub fn field(
        mut self,
        group: ChangeGroup,
        name: &str,
        from: impl Serialize,
        to: impl Serialize,
    ) -> Self {
        self.map
            .insert(name.to_owned(), json!({"from": from, "to": to}));
        self.group(group)
    }

    /// Something recorded beside the incident (a decision, a unit): its data, as is.
    pub fn record(mut self, group: ChangeGroup, name: &str, value: Value) -> Self {
        self.map.insert(name.to_owned(), value);
        self.group(group)
    }

    pub fn group(mut self, group: ChangeGroup) -> Self {
        if !self.groups.contains(&group) {
            self.groups.push(group);
        }
        self
    }

    pub fn state(self, from: State, to: State) -> Self {
        if from == to {
            return self;
        }
        self.field(ChangeGroup::State, "state", from.as_str(), to.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn groups(&self) -> &[ChangeGroup] {
        &self.groups
    }

    /// The history row's `changes` column.
    pub fn to_value(&self) -> Value {
        Value::Object(self.map.clone())
    }
}

/// What a committed write tells the client.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Written {
    pub id: i64,
    pub version: i32,
    pub state: State,
}

/// Raises the version (checked again in the WHERE, so the write is race-free even without
/// the lock), moves the state (a move restarts `waiting_since` at the write's instant), keeps
/// the incident's judged phases (`phases::refresh`),
/// appends the history row and queues the NOTIFY.
pub async fn commit(
    conn: &mut AsyncPgConnection,
    locked: &Locked,
    by: &Author<'_>,
    action: HistoryAction,
    to: State,
    changes: Changes,
) -> Result<Written> {
    let changes = changes.state(locked.state, to);
    let waiting_since = if to == locked.state {
        locked.waiting_since
    } else {
        by.at
    };
    let version: Option<i32> = diesel::update(
        incidents::table
            .filter(incidents::id.eq(locked.id))
            .filter(incidents::version.eq(locked.version)),
    )
    .set((
        incidents::version.eq(incidents::version + 1),
        incidents::updated_at.eq(by.at),
        incidents::state.eq(to),
        incidents::waiting_since.eq(waiting_since),
    ))
    .returning(incidents::version)
    .get_result(conn)
    .await
    .optional()?;
    let version = version.ok_or(Refusal::VersionConflict {
        current: locked.version,
    })?;
    // The phases the reports read, judged again with what this write changed.
    phases::refresh(conn, locked.id, by.at).await?;
    append_history(conn, locked.id, version, by, action, &changes).await?;
    announce(conn, locked.id, version, changes.groups()).await?;
    Ok(Written {
        id: locked.id,
        version,
        state: to,
    })
}

pub async fn append_history(
    conn: &mut AsyncPgConnection,
    incident_id: i64,
    version: i32,
    by: &Author<'_>,
    action: HistoryAction,
    changes: &Changes,
) -> Result<()> {
    diesel::insert_into(incident_history::table)
        .values((
            incident_history::incident_id.eq(incident_id),
            incident_history::version.eq(version),
            incident_history::user_id.eq(by.id()),
            incident_history::at.eq(by.at),
            incident_history::action.eq(action),
            incident_history::changes.eq(changes.to_value()),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// `NOTIFY dispatch_incident, '<id>:<version>:<group,group,...>'`, delivered on commit only.
pub async fn announce(
    conn: &mut AsyncPgConnection,
    incident_id: i64,
    version: i32,
    groups: &[ChangeGroup],
) -> Result<()> {
    let groups: Vec<&str> = groups.iter().map(|g| g.as_str()).collect();
    let payload = format!("{incident_id}:{version}:{}", groups.join(","));
    common::listen::notify(conn, INCIDENT_CHANNEL, &payload).await?;
    Ok(())
}
