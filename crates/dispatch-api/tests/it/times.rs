//! Response times (docs/dispatch-routes.md, "Response times"): a shift driven through the
//! API on a manual clock, every phase's seconds read back from the timeline, the screens and
//! the report, and the report's counts, percentiles and shares checked against values this
//! test computes itself from the times it injected; the targets changed by ADMIN only; the
//! report's SQL held to the domain's rules on every incident of the demo data; the hospital
//! offload board and its alerts over a socket.

use std::time::Duration as StdDuration;

use actix_web::http::Method;
use chrono::{DateTime, Duration, Utc};
use common::Clock;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::domain::times::Phase;
use dispatch_api::realtime::WsSettings;
use dispatch_api::schema::dispatch::*;
use dispatch_api::store::phases::{IncidentPhasesRow, UnitPhasesRow};
use dispatch_api::views::IncidentTimeline;
use serde_json::{Value, json};

use crate::client::W;
use crate::realtime::{Replica, follow, next};
use crate::support::{Api, keys, set};

/// A moment far from the demo data (seeded at the real now), so a report of its day holds
/// only this test's calls. Not compared with the wall clock: the service runs on it.
fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2031-03-10T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// One incident's life, each write at `t0 + seconds`.
#[derive(Clone)]
struct Script {
    priority: &'static str,
    /// The call answered (seconds from t0); the incident is created at `created`.
    received: i64,
    created: i64,
    submit: i64,
    decide: i64,
    /// The unit sent, then each step: (status, at).
    dispatch: Option<i64>,
    /// The hospital the unit takes the patient to.
    destination: Option<i64>,
    steps: Vec<(&'static str, i64)>,
    close: Option<i64>,
}

struct Shift {
    w: W,
    clock: Clock,
}

impl Shift {
    async fn new() -> Shift {
        let clock = Clock::manual(t0());
        Shift {
            w: W {
                api: Api::at(clock.clone()).await,
            },
            clock,
        }
    }

    fn at(&self, secs: i64) -> DateTime<Utc> {
        let at = t0() + Duration::seconds(secs);
        self.clock.set(at);
        at
    }

    fn api(&self) -> &Api {
        &self.w.api
    }

    /// Drives `s` through the routes with `unit`; returns (incident, dispatch).
    async fn drive(&self, s: &Script, unit: i64) -> (i64, Option<i64>) {
        let w = &self.w;
        self.at(s.created);
        let received = (t0() + Duration::seconds(s.received)).to_rfc3339();
        let r = w
            .post(
                "/incident",
                "tarm",
                None,
                json!({"caller_name": "Ana Lima", "caller_phone": "(11) 98888-1234",
                       "address": "Rua Um, 1", "complaint": "queda",
                       "occurrence": {"priority": s.priority},
                       "call_received_at": received}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        let id = r.body["id"].as_i64().unwrap();
        let mut v = 1;
        self.at(s.submit);
        v = ok_version(
            w.post(
                &format!("/incident/{id}/submit"),
                "tarm",
                Some(v),
                json!({}),
            )
            .await,
        );
        self.at(s.decide);
        let action = w.action(true).await;
        v = ok_version(
            w.post(
                &format!("/incident/{id}/technical-decision"),
                "regulador",
                Some(v),
                json!({"action_id": action}),
            )
            .await,
        );
        let mut dispatch = None;
        if let Some(at) = s.dispatch {
            self.at(at);
            let r = w
                .post(
                    &format!("/incident/{id}/dispatch"),
                    "frota",
                    Some(v),
                    json!({"mobile_unit_id": unit, "destination_id": s.destination}),
                )
                .await;
            assert_eq!(r.status.as_u16(), 201, "{}", r.body);
            dispatch = r.body["id"].as_i64();
            for (status, at) in &s.steps {
                self.at(*at);
                let r = w
                    .post(
                        &format!("/dispatch/{}/status", dispatch.unwrap()),
                        "frota",
                        None,
                        json!({"status": status}),
                    )
                    .await;
                assert_eq!(r.status.as_u16(), 200, "{status}: {}", r.body);
            }
            v = w.version(id).await;
        }
        if let Some(at) = s.close {
            self.at(at);
            ok_version(
                w.post(
                    &format!("/incident/{id}/close"),
                    "regulador",
                    Some(v),
                    json!({"conclusion": "Atendido."}),
                )
                .await,
            );
        }
        (id, dispatch)
    }
}

fn ok_version(r: crate::support::Reply) -> i32 {
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    r.body["version"].as_i64().unwrap() as i32
}

fn phase<'a>(phases: &'a Value, name: &str) -> &'a Value {
    phases
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == name)
        .unwrap_or_else(|| panic!("no phase {name} in {phases}"))
}

/// A whole attendance with a hospital hold: every phase as injected.
fn full(received: i64) -> Script {
    let c = received + 50;
    Script {
        priority: "critical",
        received,
        created: c,
        submit: c + 70,          // call taking: 120 s
        decide: c + 70 + 45,     // regulation: 45 s (target 60)
        dispatch: Some(c + 130), // activation: 15 s (target 20)
        destination: None,
        steps: vec![
            ("en_route", c + 170),        // turnout: 40 s (critical target 30: over)
            ("on_scene", c + 650),        // travel: 480 s; response: 700 s (target 600: over)
            ("transporting", c + 1550),   // on scene: 900 s
            ("at_destination", c + 2450), // transport: 900 s
            ("handed_over", c + 3050),    // hold: 600 s (target 1200)
            ("released", c + 3350),       // return to service: 300 s
        ],
        close: Some(c + 3400), // total: 3400 s
    }
}

#[actix_web::test]
async fn a_shift_with_known_times_is_timed_phase_by_phase_and_flags_what_is_missing_or_out_of_order()
 {
    let shift = Shift::new().await;
    let units = shift.w.free_units().await;
    // A: everything recorded.
    let (a, da) = shift.drive(&full(0), units[0]).await;
    // B: the hand-over to the hospital not recorded (at_destination -> released).
    let mut b = full(4000);
    b.priority = "medium";
    b.steps.retain(|(s, _)| *s != "handed_over");
    let (b, _) = shift.drive(&b, units[1]).await;
    // C: a regulator's machine a minute behind: the decision dated before the submission.
    let mut c = full(8000);
    c.priority = "low";
    c.decide = c.submit - 30;
    let (c, _) = shift.drive(&c, units[2]).await;

    let timeline = shift
        .api()
        .get("regulador", &format!("/incident/{a}/timeline"))
        .await;
    let t = timeline.ok();
    assert_eq!(t["call_received_at"], json!("2031-03-10T12:00:00Z"));
    assert_eq!(t["priority"], "critical");
    let expect = [
        ("call_taking", 120.0, Some(60), Some(true)),
        ("regulation", 45.0, Some(60), Some(false)),
        ("activation", 15.0, Some(20), Some(false)),
        ("response", 700.0, Some(600), Some(true)),
        ("total", 3400.0, None, None),
    ];
    for (name, secs, target, over) in expect {
        let p = phase(&t["phases"], name);
        assert_eq!(p["status"], "complete", "{name}: {p}");
        assert_eq!(p["seconds"], json!(secs), "{name}");
        assert_eq!(p["target_seconds"], json!(target), "{name}");
        assert_eq!(p["over_target"], json!(over), "{name}");
        assert_eq!(p["reason"], Value::Null, "{name}");
    }
    let unit = &t["dispatches"][0];
    assert_eq!(unit["id"], json!(da.unwrap()));
    assert_eq!(unit["status"], "released");
    assert_eq!(
        unit["times"]["handed_over_at"],
        json!("2031-03-10T12:51:40Z")
    );
    let expect = [
        ("turnout", 40.0, Some(30), Some(true)),
        ("travel", 480.0, None, None),
        ("on_scene", 900.0, None, None),
        ("transport", 900.0, None, None),
        ("hospital_hold", 600.0, Some(1200), Some(false)),
        ("return_to_service", 300.0, None, None),
    ];
    for (name, secs, target, over) in expect {
        let p = phase(&unit["phases"], name);
        assert_eq!(p["status"], "complete", "{name}: {p}");
        assert_eq!(p["seconds"], json!(secs), "{name}");
        assert_eq!(p["target_seconds"], json!(target), "{name}");
        assert_eq!(p["over_target"], json!(over), "{name}");
    }
    // The fleet reads the same; the screens carry the same phases.
    assert_eq!(
        shift
            .api()
            .get("frota", &format!("/incident/{a}/timeline"))
            .await
            .ok(),
        t
    );
    let fleet = shift
        .api()
        .get("frota", &format!("/incident/{a}/fleet-occurrence"))
        .await;
    assert_eq!(fleet.ok()["response_times"], *t);
    let view = shift
        .api()
        .get("regulador", &format!("/incident/{a}/occurrence-view"))
        .await;
    assert_eq!(view.ok()["response_times"], *t);
    assert_eq!(
        view.ok()["incident"]["call_received_at"],
        t["call_received_at"]
    );
    // Only the administrator, regulators and the fleet read it.
    shift
        .api()
        .get("tarm", &format!("/incident/{a}/timeline"))
        .await
        .problem(403, "forbidden");
    shift
        .api()
        .get("admin", "/incident/999999999/timeline")
        .await
        .problem(404, "not_found");

    // B: the hold is untimed and says why; the return to service counts from the door.
    let tb = shift
        .api()
        .get("admin", &format!("/incident/{b}/timeline"))
        .await;
    let unit = &tb.ok()["dispatches"][0];
    let hold = phase(&unit["phases"], "hospital_hold");
    assert_eq!(hold["status"], "missing");
    assert_eq!(hold["seconds"], Value::Null);
    assert_eq!(
        hold["reason"],
        "handed_over_at was not recorded, though what follows it was"
    );
    let back = phase(&unit["phases"], "return_to_service");
    assert_eq!(
        (back["status"].as_str(), back["seconds"].as_f64()),
        (Some("complete"), Some(900.0))
    );

    // C: regulation out of order, never guessed; the phases around it are still timed.
    let tc = shift
        .api()
        .get("admin", &format!("/incident/{c}/timeline"))
        .await;
    let reg = phase(&tc.ok()["phases"], "regulation");
    assert_eq!(reg["status"], "out_of_order");
    assert_eq!(reg["seconds"], Value::Null);
    assert_eq!(
        reg["reason"],
        "regulated_at (2031-03-10T14:14:50+00:00) is before submitted_at (2031-03-10T14:15:20+00:00)"
    );
    let activation = phase(&tc.ok()["phases"], "activation");
    assert_eq!(activation["seconds"], json!(90.0));

    // What the report reads was kept by the writes, phase by phase, as the timeline judges
    // it: the hold not recorded and the regulation out of order included.
    let statuses =
        assert_kept_as_the_timeline_judges(shift.api(), t0(), t0() + Duration::hours(4)).await;
    let expect: std::collections::BTreeMap<String, usize> =
        [("complete", 31), ("missing", 1), ("out_of_order", 1)]
            .into_iter()
            .map(|(s, n)| (s.to_owned(), n))
            .collect();
    assert_eq!(statuses, expect);
}

/// `percentile_cont`: the value at rank `f * (n - 1)`, interpolated between its neighbours.
fn percentile(sorted: &[f64], f: f64) -> f64 {
    let rank = f * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

fn close_to(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[actix_web::test]
async fn the_report_counts_percentiles_and_shares_are_the_injected_ones_in_json_and_csv() {
    let shift = Shift::new().await;
    let units = shift.w.free_units().await;
    // Seven calls an hour apart; responses (call received -> on scene) chosen by hand, the
    // critical ones around their 600 s target, the others around 1800 s.
    let plan: [(&str, i64); 7] = [
        ("critical", 420),
        ("critical", 610),
        ("critical", 590),
        ("critical", 900),
        ("high", 1500),
        ("high", 2000),
        ("medium", 1790),
    ];
    for (i, (priority, response)) in plan.iter().enumerate() {
        let r = i as i64 * 3600;
        let c = r + 30;
        let script = Script {
            priority,
            received: r,
            created: c,
            submit: c + 60,
            decide: c + 90,
            dispatch: Some(c + 100),
            destination: None,
            steps: vec![
                ("en_route", c + 130),
                ("on_scene", r + response),
                ("released", r + response + 600),
            ],
            close: Some(r + response + 700),
        };
        shift.drive(&script, units[i % units.len()]).await;
    }
    let (from, to) = ("2031-03-10T12:00:00Z", "2031-03-11T00:00:00Z");
    let uri = format!("/reports/response-times?from={from}&to={to}&group_by=priority");
    let report = shift.api().get("admin", &uri).await;
    let body = report.ok();
    assert_eq!(body["incidents"], 7);
    assert_eq!(body["group_by"], "priority");
    let groups = body["groups"].as_array().unwrap();
    let keys: Vec<&str> = groups.iter().map(|g| g["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["critical", "high", "medium"]);
    for g in groups {
        let key = g["key"].as_str().unwrap();
        let target = if key == "critical" { 600.0 } else { 1800.0 };
        let mut secs: Vec<f64> = plan
            .iter()
            .filter(|(p, _)| *p == key)
            .map(|(_, s)| *s as f64)
            .collect();
        secs.sort_by(f64::total_cmp);
        let p = phase(&g["phases"], "response");
        assert_eq!(p["count"], json!(secs.len()), "{key}");
        assert!(
            close_to(&p["p50_seconds"], percentile(&secs, 0.5)),
            "{key}: {p}"
        );
        assert!(
            close_to(&p["p90_seconds"], percentile(&secs, 0.9)),
            "{key}: {p}"
        );
        assert!(
            close_to(&p["max_seconds"], *secs.last().unwrap()),
            "{key}: {p}"
        );
        let within = secs.iter().filter(|s| **s <= target).count();
        assert_eq!(p["with_target"], json!(secs.len()));
        assert_eq!(p["within_target"], json!(within), "{key}");
        assert!(close_to(
            &p["within_target_share"],
            within as f64 / secs.len() as f64
        ));
        // Every call took 90 s to take: one value, so p50 = p90 = max = 90.
        let taking = phase(&g["phases"], "call_taking");
        assert_eq!(
            (
                &taking["p50_seconds"],
                &taking["p90_seconds"],
                &taking["max_seconds"]
            ),
            (&json!(90.0), &json!(90.0), &json!(90.0))
        );
        assert_eq!(taking["missing"], 0);
        // No unit transported: the hold was never reached, so nothing is counted.
        assert_eq!(phase(&g["phases"], "hospital_hold")["count"], 0);
    }
    // The critical group by hand: 420, 590, 610, 900 -> p50 600, p90 813, 2 of 4 within.
    let critical = phase(&groups[0]["phases"], "response");
    assert!(close_to(&critical["p50_seconds"], 600.0));
    assert!(close_to(&critical["p90_seconds"], 813.0));
    assert_eq!(critical["within_target_share"], json!(0.5));

    // The same as CSV, row for row.
    let csv = shift
        .api()
        .request(reqwest::Method::GET, &uri)
        .bearer_auth(shift.api().token("regulador"))
        .header("Accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
    let text = csv.text().await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "group,label,phase,count,p50_seconds,p90_seconds,max_seconds,with_target,\
         within_target,within_target_share,missing,out_of_order,calls,abandoned,abandoned_share"
    );
    // Three groups of 11 phases, then the telephone's row (no call rang: no hour, no day).
    assert_eq!(lines.len(), 1 + 3 * 11 + 1);
    assert!(
        lines.contains(&"critical,critical,response,4,600,813,900,4,2,0.5,0,0,,,"),
        "{text}"
    );
    assert!(
        lines.contains(&"high,high,response,2,1750,1950,2000,2,1,0.5,0,0,,,"),
        "{text}"
    );
    assert_eq!(lines[34], "telephone,,ring_to_answer,0,,,,0,0,,0,0,0,0,");

    // By hour: one call per hour, centre time (UTC-3): 09:00 to 15:00.
    let by_hour = shift
        .api()
        .get(
            "regulador",
            &format!("/reports/response-times?from={from}&to={to}&group_by=hour"),
        )
        .await;
    let hours: Vec<&str> = by_hour.ok()["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(hours, ["09", "10", "11", "12", "13", "14", "15"]);

    // By base and by vehicle type: a unit's phases under its unit, the incident's response
    // under the unit on scene first (here the only one), call taking and regulation under no
    // unit (`key: null`, last).
    let sent: Vec<i64> = (0..plan.len()).map(|i| units[i % units.len()]).collect();
    let described: Vec<(i64, String, String)> = mobile_units::table
        .inner_join(mobile_unit_types::table)
        .filter(mobile_units::id.eq_any(&sent))
        .select((
            mobile_units::id,
            mobile_units::base,
            mobile_unit_types::name,
        ))
        .load(&mut shift.api().conn().await)
        .await
        .unwrap();
    for group_by in ["base", "vehicle_type"] {
        let mut expected = std::collections::BTreeMap::<String, i64>::new();
        for unit in &sent {
            let (_, base, kind) = described.iter().find(|(id, _, _)| id == unit).unwrap();
            let key = if group_by == "base" { base } else { kind };
            *expected.entry(key.clone()).or_default() += 1;
        }
        let r = shift
            .api()
            .get(
                "admin",
                &format!("/reports/response-times?from={from}&to={to}&group_by={group_by}"),
            )
            .await;
        let groups = r.ok()["groups"].as_array().unwrap();
        let keys: Vec<Value> = groups.iter().map(|g| g["key"].clone()).collect();
        let mut want: Vec<Value> = expected.keys().map(|k| json!(k)).collect();
        want.push(Value::Null);
        assert_eq!(keys, want, "{group_by}");
        for g in groups {
            let n = g["key"].as_str().map_or(0, |k| expected[k]);
            for unit_phase in ["activation", "turnout", "travel", "response", "total"] {
                assert_eq!(phase(&g["phases"], unit_phase)["count"], json!(n), "{g}");
            }
            let taken = if g["key"].is_null() { 7 } else { 0 };
            assert_eq!(
                phase(&g["phases"], "call_taking")["count"],
                json!(taken),
                "{g}"
            );
        }
    }

    // Who may, and what a bad range is.
    for login in ["tarm", "frota"] {
        shift.api().get(login, &uri).await.problem(403, "forbidden");
    }
    let r = shift
        .api()
        .get(
            "admin",
            "/reports/response-times?from=2031-01-01T00:00:00Z&to=2031-03-01T00:00:00Z",
        )
        .await;
    r.problem(400, "invalid_parameter");
    let fields: Vec<&str> = r.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["from", "to"]);
    assert_eq!(
        shift
            .api()
            .get("admin", "/reports/response-times?group_by=weekday")
            .await
            .problem(400, "invalid_parameter")
            .as_deref(),
        Some("group_by")
    );

    // Targets: ADMIN tightens the critical response to 500 s; the shares follow.
    let targets = |login: &'static str, body: Value| {
        let w = &shift.w;
        async move {
            w.call(Method::PUT, "/response-targets", login, None, Some(body))
                .await
        }
    };
    let change = json!({"targets": [{"phase": "response", "priority": "critical",
                                     "seconds": 500, "source": "Protocolo local 2031"}]});
    for login in ["regulador", "tarm", "frota"] {
        targets(login, change.clone())
            .await
            .problem(403, "forbidden");
    }
    let bad = targets(
        "admin",
        json!({"targets": [{"phase": "response", "priority": "critical", "seconds": 0}]}),
    )
    .await;
    assert_eq!(
        bad.problem(400, "invalid_payload").as_deref(),
        Some("targets[0].seconds")
    );
    let set = targets("admin", change).await;
    let set = set.ok()["targets"].as_array().unwrap().clone();
    let critical_response = set
        .iter()
        .find(|t| t["phase"] == "response" && t["priority"] == "critical")
        .unwrap();
    assert_eq!(critical_response["seconds"], 500);
    assert_eq!(critical_response["source"], "Protocolo local 2031");
    assert_eq!(
        critical_response["updated_by"]["id"],
        json!(shift.api().id("admin"))
    );
    // Everyone reads them.
    let read = shift.api().get("tarm", "/response-targets").await;
    assert_eq!(read.ok()["targets"].as_array().unwrap(), &set);
    let after = shift.api().get("admin", &uri).await;
    let critical = phase(&after.ok()["groups"][0]["phases"], "response");
    assert_eq!(critical["within_target"], 1);
    assert_eq!(critical["within_target_share"], json!(0.25));
    // Removing the `any` regulation target leaves the non-critical calls without one.
    targets(
        "admin",
        json!({"targets": [{"phase": "regulation", "priority": "any", "seconds": null}]}),
    )
    .await
    .ok();
    let after = shift.api().get("admin", &uri).await;
    let high = phase(&after.ok()["groups"][1]["phases"], "regulation");
    assert_eq!(
        (high["count"].as_i64(), high["with_target"].as_i64()),
        (Some(2), Some(0))
    );
    assert_eq!(high["within_target_share"], Value::Null);
}

/// The unit an incident's phase is filed under, found here from the timeline's own times:
/// the first assigned (`activation`), the first on scene (`response`), the last released once
/// every unit is and the incident is final (`total`); of two at the same instant, the lower id.
fn ended_by(t: &IncidentTimeline, phase: Phase) -> Option<i64> {
    let units = &t.dispatches;
    match phase {
        Phase::Activation => units.iter().min_by_key(|d| (d.times.assigned_at, d.id)),
        Phase::Response => units
            .iter()
            .filter(|d| d.times.on_scene_at.is_some())
            .min_by_key(|d| (d.times.on_scene_at, d.id)),
        Phase::Total
            if t.state.is_final() && units.iter().all(|d| d.times.released_at.is_some()) =>
        {
            units
                .iter()
                .min_by_key(|d| (std::cmp::Reverse(d.times.released_at), d.id))
        }
        _ => None,
    }
    .map(|d| d.id)
}

/// Holds the phases the writes kept (what the report reads, `store::times::judged`) to the
/// timeline (the domain, judged now) for every incident whose call was received in
/// `[from, to)`: every phase of the incident and of each unit, no more and no fewer, with
/// its status, seconds, current target, and the unit an incident's phase is filed under.
/// Answers how many phases of each status there were.
async fn assert_kept_as_the_timeline_judges(
    api: &Api,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> std::collections::BTreeMap<String, usize> {
    let conn = api.conn().await;
    let rows = dispatch_api::store::times::judged(&conn, from, to)
        .await
        .unwrap();
    let ids: std::collections::BTreeSet<i64> = rows.iter().map(|r| r.incident_id).collect();
    let now = api.state().clock.now();
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for id in ids {
        let t = dispatch_api::store::times::timeline(&conn, id, now)
            .await
            .unwrap()
            .unwrap();
        let mut domain = Vec::new();
        for p in &t.phases {
            domain.push((ended_by(&t, p.phase), p.clone()));
        }
        for d in &t.dispatches {
            for p in &d.phases {
                domain.push((Some(d.id), p.clone()));
            }
        }
        let kept: Vec<_> = rows.iter().filter(|r| r.incident_id == id).collect();
        assert_eq!(kept.len(), domain.len(), "incident {id}: {kept:?}");
        for (dispatch, p) in domain {
            let sql = kept
                .iter()
                .find(|r| r.phase == p.phase.as_str() && r.dispatch_id == dispatch)
                .unwrap_or_else(|| {
                    panic!(
                        "incident {id}: no kept {} of dispatch {dispatch:?}",
                        p.phase
                    )
                });
            assert_eq!(sql.status, p.status.as_str(), "incident {id} {}", p.phase);
            assert_eq!(sql.seconds, p.seconds, "incident {id} {}", p.phase);
            assert_eq!(sql.target, p.target_seconds, "incident {id} {}", p.phase);
            *statuses.entry(sql.status.clone()).or_default() += 1;
        }
    }
    statuses
}

/// The phases the writes kept are the domain's: on every incident of the demo data (seeded
/// through the API's writes), status, seconds, target and unit alike.
#[actix_web::test]
async fn the_kept_phases_and_the_domain_judge_every_demo_phase_alike() {
    let api = Api::new().await;
    let (from, to): (Option<DateTime<Utc>>, Option<DateTime<Utc>>) = incidents::table
        .select((
            diesel::dsl::min(incidents::call_received_at),
            diesel::dsl::max(incidents::call_received_at),
        ))
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let statuses =
        assert_kept_as_the_timeline_judges(&api, from.unwrap(), to.unwrap() + Duration::seconds(1))
            .await;
    assert!(statuses.values().sum::<usize>() >= 80 * 5, "{statuses:?}");
    // The demo holds every kind of phase a centre sees.
    for status in ["complete", "running", "pending", "not_reached", "missing"] {
        assert!(statuses.get(status).is_some_and(|n| *n > 0), "{statuses:?}");
    }
}

/// Every kept row of the database, in key order.
async fn all_kept(conn: &mut common::db::Conn) -> (Vec<IncidentPhasesRow>, Vec<UnitPhasesRow>) {
    let incidents = incident_phases::table
        .order_by(incident_phases::incident_id)
        .select(IncidentPhasesRow::as_select())
        .load(conn)
        .await
        .unwrap();
    let units = unit_phases::table
        .order_by(unit_phases::dispatch_id)
        .select(UnitPhasesRow::as_select())
        .load(conn)
        .await
        .unwrap();
    (incidents, units)
}

/// The migration that judged the incidents stored before the writes kept their phases
/// (set-based SQL, run once) judges every demo incident as the writes did: emptied and run
/// again, it writes the same rows.
#[actix_web::test]
async fn the_backfill_judges_every_demo_phase_as_the_writes_do() {
    use diesel_async::SimpleAsyncConnection;
    let api = Api::new().await;
    let mut conn = api.conn().await;
    let written = all_kept(&mut conn).await;
    let incidents: i64 = incidents::table
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    let dispatched: i64 = dispatches::table
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        (written.0.len(), written.1.len()),
        (incidents as usize, dispatched as usize)
    );
    conn.batch_execute("TRUNCATE dispatch.incident_phases, dispatch.unit_phases")
        .await
        .unwrap();
    assert_eq!(all_kept(&mut conn).await, (vec![], vec![]));
    conn.batch_execute(include_str!(
        "../../migrations/2026-11-27-000902_response_phases_backfill/up.sql"
    ))
    .await
    .unwrap();
    let backfilled = all_kept(&mut conn).await;
    for (w, b) in written.0.iter().zip(&backfilled.0) {
        assert_eq!(b, w);
    }
    for (w, b) in written.1.iter().zip(&backfilled.1) {
        assert_eq!(b, w);
    }
    assert_eq!(backfilled, written);
}

/// A unit held at a hospital's door: nobody writes, yet the followers of the `offload` queue
/// on both replicas hear one alert when it passes 20 minutes (raised by one replica's
/// watcher, whichever is first), the board shows it, and its hand-over clears it.
#[actix_web::test]
async fn a_unit_held_at_the_door_alerts_every_follower_once_and_its_hand_over_clears_it() {
    let shift = Shift::new().await;
    let api = shift.api();
    let units = shift.w.free_units().await;
    // The demo's units at a door (seeded at the real now) leave it: this door is the only one.
    let at_doors: Vec<i64> = dispatches::table
        .filter(dispatches::status.eq("at_destination"))
        .select(dispatches::id)
        .load(&mut api.conn().await)
        .await
        .unwrap();
    for d in at_doors {
        let r = shift
            .w
            .post(
                &format!("/dispatch/{d}/status"),
                "frota",
                None,
                json!({"status": "released"}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    }
    let hospital: (i64, String) = health_units::table
        .filter(health_units::active)
        .select((health_units::id, health_units::name))
        .order_by(health_units::id)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let mut s = full(0);
    s.steps.truncate(4); // at the door from c + 2450
    s.destination = Some(hospital.0);
    s.close = None;
    let (id, dispatch) = shift.drive(&s, units[0]).await;
    let dispatch = dispatch.unwrap();
    let arrived = t0() + Duration::seconds(50 + 2450);
    let (one, two) = (
        Replica::start(api, WsSettings::default()).await,
        Replica::start(api, WsSettings::default()).await,
    );
    // Each replica watches, on the service's clock, looking every 100 ms.
    let watchers: Vec<_> = (0..2)
        .map(|_| {
            dispatch_api::realtime::watch::spawn(
                api.db.pool(),
                shift.clock.clone(),
                StdDuration::from_millis(100),
            )
        })
        .collect();
    let token = api.token("frota");
    let (mut a, mut b) = (one.socket(&token).await, two.socket(&token).await);
    assert_eq!(
        follow(&mut a, "offload").await,
        json!({"type": "subscribed", "queue": "offload"})
    );
    follow(&mut b, "offload").await;
    // 19 minutes at the door: nothing yet.
    shift.clock.set(arrived + Duration::minutes(19));
    assert_eq!(next(&mut a, 1).await, None);
    let board = api.get("tarm", "/health-unit/offload").await;
    assert_eq!(
        board.ok()["hospitals"][0]["health_unit"]["name"],
        json!(hospital.1)
    );
    let door = &board.ok()["hospitals"][0]["at_door"][0];
    assert_eq!(door["dispatch_id"], json!(dispatch));
    assert_eq!(door["held_minutes"], 19);
    assert_eq!(door["over_target"], false);
    // 20 minutes and a second: the alert, once on each replica.
    shift.clock.set(arrived + Duration::seconds(1201));
    let alert = next(&mut a, 5).await.expect("an alert on replica one");
    assert_eq!(alert["type"], "offload.alert");
    assert_eq!(alert["dispatch_id"], json!(dispatch));
    // The incident as the board names it.
    assert_eq!(alert["incident"], door["incident"]);
    assert_eq!(alert["incident"]["id"], json!(id));
    // Both messages name the unit at the door alike, then say their own.
    let hold = |own: &[&'static str]| {
        let shared = [
            "type",
            "dispatch_id",
            "incident",
            "mobile_unit",
            "health_unit",
        ];
        set(&[&shared[..], &["at_destination_at"][..], own].concat())
    };
    assert_eq!(keys(&alert), hold(&["target_seconds", "alerted_at"]));
    assert_eq!(alert["target_seconds"], 1200);
    assert_eq!(alert["at_destination_at"], json!("2031-03-10T12:41:40Z"));
    assert_eq!(
        alert["health_unit"],
        json!({"id": hospital.0, "name": hospital.1})
    );
    assert_eq!(next(&mut b, 5).await, Some(alert.clone()));
    assert_eq!(
        next(&mut a, 1).await,
        None,
        "one alert, whichever replica raised it"
    );
    let raised: i64 = offload_alerts::table
        .filter(offload_alerts::dispatch_id.eq(dispatch))
        .count()
        .get_result(&mut api.conn().await)
        .await
        .unwrap();
    assert_eq!(raised, 1);
    // A follower who comes later is told at once.
    let mut late = one.socket(&api.token("regulador")).await;
    follow(&mut late, "offload").await;
    assert_eq!(next(&mut late, 2).await, Some(alert.clone()));
    let board = api.get("admin", "/health-unit/offload").await;
    let door = &board.ok()["hospitals"][0]["at_door"][0];
    assert_eq!(
        (door["held_minutes"].as_i64(), door["over_target"].as_bool()),
        (Some(20), Some(true))
    );
    // Handed over at 25 minutes: cleared for everyone.
    shift.clock.set(arrived + Duration::minutes(25));
    let r = shift
        .w
        .post(
            &format!("/dispatch/{dispatch}/status"),
            "frota",
            None,
            json!({"status": "handed_over"}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    for ws in [&mut a, &mut b, &mut late] {
        let cleared = next(ws, 5).await.expect("cleared");
        assert_eq!(cleared["type"], "offload.cleared");
        assert_eq!(cleared["dispatch_id"], json!(dispatch));
        assert_eq!(cleared["by"], "handed_over");
        assert_eq!(cleared["held_seconds"], json!(1500.0));
        assert_eq!(cleared["incident"], alert["incident"]);
        assert_eq!(keys(&cleared), hold(&["by", "cleared_at", "held_seconds"]));
    }
    let board = api.get("frota", "/health-unit/offload").await;
    let hospital = &board.ok()["hospitals"][0];
    assert_eq!(hospital["at_door"], json!([]));
    // Today's holds (centre time) at that hospital: this one, 25 minutes.
    assert_eq!(hospital["today"]["holds"], 1);
    assert_eq!(hospital["today"]["p90_seconds"], json!(1500.0));
    for w in watchers {
        w.abort();
    }
    one.stop().await;
    two.stop().await;
}

/// A priority or a patient's destination changed after the unit was sent moves the kept
/// phases with it: the report files the call under its new priority (judged by that
/// priority's target) and the unit's phases under the new hospital.
#[actix_web::test]
async fn a_priority_or_destination_changed_later_moves_the_kept_phases_and_the_report() {
    let shift = Shift::new().await;
    let units = shift.w.free_units().await;
    let hospital: (i64, String) = health_units::table
        .filter(health_units::active)
        .select((health_units::id, health_units::name))
        .order_by(health_units::id)
        .first(&mut shift.api().conn().await)
        .await
        .unwrap();
    let mut s = full(0);
    s.priority = "medium";
    s.close = None;
    s.steps.truncate(2); // on scene at c + 650: response 700 s
    let (id, dispatch) = shift.drive(&s, units[0]).await;
    let dispatch = dispatch.unwrap();
    let (from, to) = ("2031-03-10T12:00:00Z", "2031-03-10T13:00:00Z");
    let report = |group_by: &'static str| {
        let api = shift.api();
        async move {
            let uri = format!("/reports/response-times?from={from}&to={to}&group_by={group_by}");
            api.get("admin", &uri).await.ok().clone()
        }
    };
    let before = report("priority").await;
    assert_eq!(before["groups"][0]["key"], "medium");
    let response = phase(&before["groups"][0]["phases"], "response");
    assert_eq!(
        (&response["count"], &response["within_target"]),
        (&json!(1), &json!(1))
    );
    let before = report("health_unit").await;
    assert_eq!(before["groups"][0]["key"], Value::Null);
    assert_eq!(phase(&before["groups"][0]["phases"], "travel")["count"], 1);

    shift.at(s.created + 700);
    let v = shift.w.version(id).await;
    let r = shift
        .w
        .call(
            Method::PATCH,
            &format!("/incident/{id}"),
            "regulador",
            Some(v),
            Some(json!({"occurrence": {"priority": "critical"},
                        "patient": {"destination_id": hospital.0}})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    // The timeline names the incident `id`, and its unit's destination as every dispatch read
    // does: the dispatch's own, else the patient's.
    let timeline = shift
        .api()
        .get("admin", &format!("/incident/{id}/timeline"))
        .await;
    let t = timeline.ok();
    assert_eq!(t["id"], json!(id));
    assert!(t.get("incident_id").is_none(), "{t}");
    let read = shift
        .api()
        .get("admin", &format!("/dispatch/incident/{id}"))
        .await;
    assert_eq!(t["dispatches"][0]["destination"]["id"], json!(hospital.0));
    assert_eq!(
        t["dispatches"][0]["destination"],
        read.ok()[0]["destination"]
    );
    let conn = shift.api().conn().await;
    let (kept, units_kept) = dispatch_api::store::phases::stored(&conn, id)
        .await
        .unwrap();
    let kept = kept.unwrap();
    assert_eq!(kept.priority.map(|p| p.as_str()), Some("critical"));
    assert_eq!(kept.response_seconds, Some(700.0));
    assert_eq!(kept.response_dispatch_id, Some(dispatch));
    assert_eq!(units_kept.len(), 1);
    assert_eq!(units_kept[0].health_unit_id, Some(hospital.0));
    assert_eq!(units_kept[0].priority.map(|p| p.as_str()), Some("critical"));

    // Now a critical call, over its 600 s target; the unit's phases at that hospital.
    let after = report("priority").await;
    let keys: Vec<&Value> = after["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["key"])
        .collect();
    assert_eq!(keys, [&json!("critical")]);
    let response = phase(&after["groups"][0]["phases"], "response");
    assert_eq!(
        (
            &response["count"],
            &response["within_target"],
            &response["p50_seconds"]
        ),
        (&json!(1), &json!(0), &json!(700.0))
    );
    let after = report("health_unit").await;
    let hospital_group = &after["groups"][0];
    assert_eq!(hospital_group["key"], json!(hospital.0.to_string()));
    assert_eq!(hospital_group["label"], json!(hospital.1));
    assert_eq!(phase(&hospital_group["phases"], "travel")["count"], 1);
    assert_eq!(phase(&hospital_group["phases"], "response")["count"], 1);
}

#[actix_web::test]
async fn a_call_received_in_the_future_or_over_a_day_ago_is_refused_naming_the_field() {
    let shift = Shift::new().await;
    for (at, message) in [
        (t0() + Duration::seconds(5), "must not be in the future"),
        (
            t0() - Duration::hours(25),
            "must be within the last 24 hours",
        ),
    ] {
        let r = shift
            .w
            .post(
                "/incident",
                "tarm",
                None,
                json!({"caller_name": "Ana", "caller_phone": "(11) 98888-1234",
                       "address": "Rua Um, 1", "complaint": "queda",
                       "call_received_at": at.to_rfc3339()}),
            )
            .await;
        assert_eq!(
            r.problem(400, "invalid_payload").as_deref(),
            Some("call_received_at")
        );
        assert_eq!(r.body["errors"][0]["message"], message);
    }
    // Without it, the call was received when the incident was created.
    let (id, _) = shift.w.create().await;
    let read = shift.api().get("tarm", &format!("/incident/{id}")).await;
    assert_eq!(read.ok()["call_received_at"], json!("2031-03-10T12:00:00Z"));
    assert_eq!(read.ok()["created_at"], json!("2031-03-10T12:00:00Z"));
}

/// The demo data (anchored at the moment it was seeded) shows a centre at work: units held at
/// a hospital's door past the alert now, holds over 20 minutes and responses over target in
/// its history, and a hand-over now and then not recorded.
#[actix_web::test]
async fn the_demo_shows_holds_over_the_alert_and_responses_over_target() {
    let api = Api::new().await;
    let board = api.get("frota", "/health-unit/offload").await;
    let over: Vec<&Value> = board.ok()["hospitals"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["at_door"].as_array().unwrap())
        .filter(|u| u["over_target"] == true)
        .collect();
    assert!(
        !over.is_empty(),
        "no unit held past the alert: {}",
        board.body
    );
    // The last 21 days, a week at a time (a report covers at most 31 days).
    let now = api.state().clock.now();
    let mut holds_over = 0;
    let (mut responses, mut within, mut missing_holds) = (0, 0, 0);
    for week in 0..3 {
        let to = now - Duration::days(7 * week);
        let from = to - Duration::days(7);
        let uri = format!(
            "/reports/response-times?from={}&to={}",
            from.format("%Y-%m-%dT%H:%M:%SZ"),
            (to + Duration::seconds(1)).format("%Y-%m-%dT%H:%M:%SZ")
        );
        let r = api.get("admin", &uri).await;
        let all = &r.ok()["groups"][0]["phases"];
        let hold = phase(all, "hospital_hold");
        if hold["max_seconds"].as_f64().is_some_and(|m| m > 1200.0) {
            holds_over += 1;
        }
        missing_holds += hold["missing"].as_i64().unwrap();
        let response = phase(all, "response");
        responses += response["with_target"].as_i64().unwrap();
        within += response["within_target"].as_i64().unwrap();
    }
    assert!(holds_over > 0, "no hold over 20 minutes");
    assert!(
        responses > 0 && within < responses,
        "{within} of {responses}"
    );
    assert!(within > 0, "no response within target");
    assert!(missing_holds > 0, "no hand-over left unrecorded");
}

/// The manager's page shows the time on the centre's clock (`CENTRE_TIME_ZONE`, default
/// America/Sao_Paulo), not UTC labelled with the zone's name: at 21:45Z it is 18:45 in São
/// Paulo, and 17:45 for a centre in Manaus.
#[tokio::test(flavor = "multi_thread")]
async fn the_managers_page_says_the_time_on_the_centres_clock() {
    let clock = Clock::manual(
        DateTime::parse_from_rfc3339("2031-03-10T21:45:00Z")
            .unwrap()
            .with_timezone(&Utc),
    );
    let api = Api::at(clock).await;
    let cookie = crate::manager::sign_in(&api, &api.token("admin"))
        .await
        .expect("the admin signs in");
    let page = |api: &Api| {
        let req = api
            .request(reqwest::Method::GET, "/reports")
            .header("cookie", cookie);
        async move {
            let res = req.send().await.unwrap();
            assert_eq!(res.status(), 200);
            res.text().await.unwrap()
        }
    };
    let html = page(&api).await;
    assert!(
        html.contains("Agora: 10/03/2031 18:45 (America/Sao_Paulo)"),
        "{html}"
    );
    assert!(!html.contains("21:45"), "{html}");
}

/// The same page for a centre in Manaus (UTC-04:00).
#[tokio::test(flavor = "multi_thread")]
async fn a_centre_in_another_zone_reads_its_own_hours() {
    let clock = Clock::manual(
        DateTime::parse_from_rfc3339("2031-03-10T21:45:00Z")
            .unwrap()
            .with_timezone(&Utc),
    );
    let api = Api::at_zone(clock, chrono_tz::America::Manaus).await;
    let cookie = crate::manager::sign_in(&api, &api.token("admin"))
        .await
        .expect("the admin signs in");
    let res = api
        .request(reqwest::Method::GET, "/reports")
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(
        html.contains("Agora: 10/03/2031 17:45 (America/Manaus)"),
        "{html}"
    );
}

/// Both ways of computing the report (from the kept hours and from every kept phase) over
/// `[from, to)`, in `zone`, for every grouping: the same incidents and the same groups, to
/// the last bit of every figure.
async fn assert_hours_report_as_kept_phases(
    api: &Api,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    zone: &str,
) -> Value {
    use dispatch_api::domain::times::GroupBy;
    use dispatch_api::store::times::{report, report_from_kept_phases};
    let mut conn = api.conn().await;
    let mut by_day = Value::Null;
    for by in std::iter::once(None).chain(GroupBy::ALL.map(Some)) {
        let hours = report(&mut conn, from, to, by, zone).await.unwrap();
        let raw = report_from_kept_phases(&mut conn, from, to, by, zone)
            .await
            .unwrap();
        let (hours, raw) = (json!(hours), json!(raw));
        assert_eq!(hours, raw, "group_by {by:?}, {from} to {to} in {zone}");
        if by == Some(GroupBy::Day) {
            by_day = raw;
        }
    }
    by_day
}

/// The kept hours hold what rebuilding them from the kept phases gives (each hour's seconds
/// as a multiset; an hour the writes emptied is the same as none).
async fn assert_hours_as_rebuilt(api: &Api) {
    use diesel_async::SimpleAsyncConnection;
    #[derive(diesel::QueryableByName)]
    struct Hours {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Jsonb>)]
        hours: Option<Value>,
    }
    const READ: &str = "SELECT jsonb_agg(n ORDER BY n) AS hours FROM (
        SELECT (SELECT jsonb_object_agg(k, CASE WHEN jsonb_typeof(v) = 'array'
                    THEN coalesce((SELECT jsonb_agg(e ORDER BY e) FROM jsonb_array_elements(v) e),
                                  '[]') ELSE v END)
                  FROM jsonb_each(t.h || jsonb_build_object('kind', t.kind)) AS x(k, v)) AS n
          FROM (SELECT 'incident' AS kind, to_jsonb(i) AS h FROM dispatch.incident_phase_hours i
                UNION ALL
                SELECT 'unit', to_jsonb(u) FROM dispatch.unit_phase_hours u) t(kind, h)
         WHERE EXISTS (SELECT 1 FROM jsonb_each(t.h) AS x(k, v)
                        WHERE k NOT IN ('hour', 'priority') AND v NOT IN ('0', '[]'))) s";
    let mut conn = api.conn().await;
    let kept: Hours = diesel::sql_query(READ).get_result(&mut conn).await.unwrap();
    // Rebuilt in a transaction rolled back: the kept hours stay the writes'.
    conn.batch_execute("BEGIN; SELECT dispatch.response_hours_rebuild()")
        .await
        .unwrap();
    let rebuilt: Hours = diesel::sql_query(READ).get_result(&mut conn).await.unwrap();
    conn.batch_execute("ROLLBACK").await.unwrap();
    assert!(kept.hours.is_some());
    assert_eq!(kept.hours, rebuilt.hours);
}

/// The report of whole hours is read from the hours the writes keep (migration
/// `2026-11-29-700001_response_hours`), the rest of the range from the kept phases: over three
/// days of calls of every priority (one never submitted), with phases measured, missing, out
/// of order and still running, a call of the first day closed on the third, a priority changed
/// a day later, it gives the very figures of the statement over every kept phase, for every
/// grouping, for whole days, ranges cut inside an hour and less than an hour, in the centre's
/// zone, in UTC and in a zone half an hour off (whose days the hours do not divide); over the
/// demo data too. The hours themselves stay what rebuilding them from the kept phases gives.
#[actix_web::test]
async fn the_report_from_the_kept_hours_is_the_report_from_every_kept_phase() {
    let shift = Shift::new().await;
    let units = shift.w.free_units().await;
    assert!(units.len() >= 16, "{units:?}");
    // Received 10 min after t0 on the first day; its unit on scene, then nothing until the
    // third day.
    let mut late = full(600);
    late.priority = "high";
    late.steps.truncate(2);
    late.close = None;
    let (late_id, late_dispatch) = shift.drive(&late, units[0]).await;
    let priorities = ["critical", "high", "medium", "low"];
    let mut ids = Vec::new();
    for k in 0..14usize {
        // Every 5 h 7 min: calls at every hour of the centre's day, across its midnights.
        let mut s = full(4000 + k as i64 * (5 * 3600 + 420));
        s.priority = priorities[k % 4];
        match k % 5 {
            1 => s.steps.retain(|(step, _)| *step != "handed_over"),
            2 => s.decide = s.submit - 30,
            3 => {
                s.steps.truncate(2);
                s.close = None;
            }
            4 => {
                s.steps.truncate(4);
                s.close = None;
            }
            _ => {}
        }
        ids.push(shift.drive(&s, units[k + 1]).await.0);
    }
    // A call registered and never submitted: counted, in no phase.
    shift.at(4000 + 14 * (5 * 3600 + 420));
    let r = shift
        .w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": "Rui Costa", "caller_phone": "(11) 97777-1234",
                   "address": "Rua Dois, 2", "complaint": "dor"}),
        )
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);

    let t = |secs: i64| t0() + Duration::seconds(secs);
    // Whole days of the centre (midnight is 03:00 UTC), a range cut inside its first and last
    // hours, and one shorter than an hour.
    let ranges = [
        (t(-9 * 3600), t(87 * 3600)),
        (t(1234), t(50 * 3600 + 1900)),
        (t(4000 + 5 * 3600), t(4000 + 5 * 3600 + 2000)),
    ];
    let check = async || {
        for (from, to) in ranges {
            for zone in ["America/Sao_Paulo", "UTC", "Asia/Kolkata"] {
                assert_hours_report_as_kept_phases(shift.api(), from, to, zone).await;
            }
        }
        assert_hours_as_rebuilt(shift.api()).await;
    };
    check().await;
    let rfc3339 = |t: DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (from, to) = (rfc3339(ranges[0].0), rfc3339(ranges[0].1));
    let uri = format!("/reports/response-times?from={from}&to={to}&group_by=day");
    let before = shift.api().get("admin", &uri).await.ok().clone();

    // The first day's call closes on the third; another call's priority changes a day later.
    let end = 4000 + 14 * (5 * 3600 + 420) + 600;
    let steps = [
        ("transporting", end),
        ("at_destination", end + 900),
        ("handed_over", end + 1500),
        ("released", end + 1800),
    ];
    for (status, at) in steps {
        shift.at(at);
        let r = shift
            .w
            .post(
                &format!("/dispatch/{}/status", late_dispatch.unwrap()),
                "frota",
                None,
                json!({"status": status}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 200, "{status}: {}", r.body);
    }
    shift.at(end + 1900);
    let v = shift.w.version(late_id).await;
    ok_version(
        shift
            .w
            .post(
                &format!("/incident/{late_id}/close"),
                "regulador",
                Some(v),
                json!({"conclusion": "Atendido."}),
            )
            .await,
    );
    shift.at(end + 2000);
    let moved = ids[3]; // low, still open (its unit on scene)
    let v = shift.w.version(moved).await;
    let r = shift
        .w
        .call(
            Method::PATCH,
            &format!("/incident/{moved}"),
            "regulador",
            Some(v),
            Some(json!({"occurrence": {"priority": "critical"}})),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    check().await;

    // Over HTTP: the whole body the kept phases give, and the first day moved with its call.
    let after = shift.api().get("admin", &uri).await.ok().clone();
    let by_day = assert_hours_report_as_kept_phases(
        shift.api(),
        ranges[0].0,
        ranges[0].1,
        "America/Sao_Paulo",
    )
    .await;
    // As the client reads it: the same text, parsed the same way (serde_json's parser may
    // land a digit string a bit off the double it was written from, alike on both sides).
    let by_day: Value = serde_json::from_str(&by_day.to_string()).unwrap();
    assert_eq!(after["incidents"], by_day[0]);
    assert_eq!(after["incidents"], 16);
    assert_eq!(after["groups"], by_day[1]);
    let days: Vec<&Value> = after["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["key"])
        .collect();
    assert_eq!(
        days,
        [
            &json!("2031-03-10"),
            &json!("2031-03-11"),
            &json!("2031-03-12"),
            &json!("2031-03-13")
        ]
    );
    let first = |body: &Value, name: &str| phase(&body["groups"][0]["phases"], name).clone();
    let closed_before = first(&before, "total")["count"].as_i64().unwrap();
    assert_eq!(first(&after, "total")["count"], json!(closed_before + 1));
    assert_eq!(
        first(&after, "total")["max_seconds"],
        json!((end + 1800 - 600) as f64)
    );
    assert_ne!(
        first(&before, "hospital_hold"),
        first(&after, "hospital_hold")
    );
    // Every kind of figure was compared: measured, missing and out of order.
    let total = |name: &str, field: &str| -> i64 {
        after["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| phase(&g["phases"], name)[field].as_i64().unwrap())
            .sum()
    };
    assert!(total("hospital_hold", "missing") > 0);
    assert!(total("regulation", "out_of_order") > 0);
    assert!(total("response", "count") >= 10);

    // The demo data (microsecond times, every status), by whole days and cut anywhere.
    let (oldest, newest): (Option<DateTime<Utc>>, Option<DateTime<Utc>>) = incidents::table
        .filter(incidents::call_received_at.lt(t0() - Duration::days(300)))
        .select((
            diesel::dsl::min(incidents::call_received_at),
            diesel::dsl::max(incidents::call_received_at),
        ))
        .first(&mut shift.api().conn().await)
        .await
        .unwrap();
    let (oldest, newest) = (oldest.unwrap(), newest.unwrap() + Duration::seconds(1));
    for zone in ["America/Sao_Paulo", "Asia/Kolkata"] {
        let by_day = assert_hours_report_as_kept_phases(shift.api(), oldest, newest, zone).await;
        assert!(by_day[1].as_array().unwrap().len() >= 2, "{by_day}");
        assert_hours_report_as_kept_phases(
            shift.api(),
            oldest + Duration::minutes(90),
            newest - Duration::minutes(30),
            zone,
        )
        .await;
    }
}
