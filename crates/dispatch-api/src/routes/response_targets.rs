//! `GET /response-targets` and `PUT /response-targets`: the centre's target per phase and
//! priority (docs/dispatch-routes.md, "Targets and their sources"). Everyone reads them; the
//! administrator changes them.

use actix_web::web;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::Refusal;
use crate::domain::refusal::FieldFault;
use crate::domain::times::{Phase, TARGET_MAX_SECONDS, TargetPriority};
use crate::domain::user::CurrentUser;
use crate::routes::extract::{Admin, Body, Judge};
use crate::routes::{Reply, Routes, ok};
use crate::state::AppState;
use crate::store::times::{self, TargetChange};
use crate::store::writes::Author;
use crate::views::TargetView;

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_read, read).add(__path_replace, replace);
}

/// The targets, in the phases' order.
#[derive(Debug, Serialize, ToSchema)]
pub struct Targets {
    pub targets: Vec<TargetView>,
}

/// The centre's targets: per phase and priority (`any`: every priority without one of its
/// own), with their sources.
#[utoipa::path(get, path = "/response-targets", tag = "response times",
    responses((status = 200, body = Targets)))]
pub async fn read(state: web::Data<AppState>, _user: CurrentUser) -> Reply {
    let conn = state.pool.get().await?;
    ok(&Targets {
        targets: times::target_views(&conn).await?,
    })
}

/// `PUT /response-targets`'s body: the targets to set or remove, all applied or none.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutTargets {
    /// 1 to 100 changes, each (phase, priority) at most once.
    pub targets: Vec<TargetChangeBody>,
}

/// One change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetChangeBody {
    pub phase: Phase,
    /// An incident priority, or `any`.
    pub priority: TargetPriority,
    /// The target, 1 to 604800 s (a week); `null` removes it (the phase then has no target
    /// for that priority, or falls back to `any`).
    pub seconds: Option<i32>,
    /// Where the value comes from (a protocol, a contract); at most 300 characters.
    /// Default: "set by <the administrator's name>".
    pub source: Option<String>,
}

impl Judge for PutTargets {
    type Judged = Vec<TargetChange>;

    fn judge(self) -> Result<Vec<TargetChange>, Refusal> {
        let mut faults = Vec::new();
        let mut fail = |field: String, message: &str| {
            faults.push(FieldFault {
                field,
                message: message.into(),
            })
        };
        if self.targets.is_empty() || self.targets.len() > 100 {
            fail("targets".into(), "must hold 1 to 100 changes");
        }
        for (i, t) in self.targets.iter().enumerate() {
            if t.seconds
                .is_some_and(|s| !(1..=TARGET_MAX_SECONDS).contains(&s))
            {
                fail(
                    format!("targets[{i}].seconds"),
                    "must be between 1 and 604800 (a week), or null to remove the target",
                );
            }
            if let Some(source) = &t.source {
                let n = source.trim().chars().count();
                if n == 0 || source.chars().count() > 300 || source.chars().any(char::is_control) {
                    fail(
                        format!("targets[{i}].source"),
                        "must be 1 to 300 characters of text, without control characters",
                    );
                }
            }
            if self.targets[..i]
                .iter()
                .any(|o| o.phase == t.phase && o.priority == t.priority)
            {
                fail(
                    format!("targets[{i}]"),
                    "names a phase and priority already changed above",
                );
            }
        }
        if !faults.is_empty() {
            return Err(Refusal::InvalidFields(faults));
        }
        Ok(self
            .targets
            .into_iter()
            .map(|t| TargetChange {
                phase: t.phase,
                priority: t.priority,
                seconds: t.seconds,
                source: t.source.map(|s| s.trim().to_owned()),
            })
            .collect())
    }
}

/// Sets or removes targets (ADMIN), all in one transaction; answers every target after it.
/// A report or timeline read afterwards judges by the new ones.
#[utoipa::path(put, path = "/response-targets", tag = "response times",
    request_body = PutTargets,
    responses((status = 200, body = Targets)))]
pub async fn replace(state: web::Data<AppState>, w: Body<Admin, PutTargets>) -> Reply {
    let changes = w.body.judge()?;
    let mut conn = state.pool.get().await?;
    let by = Author::new(&w.user, state.clock.now());
    let targets = times::set_targets(&mut conn, &by, changes).await?;
    ok(&Targets { targets })
}
