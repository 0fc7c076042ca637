//! The telephone (docs/dispatch-telephony.md) on a manual clock: a softphone's credentials,
//! the switch's events (authenticated, idempotent, in order), the `calls` socket, the
//! incident created from a call, and the report's telephone checked against figures computed
//! here. The same against a real Kamailio and SIPp: tests/tests/telephony.rs.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use dispatch_api::domain::call::sip_password;
use dispatch_api::realtime::WsSettings;
use dispatch_api::telephony::{SipAccounts, Telephony};
use futures_util::{SinkExt, StreamExt};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::client::W;
use crate::realtime::{Replica, Socket};
use crate::support::{Api, Reply};

const SECRET: &str = "telephony-phone-secret-0123456789abcdef";
const TOKEN: &str = "telephony-switch-token-0123456789abcdef";

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 13, 0, 0).unwrap()
}

fn telephony() -> Telephony {
    Telephony::new(
        Some(SipAccounts::new(
            SecretString::from(SECRET),
            "samu.test".into(),
            Some("wss://sip.samu.test/ws".into()),
            Duration::from_secs(12 * 3600),
        )),
        Some(SecretString::from(TOKEN)),
    )
}

async fn phoned() -> (W, common::Clock) {
    let clock = common::Clock::manual(start());
    let api = Api::phoned(clock.clone(), telephony()).await;
    (W { api }, clock)
}

/// `POST /telephony/events` with `auth` as the Authorization header.
async fn event(api: &Api, auth: Option<&str>, body: Value) -> Reply {
    let mut req = api
        .request(reqwest::Method::POST, "/telephony/events")
        .json(&body);
    if let Some(a) = auth {
        req = req.header("Authorization", a);
    }
    Reply::of(req.send().await.unwrap()).await
}

async fn switch(api: &Api, body: Value) -> Reply {
    event(api, Some(&format!("Bearer {TOKEN}")), body).await
}

/// `POST /incident` as `tarm`: a Basic data form with `extra` fields (`call_id`, ...).
async fn incident(w: &W, extra: Value) -> Reply {
    let mut body = json!({"caller_name": "Maria", "address": "Rua B, 2", "complaint": "queda"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    w.post("/incident", "tarm", None, body).await
}

async fn call_row(api: &Api, id: &str) -> Value {
    api.get("tarm", &format!("/telephony/calls/{id}"))
        .await
        .body
}

/// The next text message within 5 s.
async fn next(ws: &mut Socket) -> Value {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = m {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

/// Nothing arrives within `ms`.
async fn quiet(ws: &mut Socket, ms: u64) {
    if let Ok(Some(Ok(Message::Text(t)))) =
        tokio::time::timeout(Duration::from_millis(ms), ws.next()).await
    {
        panic!("unexpected message: {t}");
    }
}

async fn follow(ws: &mut Socket, queue: &str) -> Value {
    ws.send(Message::text(
        json!({"type": "subscribe", "queue": queue}).to_string(),
    ))
    .await
    .unwrap();
    next(ws).await
}

#[actix_web::test]
async fn phone_credentials_are_the_token_users_own_for_call_takers_and_regulators_only() {
    let (w, _clock) = phoned().await;
    let r = w.api.get("tarm", "/phone-credentials").await;
    let c = r.ok();
    let expiry = (start() + chrono::Duration::hours(12)).timestamp();
    assert_eq!(c["username"], format!("{expiry}:tarm"));
    assert_eq!(
        c["password"],
        sip_password(SECRET.as_bytes(), &format!("{expiry}:tarm"))
    );
    assert_eq!(c["domain"], "samu.test");
    assert_eq!(c["uri"], "sip:tarm@samu.test");
    assert_eq!(c["ws_url"], "wss://sip.samu.test/ws");
    assert_eq!(c["expires_at"], "2026-11-21T01:00:00Z");
    let r = w.api.get("regulador", "/phone-credentials").await;
    assert!(r.ok()["username"].as_str().unwrap().ends_with(":regulador"));
    for other in ["frota", "admin"] {
        for uri in ["/phone-credentials", "/telephony/calls/c-1"] {
            w.api.get(other, uri).await.problem(403, "forbidden");
        }
    }
    // Without PHONE_SECRET: 503, saying so.
    let plain = Api::new().await;
    plain
        .get("tarm", "/phone-credentials")
        .await
        .problem(503, "telephony_not_configured");
    let r = event(&plain, Some(&format!("Bearer {TOKEN}")), json!({})).await;
    r.problem(503, "telephony_not_configured");
}

#[actix_web::test]
async fn forged_unknown_out_of_order_and_malformed_events_are_refused_and_change_nothing() {
    let (w, clock) = phoned().await;
    let api = &w.api;
    let ringing = json!({"event": "ringing", "call_id": "c-1", "caller": "11 98888-7777",
                         "called": "192"});
    // Forged: no token, another token, a user's token, Basic with a wrong password.
    for auth in [
        None,
        Some("Bearer not-the-switch-token-0123456789abcdef".to_owned()),
        Some(format!("Bearer {}", api.token("admin"))),
        Some(format!(
            "Basic {}",
            base64_of(&format!("switch:{}x", TOKEN))
        )),
    ] {
        event(api, auth.as_deref(), ringing.clone())
            .await
            .problem(401, "unauthorized");
    }
    api.get("tarm", "/telephony/calls/c-1")
        .await
        .problem(404, "not_found");
    // Basic with the user `switch` is the switch (Kamailio's http_client).
    let r = event(
        api,
        Some(&format!("Basic {}", base64_of(&format!("switch:{TOKEN}")))),
        ringing.clone(),
    )
    .await;
    assert_eq!(r.ok()["replayed"], false);
    // An unknown call; fields of another event; a missing one; a time in the future.
    switch(
        api,
        json!({"event": "answered", "call_id": "nope", "by": "tarm"}),
    )
    .await
    .problem(404, "not_found");
    let r = switch(
        api,
        json!({"event": "ended", "call_id": "c-1", "by": "tarm"}),
    )
    .await;
    assert_eq!(r.problem(400, "invalid_payload").as_deref(), Some("by"));
    let r = switch(api, json!({"event": "answered", "call_id": "c-1"})).await;
    assert_eq!(r.problem(400, "invalid_payload").as_deref(), Some("by"));
    let future = (clock.now() + chrono::Duration::minutes(5)).to_rfc3339();
    let r = switch(
        api,
        json!({"event": "answered", "call_id": "c-1", "by": "tarm", "at": future}),
    )
    .await;
    assert_eq!(r.problem(400, "invalid_payload").as_deref(), Some("at"));
    let before = call_row(api, "c-1").await;
    // Replayed: the same event, nothing changes.
    clock.advance(chrono::Duration::seconds(3));
    let r = switch(api, ringing.clone()).await;
    assert_eq!(r.ok()["replayed"], true);
    assert_eq!(r.ok()["call"], before);
    // Out of order: ringing again with another number, answered before it rang, ended twice.
    let mut other = ringing.clone();
    other["caller"] = json!("11 97777-0000");
    switch(api, other).await.problem(409, "call_out_of_order");
    let early = (start() - chrono::Duration::seconds(1)).to_rfc3339();
    switch(
        api,
        json!({"event": "answered", "call_id": "c-1", "by": "tarm", "at": early}),
    )
    .await
    .problem(409, "call_out_of_order");
    assert_eq!(call_row(api, "c-1").await, before);
    switch(api, json!({"event": "ended", "call_id": "c-1"}))
        .await
        .ok();
    let ended = call_row(api, "c-1").await;
    assert_eq!(ended["outcome"], "abandoned");
    clock.advance(chrono::Duration::seconds(1));
    let at = clock.now().to_rfc3339();
    switch(api, json!({"event": "ended", "call_id": "c-1", "at": at}))
        .await
        .problem(409, "call_out_of_order");
    switch(
        api,
        json!({"event": "answered", "call_id": "c-1", "by": "tarm"}),
    )
    .await
    .problem(409, "call_out_of_order");
    assert_eq!(call_row(api, "c-1").await, ended);
}

fn base64_of(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[actix_web::test]
async fn a_call_rings_on_the_calls_socket_with_its_prank_calls_and_becomes_an_incident() {
    let (w, clock) = phoned().await;
    let api = &w.api;
    // The number made a prank call before.
    let r = w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": "Trote", "caller_phone": "(11) 98888-7777",
                   "address": "Rua A, 1", "complaint": "nada"}),
        )
        .await;
    let prank = r.body["id"].as_i64().unwrap();
    w.post(
        &format!("/incident/{prank}/prank-call"),
        "tarm",
        Some(1),
        json!({}),
    )
    .await
    .ok();

    let replica = Replica::start(api, WsSettings::default()).await;
    let mut taker = replica.socket(&api.token("tarm")).await;
    let mut fleet = replica.socket(&api.token("frota")).await;
    assert_eq!(follow(&mut taker, "calls").await["type"], "subscribed");
    assert_eq!(follow(&mut taker, "mine").await["type"], "subscribed");
    let refused = follow(&mut fleet, "calls").await;
    assert_eq!(refused["code"], "forbidden", "{refused}");

    let rang = clock.now();
    let ringing = json!({"event": "ringing", "call_id": "c-2", "caller": "+55 11 98888-7777",
                         "called": "192"});
    switch(api, ringing.clone()).await.ok();
    let m = next(&mut taker).await;
    assert_eq!(m["type"], "call.ringing", "{m}");
    assert_eq!(m["queue"], "calls");
    assert_eq!(m["call"]["prank_calls"], 1, "{m}");
    assert_eq!(m["call"]["caller"], "+55 11 98888-7777");
    // A replay is not told again.
    switch(api, ringing).await.ok();
    quiet(&mut taker, 300).await;

    clock.advance(chrono::Duration::seconds(9));
    switch(
        api,
        json!({"event": "answered", "call_id": "c-2", "by": "tarm"}),
    )
    .await
    .ok();
    let mut told = vec![next(&mut taker).await, next(&mut taker).await];
    told.sort_by_key(|m| m["queue"].as_str().unwrap().to_owned());
    assert_eq!(told[0]["queue"], "calls");
    assert_eq!(told[1]["queue"], "mine");
    for m in &told {
        assert_eq!(m["type"], "call.answered", "{m}");
        assert_eq!(m["call"]["answered_user_id"], api.id("tarm"));
    }

    // The incident from the call: its ring time and number; a different one is refused.
    let r = incident(
        &w,
        json!({"call_id": "c-2", "caller_phone": "11 90000-0000"}),
    )
    .await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("caller_phone")
    );
    let other_time = (rang + chrono::Duration::seconds(1)).to_rfc3339();
    let r = incident(
        &w,
        json!({"call_id": "c-2", "call_received_at": other_time}),
    )
    .await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("call_received_at")
    );
    let r = incident(&w, json!({"call_id": "unknown"})).await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("call_id")
    );
    let r = incident(&w, json!({})).await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("caller_phone")
    );
    let r = incident(
        &w,
        json!({"call_id": "c-2", "caller_phone": "(11) 98888-7777"}),
    )
    .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.body);
    let id = r.body["id"].as_i64().unwrap();
    let read = api.get("tarm", &format!("/incident/{id}")).await;
    let text = read.ok().to_string();
    assert!(
        text.contains("\"call_received_at\":\"2026-11-20T13:00:00Z\""),
        "{text}"
    );
    let r = incident(&w, json!({"call_id": "c-2"})).await;
    assert_eq!(
        r.problem(422, "invalid_reference").as_deref(),
        Some("call_id")
    );

    clock.advance(chrono::Duration::seconds(60));
    switch(api, json!({"event": "ended", "call_id": "c-2"}))
        .await
        .ok();
    let m = next(&mut taker).await;
    assert_eq!(m["type"], "call.ended", "{m}");
    assert_eq!(m["call"]["outcome"], "answered");
    replica.stop().await;
}

#[actix_web::test]
async fn the_report_counts_abandoned_calls_and_ring_to_answer_times_by_hour_and_day() {
    let (w, clock) = phoned().await;
    let api = &w.api;
    // (seconds after 13:00 it rang, seconds to answer or None: abandoned)
    let calls: [(i64, Option<i64>); 6] = [
        (0, Some(5)),
        (60, Some(12)),
        (120, Some(20)),
        (180, None),
        (3600 + 60, Some(3)),
        (3600 + 120, None),
    ];
    for (i, (at, answer)) in calls.iter().enumerate() {
        clock.set(start() + chrono::Duration::seconds(*at));
        let id = format!("r-{i}");
        switch(
            api,
            json!({"event": "ringing", "call_id": id, "caller": "11 90000-000{i}",
                   "called": "192"}),
        )
        .await
        .ok();
        if let Some(s) = answer {
            clock.advance(chrono::Duration::seconds(*s));
            switch(
                api,
                json!({"event": "answered", "call_id": id, "by": "tarm"}),
            )
            .await
            .ok();
        }
        clock.advance(chrono::Duration::seconds(30));
        switch(api, json!({"event": "ended", "call_id": id}))
            .await
            .ok();
    }
    // A call still ringing counts as a call, neither answered nor abandoned.
    switch(
        api,
        json!({"event": "ringing", "call_id": "r-ringing", "called": "192",
               "caller": "anonymous"}),
    )
    .await
    .ok();
    assert_eq!(call_row(api, "r-ringing").await["caller"], Value::Null);

    let from = start().to_rfc3339();
    let to = (start() + chrono::Duration::hours(3)).to_rfc3339();
    let uri = format!(
        "/reports/response-times?from={}&to={}",
        urlencode(&from),
        urlencode(&to)
    );
    let report = api.get("admin", &uri).await;
    let phone = &report.ok()["telephone"];
    let all = &phone["all"];
    assert_eq!(all["calls"], 7, "{phone}");
    assert_eq!(all["answered"], 4);
    assert_eq!(all["abandoned"], 2);
    assert_eq!(all["abandoned_share"], 2.0 / 6.0);
    let r2a = &all["ring_to_answer"];
    assert_eq!(r2a["phase"], "ring_to_answer");
    assert_eq!(r2a["count"], 4);
    // Answered in 3, 5, 12, 20 s: median 8.5, p90 17.6 (interpolated), max 20; within 15 s: 3
    // of 4 (NENA's target, 15 s).
    assert_eq!(r2a["p50_seconds"], 8.5);
    assert!(
        (r2a["p90_seconds"].as_f64().unwrap() - 17.6).abs() < 1e-9,
        "{r2a}"
    );
    assert_eq!(r2a["max_seconds"], 20.0);
    assert_eq!(r2a["with_target"], 4);
    assert_eq!(r2a["within_target"], 3);
    assert_eq!(r2a["within_target_share"], 0.75);
    // By hour, centre time (São Paulo, UTC-3): 10h and 11h.
    let hours: Vec<(String, i64, i64)> = phone["by_hour"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["key"].as_str().unwrap().to_owned(),
                g["calls"].as_i64().unwrap(),
                g["abandoned"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hours,
        vec![("10".to_owned(), 4, 1), ("11".to_owned(), 3, 1)]
    );
    assert_eq!(phone["by_day"][0]["key"], "2026-11-20");
    assert_eq!(phone["by_day"][0]["calls"], 7);

    // The target is editable like the others: 25 s puts all four within it.
    let r = w
        .call(
            actix_web::http::Method::PUT,
            "/response-targets",
            "admin",
            None,
            Some(
                json!({"targets": [{"phase": "ring_to_answer", "priority": "any",
                                     "seconds": 25}]}),
            ),
        )
        .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.body);
    let report = api.get("admin", &uri).await;
    assert_eq!(
        report.ok()["telephone"]["all"]["ring_to_answer"]["within_target"],
        4
    );

    // The CSV: the telephone's rows last.
    let csv = api
        .request(reqwest::Method::GET, &uri)
        .bearer_auth(api.token("admin"))
        .header("Accept", "text/csv")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        csv.lines()
            .any(|l| l == "telephone,,ring_to_answer,4,8.5,17.6,20,4,4,1,0,0,7,2,0.3333"),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("hour,10,ring_to_answer,3,")),
        "{csv}"
    );
}

fn urlencode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}
