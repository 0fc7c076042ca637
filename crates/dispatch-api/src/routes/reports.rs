//! `GET /reports/response-times`: how fast the centre answered, phase by phase, over a range
//! of calls (docs/dispatch-routes.md, "Response times"), computed in PostgreSQL from the
//! recorded times; JSON, or CSV for a spreadsheet with `Accept: text/csv`.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{DateTime, Duration, Utc};
use common::extract::Query;
use common::{FieldError, Problem};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::domain::times::GroupBy;
use crate::routes::extract::{Caller, Manager};
use crate::routes::{Reply, Routes, ok};
use crate::state::AppState;
use crate::store::{calls, times};
use crate::views::{PhaseStats, ResponseTimesReport, TelephoneReport};

pub fn routes(r: &mut Routes<'_>) {
    r.add(__path_response_times, response_times);
}

/// The longest range one report may cover.
pub const MAX_RANGE_DAYS: i64 = 31;

/// `GET /reports/response-times`' parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportParams {
    /// Calls received at or after this moment (RFC 3339). Default: midnight of `to`'s day,
    /// centre time.
    pub from: Option<DateTime<Utc>>,
    /// Calls received before this moment (RFC 3339). Default: now. At most 31 days after
    /// `from`.
    pub to: Option<DateTime<Utc>>,
    /// `priority`, `vehicle_type`, `base`, `health_unit`, `hour` or `day`; without it, one
    /// group of every call.
    #[param(value_type = Option<GroupBy>)]
    pub group_by: Option<GroupBy>,
}

/// 400 naming both ends of the range (the report's and the access log's ranges).
pub(super) fn range_problem(message: &str) -> Problem {
    Problem::new(
        actix_web::http::StatusCode::BAD_REQUEST,
        "invalid_parameter",
        format!("parameters `from`, `to`: {message}"),
    )
    .with_errors(
        ["from", "to"]
            .into_iter()
            .map(|field| FieldError {
                field: field.into(),
                message: message.into(),
            })
            .collect(),
    )
}

/// The report of the calls received in `[from, to)`: the range checked (400 naming `from`
/// and `to`), then one statement.
pub async fn build(
    state: &AppState,
    params: ReportParams,
) -> Result<ResponseTimesReport, crate::error::Error> {
    let now = state.clock.now();
    let mut conn = state.pool.get().await?;
    let to = params.to.unwrap_or(now);
    let from = match params.from {
        Some(from) => from,
        None => times::day_start(&conn, to, state.time_zone.name()).await?,
    };
    if from >= to {
        return Err(range_problem("`from` must be before `to`").into());
    }
    if to - from > Duration::days(MAX_RANGE_DAYS) {
        return Err(range_problem(&format!(
            "the range from `from` to `to` (default: now) must be at most {MAX_RANGE_DAYS} days"
        ))
        .into());
    }
    let (incidents, groups) =
        times::report(&mut conn, from, to, params.group_by, state.time_zone.name()).await?;
    let targets = times::target_views(&conn).await?;
    let telephone = calls::figures(&conn, from, to, state.time_zone.name()).await?;
    Ok(ResponseTimesReport {
        from,
        to,
        group_by: params.group_by,
        time_zone: state.time_zone.name().to_owned(),
        incidents,
        groups,
        targets,
        telephone: TelephoneReport::of(telephone),
    })
}

/// Per group and phase: how many were measured, p50, p90, max, and the share within target;
/// `missing` and `out_of_order` counted apart (ADMIN, regulator). `Accept: text/csv`: the
/// same, one row per group and phase.
#[utoipa::path(get, path = "/reports/response-times", tag = "response times",
    params(ReportParams),
    responses((status = 200,
        description = "JSON, or with `Accept: text/csv` the same as CSV (group, label, phase, \
                       count, p50_seconds, p90_seconds, max_seconds, with_target, \
                       within_target, within_target_share, missing, out_of_order, calls, \
                       abandoned, abandoned_share; the telephone's rows last, groups \
                       `telephone`, `hour` and `day`)",
        content((ResponseTimesReport = "application/json"), (String = "text/csv")))))]
pub async fn response_times(
    req: HttpRequest,
    state: web::Data<AppState>,
    _user: Caller<Manager>,
    params: Query<ReportParams>,
) -> Reply {
    let report = build(&state, params.0).await?;
    if wants_csv(&req) {
        let body = csv(&report).map_err(|e| crate::error::Error::Internal(e.to_string()))?;
        let name = format!(
            "attachment; filename=\"tempos-resposta-{}.csv\"",
            report.from.format("%Y%m%d")
        );
        let mut res = HttpResponse::Ok();
        res.insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/csv; charset=utf-8"),
        ));
        if let Ok(v) = HeaderValue::from_str(&name) {
            res.insert_header((header::CONTENT_DISPOSITION, v));
        }
        return Ok(res.body(body));
    }
    ok(&report)
}

/// Whether the client asked for CSV (`Accept: text/csv`, before any JSON it also takes).
fn wants_csv(req: &HttpRequest) -> bool {
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let pos = |what: &str| accept.find(what);
    match (pos("text/csv"), pos("application/json")) {
        (Some(_), None) => true,
        (Some(c), Some(j)) => c < j,
        _ => false,
    }
}

/// The report as CSV: a header, then one row per group and phase (seconds to the
/// millisecond with a dot for decimals, empty when there is no value).
pub fn csv(report: &ResponseTimesReport) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "group",
        "label",
        "phase",
        "count",
        "p50_seconds",
        "p90_seconds",
        "max_seconds",
        "with_target",
        "within_target",
        "within_target_share",
        "missing",
        "out_of_order",
        "calls",
        "abandoned",
        "abandoned_share",
    ])?;
    // Seconds to the millisecond, shares to four places, without trailing zeros.
    let fixed = |v: Option<f64>, places: usize| {
        v.map(|x| {
            let s = format!("{x:.places$}");
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        })
        .unwrap_or_default()
    };
    let num = |v: Option<f64>| fixed(v, 3);
    // One row: the group, its label, the phase's figures, then the telephone's counts (empty
    // on an incident's phase).
    let row = |group: &str, label: &str, p: &PhaseStats, calls: [String; 3]| {
        let [calls, abandoned, share] = calls;
        [
            group.to_owned(),
            label.to_owned(),
            p.phase.as_str().to_owned(),
            p.count.to_string(),
            num(p.p50_seconds),
            num(p.p90_seconds),
            num(p.max_seconds),
            p.with_target.to_string(),
            p.within_target.to_string(),
            fixed(p.within_target_share, 4),
            p.missing.to_string(),
            p.out_of_order.to_string(),
            calls,
            abandoned,
            share,
        ]
    };
    for g in &report.groups {
        for p in &g.phases {
            let (key, label) = (g.key.as_deref(), g.label.as_deref());
            w.write_record(row(
                key.unwrap_or_default(),
                label.unwrap_or_default(),
                p,
                Default::default(),
            ))?;
        }
    }
    // The telephone: every call, then by hour and by day (group `telephone`, `hour`, `day`).
    let phone = &report.telephone;
    let groups = std::iter::once(("telephone", &phone.all))
        .chain(phone.by_hour.iter().map(|g| ("hour", g)))
        .chain(phone.by_day.iter().map(|g| ("day", g)));
    for (group, g) in groups {
        let calls = [
            g.calls.to_string(),
            g.abandoned.to_string(),
            fixed(g.abandoned_share, 4),
        ];
        w.write_record(row(
            group,
            g.key.as_deref().unwrap_or_default(),
            &g.ring_to_answer,
            calls,
        ))?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}
