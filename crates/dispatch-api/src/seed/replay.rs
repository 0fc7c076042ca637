//! Replays a [`Timeline`] through the API's own store functions (`store::incident_writes`),
//! each write by its plan user at its action's time, so the demo's rows, history entries and
//! notifications are those of real writes by construction.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::plan::{DEMO_USERS, Plan};
use super::timeline::{Step, Timeline};
use super::words::CONCLUSIONS;
use super::{Ids, Resolved};
use crate::domain::dispatch::Status;
use crate::domain::history::HistoryAction;
use crate::domain::incident::State;
use crate::domain::user::CurrentUser;
use crate::schema::dispatch::{dispatches, incidents};
use crate::store::incident_writes::{self as store, NewDispatch};
use crate::store::writes::Author;

/// The plan's users as the writes know their callers.
pub(super) fn cast(plan: &Plan, ids: &Resolved) -> Vec<CurrentUser> {
    plan.users
        .iter()
        .zip(&ids.users)
        .map(|(u, id)| CurrentUser {
            id: *id,
            descriptive_name: u.name.clone(),
            profile: u.profile,
        })
        .collect()
}

/// An incident of the script once created: its id, version, and latest dispatch.
#[derive(Clone, Copy)]
struct Live {
    id: i64,
    version: i32,
    dispatch: Option<i64>,
}

fn id_of<K: Copy>(ids: &Ids<K>, name: &str) -> anyhow::Result<K> {
    ids.get(name)
        .copied()
        .ok_or_else(|| anyhow::anyhow!("the demo's reference {name:?} is missing"))
}

/// Every action of `timeline` in time order.
pub(super) async fn run(
    conn: &mut AsyncPgConnection,
    timeline: &Timeline,
    users: &[CurrentUser],
    ids: &Resolved,
) -> anyhow::Result<()> {
    let mut live: Vec<Option<Live>> = vec![None; timeline.incidents.len()];
    for (i, a) in timeline.in_time_order() {
        let action = &timeline.incidents[i].actions[a];
        let by = Author::new(&users[action.user], action.at);
        let failed = |e: crate::store::error::StoreError| {
            anyhow::anyhow!("demo incident {i}, {:?} at {}: {e}", action.step, action.at)
        };
        if let Step::Create(form, answered) = &action.step {
            let received = action.at - Duration::seconds(*answered);
            let w = store::create(conn, &by, (**form).clone(), Some(received), None)
                .await
                .map_err(failed)?;
            live[i] = Some(Live {
                id: w.id,
                version: w.version,
                dispatch: None,
            });
            continue;
        }
        let Some(l) = live[i].as_mut() else {
            anyhow::bail!("demo incident {i} acts before it is created");
        };
        let (id, v) = (l.id, l.version);
        let version = match &action.step {
            Step::Create(..) => anyhow::bail!("demo incident {i} is created twice"),
            Step::Update(form) => {
                let next = (**form).clone();
                store::patch(conn, &by, id, v, move |f| *f = next)
                    .await
                    .map(|w| w.version)
            }
            Step::Submit => {
                let to = State::AwaitingRegulation;
                store::move_to(conn, &by, id, v, to, HistoryAction::Submitted, None)
                    .await
                    .map(|w| w.version)
            }
            Step::Prank => store::prank_call(conn, &by, id, v).await.map(|w| w.version),
            Step::Cancel(reason) => {
                let reason = Some(reason.clone());
                let cancelled = HistoryAction::Cancelled;
                store::move_to(conn, &by, id, v, State::Cancelled, cancelled, reason)
                    .await
                    .map(|w| w.version)
            }
            Step::SendTo(to) => store::send_to(conn, &by, id, v, users[*to].id)
                .await
                .map(|w| w.version),
            Step::Decide {
                action,
                vehicle,
                notes,
            } => {
                let action = id_of(&ids.refs.actions, action)?;
                let vehicle = vehicle
                    .map(|name| id_of(&ids.refs.unit_types, name))
                    .transpose()?;
                store::technical_decision(conn, &by, id, v, action, vehicle, Some(notes.clone()))
                    .await
                    .map(|w| w.version)
            }
            Step::Dispatch(unit, destination) => {
                let order = NewDispatch {
                    mobile_unit_id: ids.units[*unit],
                    override_reason: None,
                    destination_id: destination.map(|h| ids.health_units[h]),
                };
                store::dispatch_unit(conn, &by, id, v, order)
                    .await
                    .map(|d| {
                        l.dispatch = Some(d.id);
                        d.incident_version
                    })
            }
            Step::Move(status) => {
                let Some(dispatch) = l.dispatch else {
                    anyhow::bail!("demo incident {i} moves a unit it has not sent");
                };
                store::dispatch_status(conn, &by, dispatch, *status)
                    .await
                    .map(|p| p.incident_version)
            }
            Step::Intercurrence(name, notes) => {
                let which = id_of(&ids.refs.intercurrences, name)?;
                store::intercurrence(conn, &by, id, v, which, Some(notes.clone()))
                    .await
                    .map(|w| w.version)
            }
            Step::Transfer(to) => store::transfer(conn, &by, id, v, users[*to].id)
                .await
                .map(|w| w.version),
            Step::Close(conclusion) => store::close(conn, &by, id, v, (*conclusion).to_owned())
                .await
                .map(|w| w.version),
        };
        l.version = version.map_err(failed)?;
    }
    Ok(())
}

/// Ends the open incidents whose last change is before `before`, minutes after that change
/// and through the same writes as a shift would: the fleet operator releases each unit (via
/// the hospital's door when it was transporting), the regulator closes what a unit attended
/// and the call taker cancels the rest. Answers how many incidents it ended.
pub(super) async fn wrap_up(
    conn: &mut AsyncPgConnection,
    users: &[CurrentUser],
    before: DateTime<Utc>,
) -> anyhow::Result<usize> {
    let demo = |login: &str| -> anyhow::Result<&CurrentUser> {
        let i = DEMO_USERS
            .iter()
            .position(|u| u.0 == login)
            .ok_or_else(|| anyhow::anyhow!("no demo user {login}"))?;
        Ok(&users[i])
    };
    let (tarm, regulator, fleet) = (demo("tarm")?, demo("regulador")?, demo("frota")?);
    let stale: Vec<(i64, State, i32, DateTime<Utc>)> = incidents::table
        .filter(incidents::state.eq_any([
            State::Registering,
            State::AwaitingRegulation,
            State::Regulated,
            State::Dispatched,
        ]))
        .filter(incidents::updated_at.lt(before))
        .order_by(incidents::updated_at)
        .select((
            incidents::id,
            incidents::state,
            incidents::version,
            incidents::updated_at,
        ))
        .load(conn)
        .await?;
    let failed = |id: i64| {
        move |e: crate::store::error::StoreError| anyhow::anyhow!("ending incident {id}: {e}")
    };
    for &(id, state, mut version, last) in &stale {
        let mut at = last;
        let units: Vec<(i64, Status)> = dispatches::table
            .filter(dispatches::incident_id.eq(id))
            .filter(dispatches::status.ne(Status::Released))
            .select((dispatches::id, dispatches::status))
            .load(conn)
            .await?;
        for (dispatch, status) in units {
            let steps: &[Status] = match status {
                Status::Transporting => {
                    &[Status::AtDestination, Status::HandedOver, Status::Released]
                }
                Status::AtDestination => &[Status::HandedOver, Status::Released],
                _ => &[Status::Released],
            };
            for step in steps {
                at += Duration::minutes(10);
                version = store::dispatch_status(conn, &Author::new(fleet, at), dispatch, *step)
                    .await
                    .map_err(failed(id))?
                    .incident_version;
            }
        }
        at += Duration::minutes(10);
        let ended = match state {
            State::Dispatched | State::Regulated => {
                let conclusion = if state == State::Dispatched {
                    CONCLUSIONS[0]
                } else {
                    CONCLUSIONS[2]
                };
                let by = Author::new(regulator, at);
                store::close(conn, &by, id, version, conclusion.to_owned()).await
            }
            _ => {
                let by = Author::new(tarm, at);
                let reason = Some("Encerrado ao retomar a demonstração.".to_owned());
                store::move_to(
                    conn,
                    &by,
                    id,
                    version,
                    State::Cancelled,
                    HistoryAction::Cancelled,
                    reason,
                )
                .await
            }
        };
        ended.map_err(failed(id))?;
    }
    Ok(stale.len())
}
