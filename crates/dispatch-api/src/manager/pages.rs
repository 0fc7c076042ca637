//! The manager's pages: sign-in, the reports page, the CSV of a range, sign-out.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::Deserialize;

use super::format::{MIN_FOR_PERCENTILES, clock, percent, percentile};
use super::session::{self, Manager};
use super::{CSS_PATH, PageError, SignInPage, charts, html, see_other};
use crate::domain::times::{GroupBy, Phase, TargetPriority};
use crate::routes::health_unit;
use crate::routes::reports::{self, ReportParams};
use crate::state::AppState;
use crate::store::times;
use crate::views::{HospitalOffload, OffloadBoard, PhaseStats, ResponseTimesReport};

/// The distribution's last bar: an hour or more.
const CAP_MINUTES: i32 = 60;

/// Each phase as the page names it.
pub fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::RingToAnswer => "Toque até o atendimento (central telefônica)",
        Phase::CallTaking => "Atendimento da chamada (TARM)",
        Phase::Regulation => "Regulação médica",
        Phase::Activation => "Acionamento da viatura",
        Phase::Turnout => "Saída da viatura",
        Phase::Travel => "Deslocamento até o local",
        Phase::Response => "Tempo-resposta (chamada até a 1ª viatura no local)",
        Phase::OnScene => "Atendimento no local",
        Phase::Transport => "Transporte ao hospital",
        Phase::HospitalHold => "Retenção de maca no hospital",
        Phase::ReturnToService => "Retorno à disponibilidade",
        Phase::Total => "Tempo total",
    }
}

pub struct Row {
    pub phase: &'static str,
    pub name: &'static str,
    pub count: i64,
    pub p50: String,
    pub p90: String,
    pub max: String,
    pub share: String,
    /// Under 90% within target: shown in red.
    pub share_low: bool,
    pub missing: i64,
    pub out_of_order: i64,
}

impl Row {
    fn of(s: &PhaseStats) -> Row {
        Row {
            phase: s.phase.as_str(),
            name: phase_name(s.phase),
            count: s.count,
            p50: percentile(s.p50_seconds, s.count),
            p90: percentile(s.p90_seconds, s.count),
            max: clock(s.max_seconds),
            share: percent(s.within_target_share),
            share_low: s.within_target_share.is_some_and(|x| x < 0.9),
            missing: s.missing,
            out_of_order: s.out_of_order,
        }
    }
}

pub struct Table {
    pub incidents: i64,
    pub from: String,
    pub to: String,
    pub rows: Vec<Row>,
    /// The telephone: calls that rang, and those abandoned (count and share).
    pub calls: i64,
    pub abandoned: i64,
    pub abandoned_share: String,
    /// Each hour's calls, abandoned and share (centre time).
    pub hours: Vec<(String, i64, i64, String)>,
}

fn table(r: &ResponseTimesReport, from: &str, to: &str) -> Table {
    let phone = &r.telephone;
    // The telephone's ring-to-answer first: the first phase of a response.
    let rows = std::iter::once(Row::of(&phone.all.ring_to_answer))
        .chain(
            r.groups
                .first()
                .map(|g| g.phases.iter().map(Row::of).collect::<Vec<_>>())
                .unwrap_or_default(),
        )
        .collect();
    Table {
        incidents: r.incidents,
        from: from.to_owned(),
        to: to.to_owned(),
        rows,
        calls: phone.all.calls,
        abandoned: phone.all.abandoned,
        abandoned_share: percent(phone.all.abandoned_share),
        hours: phone
            .by_hour
            .iter()
            .map(|g| {
                (
                    g.key.clone().unwrap_or_default(),
                    g.calls,
                    g.abandoned,
                    percent(g.abandoned_share),
                )
            })
            .collect(),
    }
}

pub struct AtDoor {
    pub unit: String,
    pub number: String,
    /// How long it has been at the door, `h:mm:ss`.
    pub held: String,
    pub over: bool,
}

pub struct Hospital {
    pub name: String,
    pub at_door: Vec<AtDoor>,
    pub holds: i64,
    pub p50: String,
    pub p90: String,
    pub max: String,
}

/// The destinations outside the centre's area, summed in one line under the table.
pub struct Elsewhere {
    pub units: usize,
    pub at_door: usize,
    pub holds: i64,
    pub places: String,
}

/// The centre's area: the cities of its bases (`dispatch.bases`). Empty when no base is
/// on record: then every destination is shown.
async fn area(state: &AppState) -> Result<Vec<String>, PageError> {
    use crate::schema::dispatch::bases;
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    let mut conn = state.pool.get().await?;
    let cities = bases::table
        .select(bases::city)
        .distinct()
        .order_by(bases::city)
        .load::<String>(&mut conn)
        .await?;
    Ok(cities)
}

/// The board's hospitals as the page shows them: those of the centre's area (`area`; a
/// unit at a door of no recorded destination included), in the board's order, and the sum
/// of those elsewhere.
fn hospitals(board: &OffloadBoard, area: &[String]) -> (Vec<Hospital>, Option<Elsewhere>) {
    let in_area = |h: &HospitalOffload| {
        area.is_empty()
            || h.health_unit
                .as_ref()
                .is_none_or(|u| area.contains(&u.city))
    };
    let shown = board
        .hospitals
        .iter()
        .filter(|h| in_area(h))
        .map(|h| Hospital {
            name: h
                .health_unit
                .as_ref()
                .map_or("Sem destino informado".to_owned(), |u| {
                    format!("{} ({}/{})", u.name, u.city, u.uf)
                }),
            at_door: h
                .at_door
                .iter()
                .map(|u| AtDoor {
                    unit: u.mobile_unit.name.clone(),
                    number: u.incident.number.clone(),
                    held: clock(Some(u.held_seconds)),
                    over: u.over_target,
                })
                .collect(),
            holds: h.today.holds,
            p50: percentile(h.today.p50_seconds, h.today.holds),
            p90: percentile(h.today.p90_seconds, h.today.holds),
            max: clock(h.today.max_seconds),
        })
        .collect();
    let others: Vec<&HospitalOffload> = board.hospitals.iter().filter(|h| !in_area(h)).collect();
    if others.is_empty() {
        return (shown, None);
    }
    let mut places: Vec<String> = others
        .iter()
        .filter_map(|h| h.health_unit.as_ref())
        .map(|u| format!("{}/{}", u.city, u.uf))
        .collect();
    places.sort();
    places.dedup();
    let elsewhere = Elsewhere {
        units: others.len(),
        at_door: others.iter().map(|h| h.at_door.len()).sum(),
        holds: others.iter().map(|h| h.today.holds).sum(),
        places: places.join(", "),
    };
    (shown, Some(elsewhere))
}

/// A list as a sentence says it: `a`, `a e b`, `a, b e c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} e {last}", init.join(", ")),
    }
}

#[derive(Template)]
#[template(path = "manager/reports.html")]
struct ReportsPage {
    css: &'static str,
    title: &'static str,
    message: Option<String>,
    who: String,
    now: String,
    time_zone: String,
    today_label: String,
    today: Table,
    de: NaiveDate,
    ate: NaiveDate,
    csv_href: String,
    range: Table,
    distribution_svg: String,
    /// The response targets the distribution's lines mark, `h:mm:ss`, as a sentence lists them.
    target_lines: String,
    hourly_svg: String,
    hold_alert: String,
    /// The cities of the centre's bases, as a sentence lists them.
    area: String,
    hospitals: Vec<Hospital>,
    elsewhere: Option<Elsewhere>,
    min_for_percentiles: i64,
}

/// The chosen range: `de` to `ate`, whole days of the centre (both included).
#[derive(Debug, Deserialize)]
pub struct RangeQuery {
    pub de: Option<NaiveDate>,
    pub ate: Option<NaiveDate>,
}

fn br(day: NaiveDate) -> String {
    day.format("%d/%m/%Y").to_string()
}

/// The instants of a range of whole days, `[de 00:00, ate + 1 00:00)` centre time.
async fn range_of(
    state: &AppState,
    de: NaiveDate,
    ate: NaiveDate,
) -> Result<(DateTime<Utc>, DateTime<Utc>), PageError> {
    let conn = state.pool.get().await?;
    let from = times::midnight(&conn, de, state.time_zone.name()).await?;
    let to = times::midnight(&conn, ate + Duration::days(1), state.time_zone.name()).await?;
    Ok((from, to))
}

/// `GET /reports`: today's response times, the chosen range's (default: the last 7 days),
/// its two charts and the hospitals' stretcher holds.
pub async fn reports(
    req: HttpRequest,
    state: web::Data<AppState>,
    manager: Manager,
    query: web::Query<RangeQuery>,
) -> Result<HttpResponse, PageError> {
    let now = state.clock.now();
    let today = {
        let conn = state.pool.get().await?;
        times::local_date(&conn, now, state.time_zone.name()).await?
    };
    let ate = query.ate.unwrap_or(today);
    let de = query.de.unwrap_or(ate - Duration::days(6));
    let mut message = None;
    let (de, ate) = if de > ate || ate - de > Duration::days(30) {
        message = Some(
            "O período vai de uma data até outra igual ou posterior, com até 31 dias: \
             mostrando os últimos 7 dias."
                .to_owned(),
        );
        (today - Duration::days(6), today)
    } else {
        (de, ate)
    };
    let (from, to) = range_of(&state, de, ate).await?;
    let today_from = range_of(&state, today, today).await?.0;
    let params = |from, to, group_by| ReportParams {
        from: Some(from),
        to: Some(to),
        group_by,
    };
    let today_report = reports::build(&state, params(today_from, now, None)).await?;
    let range_report = reports::build(&state, params(from, to, None)).await?;
    let by_hour = reports::build(&state, params(from, to, Some(GroupBy::Hour))).await?;
    let bars = {
        let conn = state.pool.get().await?;
        times::response_distribution(&conn, from, to, CAP_MINUTES).await?
    };
    let mut targets: Vec<i32> = range_report
        .targets
        .iter()
        .filter(|t| t.phase == Phase::Response)
        .map(|t| t.seconds / 60)
        .collect();
    targets.sort_unstable();
    targets.dedup();
    let shares: Vec<(u32, Option<f64>)> = by_hour
        .groups
        .iter()
        .filter_map(|g| {
            let hour = g.key.as_deref()?.parse::<u32>().ok()?;
            let response = g.phases.iter().find(|p| p.phase == Phase::Response)?;
            Some((hour, response.within_target_share))
        })
        .collect();
    let board = health_unit::board(&state).await?;
    let hold_alert = range_report
        .targets
        .iter()
        .find(|t| t.phase == Phase::HospitalHold && t.priority == TargetPriority::Any)
        .map_or("—".to_owned(), |t| clock(Some(f64::from(t.seconds))));
    let area = area(&state).await?;
    let (hospitals, elsewhere) = hospitals(&board, &area);
    let target_lines: Vec<String> = targets
        .iter()
        .filter(|t| **t <= CAP_MINUTES)
        .map(|t| clock(Some(f64::from(*t) * 60.0)))
        .collect();
    let page = ReportsPage {
        css: CSS_PATH,
        title: "Tempos de resposta",
        message,
        who: format!(
            "{} · {}",
            manager.user.descriptive_name,
            manager.user.profile.title()
        ),
        now: now
            .with_timezone(&state.time_zone)
            .format("%d/%m/%Y %H:%M")
            .to_string(),
        time_zone: state.time_zone.name().to_owned(),
        today_label: br(today),
        today: table(&today_report, &br(today), "agora"),
        de,
        ate,
        csv_href: format!("/reports/tempos.csv?de={de}&ate={ate}"),
        range: table(&range_report, &br(de), &br(ate)),
        distribution_svg: charts::distribution(&bars, CAP_MINUTES, &targets),
        target_lines: and_list(&target_lines),
        hourly_svg: charts::hourly(&shares),
        hold_alert,
        area: and_list(&area),
        hospitals,
        elsewhere,
        min_for_percentiles: MIN_FOR_PERCENTILES,
    };
    let body = page
        .render()
        .map_err(|e| PageError::page(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let mut res = html(StatusCode::OK);
    session::take_flash(&req, &mut res);
    Ok(res.body(body))
}

/// `GET /reports/tempos.csv?de=&ate=`: the range's report as the API's CSV, per priority.
pub async fn csv(
    state: web::Data<AppState>,
    _manager: Manager,
    query: web::Query<RangeQuery>,
) -> Result<HttpResponse, PageError> {
    let (Some(de), Some(ate)) = (query.de, query.ate) else {
        return Err(PageError::page(
            StatusCode::BAD_REQUEST,
            "Escolha o período (de, até) antes de baixar o CSV.",
        ));
    };
    let (from, to) = range_of(&state, de, ate).await?;
    let report = reports::build(
        &state,
        ReportParams {
            from: Some(from),
            to: Some(to),
            group_by: Some(GroupBy::Priority),
        },
    )
    .await?;
    let body = reports::csv(&report)
        .map_err(|e| PageError::page(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let mut res = HttpResponse::Ok();
    res.insert_header((
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    ));
    if let Ok(v) = HeaderValue::from_str(&format!(
        "attachment; filename=\"tempos-resposta-{de}-a-{ate}.csv\""
    )) {
        res.insert_header((header::CONTENT_DISPOSITION, v));
    }
    Ok(res.body(body))
}

/// `GET /reports/entrar`.
pub async fn sign_in_form(req: HttpRequest) -> Result<HttpResponse, PageError> {
    let mut res = html(StatusCode::OK);
    let message = session::take_flash(&req, &mut res);
    let page = SignInPage {
        css: CSS_PATH,
        title: "Entrar",
        message: message.as_deref(),
    };
    let body = page
        .render()
        .map_err(|e| PageError::page(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(res.body(body))
}

#[derive(Deserialize)]
pub struct SignInForm {
    token: String,
}

/// `POST /reports/entrar`: the token checked as the API checks it, then a session opened (its
/// id in the cookie, never the token); refused with the reason on the sign-in page.
pub async fn sign_in(
    req: HttpRequest,
    state: web::Data<AppState>,
    form: web::Form<SignInForm>,
) -> Result<HttpResponse, PageError> {
    session::same_origin(&req)?;
    let secure = session::is_https(&req);
    let token = form.token.trim();
    match session::check(&state, token).await {
        Ok(signed_in) => {
            let id = session::start(&state, &req, &signed_in).await?;
            let mut res = see_other(super::BASE);
            session::COOKIES.start_session(&mut res, &id, secure);
            Ok(res.finish())
        }
        Err(why) => {
            let mut res = html(StatusCode::UNAUTHORIZED);
            session::end_session(&mut res, secure);
            let page = SignInPage {
                css: CSS_PATH,
                title: "Entrar",
                message: Some(&why),
            };
            let body = page
                .render()
                .map_err(|e| PageError::page(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
            Ok(res.body(body))
        }
    }
}

/// `POST /reports/sair`: the session ends (revoked: its id opens nothing any more).
pub async fn sign_out(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    session::same_origin(&req)?;
    session::revoke(&state, &req).await?;
    let mut res = see_other(&format!("{}/entrar", super::BASE));
    session::end_session(&mut res, session::is_https(&req));
    Ok(res.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_as_a_sentence() {
        assert_eq!(and_list(&["a".into(), "b".into(), "c".into()]), "a, b e c");
        assert_eq!(and_list(&["a".into()]), "a");
        assert_eq!(and_list(&[]), "");
    }
}
