//! A whole shift at once, as its people work it: call takers, regulators and fleet operators
//! over HTTP and WebSocket against one server, checked by outcomes and invariants (the driver,
//! shared with `bench/shift`, says which: bench/shift/driver.rs).

#[path = "../../../../bench/shift/driver.rs"]
mod driver;

use std::time::Duration;

use crate::support::Api;
use driver::{Config, Person};

/// The active users of `profile`, as people on shift with their tokens.
async fn people(api: &Api, profile: &str, n: usize) -> Vec<Person> {
    let users = api.get("admin", "/user").await;
    let people: Vec<Person> = users
        .array()
        .iter()
        .filter(|u| u["profile"]["title"] == profile && u["status"] == "ativo")
        .map(|u| {
            let id = u["id"].as_i64().unwrap();
            Person {
                id,
                name: u["descriptive_name"].as_str().unwrap().to_owned(),
                token: api.token_of(id, Duration::from_secs(3600)),
            }
        })
        .take(n)
        .collect();
    assert_eq!(
        people.len(),
        n,
        "the demo data has {n} active {profile} users"
    );
    people
}

#[actix_web::test]
async fn a_shift_ends_with_every_incident_final_and_every_invariant_kept() {
    let api = Api::new().await;
    // The replica's one listening connection, as `serve` starts it: socket events need it.
    let listener = dispatch_api::listener::spawn(
        api.db.url().to_owned(),
        api.state(),
        dispatch_api::listener::settings(),
    );
    // Listening and resynchronised: every write from now on reaches the sockets.
    tokio::time::timeout(Duration::from_secs(30), api.state().hub.listening())
        .await
        .expect("the listener connects");
    let cfg = Config {
        base: format!("http://{}", api.addr),
        call_takers: people(&api, "TARM", 3).await,
        regulators: people(&api, "MEDICO_REGULADOR", 3).await,
        fleet: people(&api, "OPERADOR_FROTA", 2).await,
        incidents_per_call_taker: 8,
        deadline: Duration::from_secs(120),
    };
    let outcome = driver::run(cfg).await;
    listener.abort();
    eprintln!(
        "shift: {} incidents, {} writes, {} socket messages checked, {} send-tos, {} transfers, {} overrides in {:?}",
        outcome.incidents,
        outcome.writes,
        outcome.messages,
        outcome.send_tos,
        outcome.transfers,
        outcome.overrides,
        outcome.elapsed
    );
    assert_eq!(outcome.violations, Vec::<String>::new());
    assert_eq!(outcome.incidents, 24);
    // The shift did what it means to: pickers were used and sockets carried the work.
    assert!(outcome.send_tos > 0 && outcome.transfers > 0, "{outcome:?}");
    assert!(outcome.messages > outcome.incidents as u64, "{outcome:?}");
}

/// Personal work (docs/dispatch-realtime.md, "Personal work"): four people follow their own
/// queue `mine`; an incident is decided, sent to another regulator, transferred twice and
/// sent back. Each write is heard by the one it came to (`held: true`) and the one it left
/// (`held: false`), by nobody else, and what each heard is what `mask?mine=true` lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recipients_socket_hears_each_send_to_and_transfer() {
    use crate::client::W;
    use crate::realtime::{Replica, Socket, next, send};
    use dispatch_api::realtime::WsSettings;
    use serde_json::{Value, json};

    let w = W::new().await;
    let replica = Replica::start(&w.api, WsSettings::default()).await;
    let a = w.api.id("regulador");
    let b = people(&w.api, "MEDICO_REGULADOR", 2)
        .await
        .into_iter()
        .find(|p| p.id != a)
        .expect("a second regulator");
    // Two operators other than `frota`, who transfers: nobody transfers to themself.
    let fleet: Vec<Person> = people(&w.api, "OPERADOR_FROTA", 3)
        .await
        .into_iter()
        .filter(|p| p.id != w.api.id("frota"))
        .take(2)
        .collect();
    let (f1, f2) = (&fleet[0], &fleet[1]);
    let tokens = [
        (a, w.api.token("regulador")),
        (b.id, b.token.clone()),
        (f1.id, f1.token.clone()),
        (f2.id, f2.token.clone()),
    ];
    let mut sockets: Vec<(i64, Socket)> = Vec::new();
    for (user, token) in &tokens {
        let mut ws = replica.socket(token).await;
        send(&mut ws, json!({"type": "subscribe", "queue": "mine"})).await;
        assert_eq!(
            next(&mut ws, 5).await,
            Some(json!({"type": "subscribed", "queue": "mine"}))
        );
        sockets.push((*user, ws));
    }
    let (id, v) = w.incident_in("awaiting_regulation").await;
    let told = |v: i32, state: &str, held: bool| {
        json!({"type": "queue.changed", "queue": "mine", "incident_id": id, "version": v,
               "state": state, "held": held})
    };
    // Every socket hears exactly what is expected of it for one write, in order.
    async fn hear(sockets: &mut [(i64, Socket)], expected: &[(i64, Value)]) {
        for (user, ws) in sockets.iter_mut() {
            for (_, message) in expected.iter().filter(|(u, _)| u == user) {
                assert_eq!(next(ws, 5).await.as_ref(), Some(message), "user {user}");
            }
        }
    }
    let version = |r: &crate::support::Reply| r.ok()["version"].as_i64().unwrap() as i32;
    // Sent by `token`'s regulator: nobody sends an incident to themself.
    let send_to = |v: i32, to: i64, token: String| {
        let w = &w;
        async move {
            let r = crate::support::Reply::of(
                w.api
                    .request(reqwest::Method::POST, &format!("/incident/{id}/send-to"))
                    .bearer_auth(token)
                    .header("If-Match", format!("\"{v}\""))
                    .json(&json!({"regulator_id": to}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            version(&r)
        }
    };
    let transfer = |v: i32, to: i64| {
        let w = &w;
        async move {
            let r = w
                .post(
                    &format!("/incident/{id}/transfer"),
                    "frota",
                    Some(v),
                    json!({"assigned_to_id": to}),
                )
                .await;
            version(&r)
        }
    };

    // The deciding regulator becomes the regulator: it came to them.
    let v = w.step(id, v, "decide").await;
    hear(&mut sockets, &[(a, told(v, "regulated", true))]).await;
    // Sent to the second regulator: theirs now, no longer the first's.
    let v = send_to(v, b.id, w.api.token("regulador")).await;
    hear(
        &mut sockets,
        &[
            (b.id, told(v, "regulated", true)),
            (a, told(v, "regulated", false)),
        ],
    )
    .await;
    // Transferred to a fleet operator: the regulator still holds it and hears nothing.
    let v = transfer(v, f1.id).await;
    hear(&mut sockets, &[(f1.id, told(v, "regulated", true))]).await;
    // Transferred on to another: the first operator loses it.
    let v = transfer(v, f2.id).await;
    hear(
        &mut sockets,
        &[
            (f2.id, told(v, "regulated", true)),
            (f1.id, told(v, "regulated", false)),
        ],
    )
    .await;
    // Sent back to the first regulator, by the second.
    let v = send_to(v, a, b.token.clone()).await;
    hear(
        &mut sockets,
        &[
            (a, told(v, "regulated", true)),
            (b.id, told(v, "regulated", false)),
        ],
    )
    .await;
    // Nothing else reached anyone.
    for (user, ws) in sockets.iter_mut() {
        assert_eq!(next(ws, 1).await, None, "user {user}");
    }
    // What the sockets said is what each person's own list shows.
    for (user, token) in &tokens {
        let mine = w
            .api
            .get_with_token(Some(token), "/incident/mask?mine=true&limit=20")
            .await;
        let listed = mine.array().iter().any(|r| r["id"] == id);
        assert_eq!(listed, *user == a || *user == f2.id, "user {user}");
    }
    replica.stop().await;
}

/// Access log (docs/dispatch-access-log.md): a shift's reads of one incident, by four
/// people through seven routes (the search that found it, and a revalidation answered 304),
/// are listed exactly, in order, with who and when; refused and missing reads are not; the
/// person's own listing holds only theirs; a listing narrowed to one route holds only its
/// reads; only the administrator may list.
#[actix_web::test]
async fn the_access_log_lists_exactly_the_reads_made_and_by_whom() {
    use common::Clock;
    use serde_json::{Value, json};

    let clock = Clock::manual(chrono::Utc::now());
    let api = Api::at(clock.clone()).await;
    let id = api
        .get("tarm", "/incident/mask?state=dispatched&limit=1")
        .await
        .array()[0]["id"]
        .as_i64()
        .unwrap();
    let mut names = std::collections::HashMap::new();
    for login in ["admin", "regulador", "frota", "tarm"] {
        let user = api.get("admin", &format!("/user/{}", api.id(login))).await;
        names.insert(login, user.ok()["descriptive_name"].clone());
    }
    let number = api.get("admin", &format!("/incident/{id}")).await.ok()["number"].clone();
    // That read by the administrator is the first entry.
    let mut expected: Vec<Value> = Vec::new();
    let entry = |login: &str, route: &str, at: chrono::DateTime<chrono::Utc>| {
        json!({
            "at": at, "user": {"id": api.id(login), "descriptive_name": names[login]},
            "incident_id": id, "incident_number": number, "route": route,
        })
    };
    let t0 = clock.now();
    // The search that found it showed its patient: the first entry, then the administrator's read.
    expected.push(entry("tarm", "GET /incident/mask", t0));
    expected.push(entry("admin", "GET /incident/{id}", t0));
    let reads: &[(&str, &str, &str)] = &[
        ("regulador", "", "GET /incident/{id}"),
        ("regulador", "/regulation", "GET /incident/{id}/regulation"),
        (
            "frota",
            "/fleet-occurrence",
            "GET /incident/{id}/fleet-occurrence",
        ),
        (
            "frota",
            "/unit-selection",
            "GET /incident/{id}/unit-selection",
        ),
        (
            "tarm",
            "/occurrence-view",
            "GET /incident/{id}/occurrence-view",
        ),
        ("admin", "/timeline", "GET /incident/{id}/timeline"),
    ];
    for (login, path, route) in reads {
        clock.advance(chrono::Duration::seconds(30));
        let r = api.get(login, &format!("/incident/{id}{path}")).await;
        r.ok();
        expected.push(entry(login, route, clock.now()));
    }
    // A revalidation answered 304 shows the record again: recorded.
    clock.advance(chrono::Duration::seconds(30));
    let etag = api.get("admin", &format!("/incident/{id}")).await;
    expected.push(entry("admin", "GET /incident/{id}", clock.now()));
    let etag = etag.header("etag").unwrap().to_owned();
    clock.advance(chrono::Duration::seconds(30));
    let r = api
        .request(reqwest::Method::GET, &format!("/incident/{id}"))
        .bearer_auth(api.token("regulador"))
        .header("If-None-Match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 304);
    expected.push(entry("regulador", "GET /incident/{id}", clock.now()));
    // Refused (the fleet operator may not read the regulation screen) and missing: not recorded.
    clock.advance(chrono::Duration::seconds(30));
    let refused = api
        .get("frota", &format!("/incident/{id}/regulation"))
        .await;
    refused.problem(403, "forbidden");
    assert_eq!(
        api.get("frota", "/incident/999999999/fleet-occurrence")
            .await
            .status
            .as_u16(),
        404
    );

    let log = api
        .get("admin", &format!("/incident/{id}/access-log"))
        .await;
    assert_eq!(log.ok(), &json!({"entries": expected, "truncated": false}));

    // One person's reads in a range: the regulator's, within [t0, now].
    let regulador = api.id("regulador");
    let range = format!(
        "/user/{regulador}/access-log?from={}&to={}",
        urlencoding(&t0.to_rfc3339()),
        urlencoding(&(clock.now() + chrono::Duration::seconds(1)).to_rfc3339())
    );
    let mine = api.get("admin", &range).await;
    let theirs: Vec<&Value> = expected
        .iter()
        .filter(|e| e["user"]["id"] == regulador)
        .collect();
    assert_eq!(theirs.len(), 3);
    assert_eq!(mine.ok()["entries"], json!(theirs));
    // A range that ends before the first read lists nothing.
    let before = format!(
        "/user/{regulador}/access-log?from={}&to={}",
        urlencoding(&(t0 - chrono::Duration::hours(1)).to_rfc3339()),
        urlencoding(&t0.to_rfc3339())
    );
    assert_eq!(api.get("admin", &before).await.ok()["entries"], json!([]));

    // Narrowed to one route: only its reads, in both listings; an unknown route is named.
    let route = |r: &str| {
        r.replace(' ', "%20")
            .replace('/', "%2F")
            .replace('{', "%7B")
            .replace('}', "%7D")
    };
    let regulation = api
        .get(
            "admin",
            &format!(
                "/incident/{id}/access-log?route={}",
                route("GET /incident/{id}/regulation")
            ),
        )
        .await;
    assert_eq!(
        regulation.ok()["entries"],
        json!([expected[3]]),
        "the regulator's one read of the regulation screen"
    );
    let details = api
        .get(
            "admin",
            &format!("{range}&route={}", route("GET /incident/{id}")),
        )
        .await;
    let theirs_details: Vec<&Value> = theirs
        .iter()
        .copied()
        .filter(|e| e["route"] == "GET /incident/{id}")
        .collect();
    assert_eq!(theirs_details.len(), 2);
    assert_eq!(details.ok()["entries"], json!(theirs_details));
    for uri in [
        format!("/incident/{id}/access-log?route=GET%20%2Fnowhere"),
        format!("{range}&route=get%20%2Fincident%2F%7Bid%7D"),
    ] {
        let r = api.get("admin", &uri).await;
        assert_eq!(
            r.problem(400, "invalid_parameter").as_deref(),
            Some("route")
        );
    }

    // Only the administrator lists; bad ranges and unknown ids are named.
    let r = api
        .get("regulador", &format!("/incident/{id}/access-log"))
        .await;
    r.problem(403, "forbidden");
    let r = api
        .get(
            "admin",
            &format!(
                "/user/{regulador}/access-log?from=2026-01-10T00:00:00Z&to=2026-01-01T00:00:00Z"
            ),
        )
        .await;
    r.problem(400, "invalid_parameter");
    assert_eq!(ends(&r), ["from", "to"], "{}", r.body);
    let r = api
        .get(
            "admin",
            &format!(
                "/user/{regulador}/access-log?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z"
            ),
        )
        .await;
    r.problem(400, "invalid_parameter");
    // Both ends named, as the report's range: either may be the one to move.
    assert_eq!(ends(&r), ["from", "to"], "{}", r.body);
    assert!(
        r.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("at most 31 days"),
        "{}",
        r.body
    );
    for missing in [
        "/incident/999999999/access-log",
        "/user/999999999/access-log",
    ] {
        api.get("admin", missing).await.problem(404, "not_found");
    }
    // The listings are reads of no patient data: the log is unchanged by them.
    let again = api
        .get("admin", &format!("/incident/{id}/access-log"))
        .await;
    assert_eq!(
        again.ok()["entries"].as_array().unwrap().len(),
        expected.len()
    );
}

/// `+` and `:` of an RFC 3339 time, escaped for a query string.
fn urlencoding(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

// --- Positions and a recommendation; managing the fleet and the team --------------------
// (docs/dispatch-routes.md, "Positions and a recommendation", "Managing the fleet and the team")

mod units {
    use actix_web::http::Method;
    use chrono::{Duration, Utc};
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use dispatch_api::schema::dispatch::{teams, unallocated, users};
    use serde_json::{Value, json};

    use crate::client::W;
    use crate::support::{keys, set};

    /// A demo point far from every demo base (Florianópolis, SC): only reported positions
    /// can be near it.
    const FAR: (f64, f64) = (-27.5954, -48.5480);

    /// About `km` kilometres north of `FAR` (to the metre: six decimals).
    fn north(km: f64) -> Value {
        let lat = ((FAR.0 + km / 111.195) * 1e6).round() / 1e6;
        json!({"lat": lat, "lon": FAR.1})
    }

    fn near(v: &Value, want: f64, by: f64) -> bool {
        v.as_f64().is_some_and(|x| (x - want).abs() <= by)
    }

    async fn type_id(w: &W, name: &str) -> i64 {
        let types = w.api.get("frota", "/mobile-unit-type").await;
        types
            .array()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no type {name}"))["id"]
            .as_i64()
            .unwrap()
    }

    async fn free_of(w: &W, type_id: i64) -> Vec<i64> {
        let r = w
            .api
            .get(
                "frota",
                &format!("/mobile-unit/options?available=true&vehicle_type_id={type_id}"),
            )
            .await;
        r.array()
            .iter()
            .map(|u| u["id"].as_i64().unwrap())
            .collect()
    }

    async fn report(w: &W, unit: i64, at: Value, ago: Duration) -> Reply {
        let now = w.api.state().clock.now();
        let body = json!({"location": at, "recorded_at": now - ago});
        w.post(
            &format!("/mobile-unit/{unit}/position"),
            "frota",
            None,
            body,
        )
        .await
    }

    use crate::support::Reply;

    fn ids_of(list: &Value) -> Vec<i64> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|u| u["id"].as_i64().unwrap())
            .collect()
    }

    #[actix_web::test]
    async fn the_recommendation_picks_the_nearest_free_unit_of_the_type() {
        let w = W::new().await;
        let (id, v) = w.incident_in("awaiting_regulation").await;
        let usa = type_id(&w, "USA").await;
        let action = w.action(true).await;
        let r = w
            .post(
                &format!("/incident/{id}/technical-decision"),
                "regulador",
                Some(v),
                json!({"action_id": action, "vehicle_type_id": usa}),
            )
            .await;
        let v = r.ok()["version"].as_i64().unwrap() as i32;

        // The call is placed on the map; the history says who placed it and where.
        let at = json!({"lat": FAR.0, "lon": FAR.1});
        let r = w
            .call(
                Method::PUT,
                &format!("/incident/{id}/location"),
                "tarm",
                Some(v),
                Some(json!({"location": at})),
            )
            .await;
        let v = r.ok()["version"].as_i64().unwrap() as i32;
        assert_eq!(r.header("etag"), Some(format!("\"{v}\"").as_str()));
        let detail = w
            .api
            .get("regulador", &format!("/incident/{id}?include_history=true"))
            .await;
        let last = detail.ok()["history"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["action"], "located", "{last}");
        assert_eq!(last["changes"]["location"], json!({"from": null, "to": at}));
        assert_eq!(detail.ok()["basic_data"]["location"], at);
        // A point off the map names its field; a stale version is 412.
        let r = w
            .call(
                Method::PUT,
                &format!("/incident/{id}/location"),
                "tarm",
                Some(v),
                Some(json!({"location": {"lat": -95.0, "lon": 0.0}})),
            )
            .await;
        assert_eq!(
            r.problem(400, "invalid_payload"),
            Some("location.lat".into())
        );
        let r = w
            .call(
                Method::PUT,
                &format!("/incident/{id}/location"),
                "tarm",
                Some(v - 1),
                Some(json!({"location": north(1.0)})),
            )
            .await;
        r.problem(412, "version_conflict");

        // Three free USA units report: A 5 km away, B 1 km away, C 0.2 km away but 31 min
        // ago (stale: its base, hundreds of km away, counts).
        let free = free_of(&w, usa).await;
        assert!(free.len() >= 3, "the demo has 3 free USA units: {free:?}");
        let (a, b, c) = (free[0], free[1], free[2]);
        let r = report(&w, a, north(5.0), Duration::minutes(2)).await;
        assert_eq!(r.ok()["outcome"], "recorded");
        assert_eq!(r.ok()["mobile_unit_id"], a);
        assert_eq!(r.ok()["sent_recorded_at"], r.ok()["recorded_at"]);
        report(&w, c, north(0.2), Duration::minutes(31)).await.ok();
        // An older report than the kept one changes nothing, and the answer says so: the
        // kept position, with the time sent beside it.
        let kept = report(&w, b, north(1.0), Duration::seconds(30)).await;
        let r = report(&w, b, north(50.0), Duration::minutes(10)).await;
        assert_eq!(r.ok()["outcome"], "older_than_kept");
        assert_eq!(r.ok()["location"], north(1.0));
        assert_eq!(r.ok()["recorded_at"], kept.ok()["recorded_at"]);
        assert_ne!(r.ok()["sent_recorded_at"], r.ok()["recorded_at"]);
        assert_eq!(
            keys(r.ok()),
            set(&[
                "mobile_unit_id",
                "outcome",
                "sent_recorded_at",
                "location",
                "recorded_at",
                "received_at"
            ])
        );

        let rec = w
            .api
            .get("frota", &format!("/incident/{id}/unit-recommendation"))
            .await;
        let rec = rec.ok().clone();
        assert_eq!(
            rec["requested_vehicle_type"],
            json!({"id": usa, "name": "USA"})
        );
        assert_eq!(rec["location"], at);
        assert_eq!(rec["speed_kmh"], 40.0);
        assert_eq!(rec["position_max_age_seconds"], 1800);
        let units = rec["units"].as_array().unwrap();
        assert_eq!(&ids_of(&rec["units"])[..2], [b, a]);
        assert!(near(&units[0]["distance_km"], 1.0, 0.002), "{}", units[0]);
        assert!(near(&units[0]["eta_seconds"], 90.0, 1.0), "{}", units[0]);
        assert_eq!(units[0]["position"]["source"], "reported");
        assert!(
            near(&units[0]["position"]["age_seconds"], 30.0, 2.0),
            "{}",
            units[0]
        );
        assert_eq!(units[0]["position"]["stale"], false);
        assert!(near(&units[1]["distance_km"], 5.0, 0.002), "{}", units[1]);
        assert!(near(&units[1]["eta_seconds"], 450.0, 1.0), "{}", units[1]);
        let stale = units.iter().find(|u| u["id"] == c).expect("C is free");
        assert_eq!(stale["position"]["source"], "base", "{stale}");
        assert_eq!(stale["position"]["stale"], true);
        assert!(
            near(&stale["position"]["age_seconds"], 31.0 * 60.0, 2.0),
            "{stale}"
        );
        assert!(stale["distance_km"].as_f64().unwrap() > 400.0, "{stale}");
        assert_eq!(
            keys(&units[0]),
            set(&[
                "id",
                "name",
                "base",
                "vehicle_type",
                "position",
                "distance_km",
                "eta_seconds",
                "rank",
                "rank_reason"
            ])
        );
        // Each listed unit says why it ranks where it does: B the nearest, each next one
        // farther than the one above it (or as far, then by id).
        assert_eq!(
            (&units[0]["rank"], &units[0]["rank_reason"]),
            (&json!(1), &json!("nearest"))
        );
        for (i, pair) in units.windows(2).enumerate() {
            let (above, unit) = (&pair[0], &pair[1]);
            assert_eq!(unit["rank"], json!(i + 2));
            let why = if above["distance_km"] == unit["distance_km"] {
                "same_distance"
            } else {
                "farther"
            };
            assert_eq!(unit["rank_reason"], why, "{unit}");
        }
        // Every free unit of the type is listed; the other units of the type are left out
        // with why; those of other types only counted.
        assert_eq!(units.len(), free.len());
        let left = rec["left_out"].as_array().unwrap();
        for u in left {
            assert_eq!(u["vehicle_type"]["id"], usa, "{u}");
            let why = u["reason"].as_str().unwrap();
            assert!(["busy", "inactive", "no_position"].contains(&why), "{u}");
        }
        let others = rec["other_types"]["count"].as_u64().unwrap();
        assert!(others > 0, "{}", rec["other_types"]);
        assert_eq!(rec["other_types"]["listed"], false);
        let all = w
            .api
            .get(
                "frota",
                &format!("/incident/{id}/unit-recommendation?other_types=true"),
            )
            .await;
        let all = all.ok();
        assert_eq!(all["units"], rec["units"]);
        assert_eq!(all["other_types"], json!({"count": others, "listed": true}));
        let listed_others: Vec<&Value> = all["left_out"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["vehicle_type"]["id"] != usa)
            .collect();
        assert_eq!(listed_others.len() as u64, others);
        assert!(listed_others.iter().any(|u| u["reason"] == "other_type"));
        assert!(
            rec.to_string().len() < all.to_string().len(),
            "the lean answer is the smaller"
        );

        // B is sent: it leaves the list, busy; A is the nearest now.
        let r = w
            .post(
                &format!("/incident/{id}/dispatch"),
                "frota",
                Some(v),
                json!({"mobile_unit_id": b}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        let rec = w
            .api
            .get("regulador", &format!("/incident/{id}/unit-recommendation"))
            .await;
        assert_eq!(ids_of(&rec.ok()["units"])[0], a);
        let busy = rec.ok()["left_out"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["id"] == b)
            .cloned();
        assert_eq!(busy.map(|u| u["reason"].clone()), Some(json!("busy")));

        // The board shows where each unit is and how long it has been in its step.
        let board = w.api.get("frota", "/mobile-unit/board").await;
        let row = |unit: i64| {
            board
                .array()
                .iter()
                .find(|u| u["id"] == unit)
                .cloned()
                .unwrap()
        };
        let sent = row(b);
        assert_eq!(sent["position"]["source"], "reported");
        assert_eq!(sent["position"]["location"], north(1.0));
        assert_eq!(sent["dispatch"]["status"], "assigned");
        assert_eq!(sent["step_since"], sent["dispatch"]["assigned_at"]);
        assert!(near(&sent["seconds_in_step"], 0.0, 5.0), "{sent}");
        let stale = row(c);
        assert_eq!(stale["position"]["source"], "base");
        assert_eq!(stale["position"]["stale"], true);
        assert_eq!(stale["step_since"], Value::Null);
        assert_eq!(stale["seconds_in_step"], Value::Null);
        assert!(
            keys(&sent).is_superset(&set(&["id", "name", "base", "vehicle_type", "dispatch"])),
            "{sent}"
        );

        // Who may: fleet and regulators read it; a call taker does not; the tracker posts.
        w.api
            .get("tarm", &format!("/incident/{id}/unit-recommendation"))
            .await
            .problem(403, "forbidden");
        report(&w, a, north(2.0), Duration::zero()).await.ok();
        let r = w
            .post(
                &format!("/mobile-unit/{a}/position"),
                "tarm",
                None,
                json!({"location": {"lat": 0.0, "lon": 0.0}, "recorded_at": Utc::now()}),
            )
            .await;
        r.problem(403, "forbidden");
        let r = w
            .post(
                &format!("/mobile-unit/{a}/position"),
                "frota",
                None,
                json!({"location": {"lat": 0.0, "lon": 181.0},
                       "recorded_at": w.api.state().clock.now()}),
            )
            .await;
        assert_eq!(
            r.problem(400, "invalid_payload"),
            Some("location.lon".into())
        );
    }

    #[actix_web::test]
    async fn managing_the_fleet_and_the_team_is_recorded_and_refused_while_dispatched() {
        let w = W::new().await;
        let unit = w.free_units().await[0];
        let team: (i32, String) = teams::table
            .select((teams::id, teams::name))
            .order_by(teams::id)
            .first(&mut w.api.conn().await)
            .await
            .unwrap();
        let patch = async |login: &str, unit: i64, body: Value| {
            w.call(
                Method::PATCH,
                &format!("/mobile-unit/{unit}"),
                login,
                None,
                Some(body),
            )
            .await
        };
        let r = patch(
            "frota",
            unit,
            json!({"base": "Centro", "team_id": team.0, "active": false}),
        )
        .await;
        let managed = r.ok().clone();
        assert_eq!(managed["base"], "Centro");
        assert_eq!(managed["active"], false);
        assert_eq!(managed["team"], json!({"id": team.0, "name": team.1}));
        // The fleet list shows it; the board (active units only) no longer does.
        let all = w.api.get("admin", "/mobile-unit").await;
        let row = all
            .array()
            .iter()
            .find(|u| u["id"] == unit)
            .unwrap()
            .clone();
        assert_eq!(
            (row["base"].clone(), row["active"].clone()),
            (json!("Centro"), json!(false))
        );
        let board = w.api.get("frota", "/mobile-unit/board").await;
        assert!(board.array().iter().all(|u| u["id"] != unit));
        // Back to active by the administrator; the history names both writes and authors.
        let r = patch("admin", unit, json!({"active": true, "team_id": null})).await;
        assert_eq!(r.ok()["team"], Value::Null);
        let history = w
            .api
            .get("admin", &format!("/mobile-unit/{unit}/history"))
            .await;
        let entries = history.array();
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_eq!(entries[0]["by"]["id"], w.api.id("frota"));
        assert_eq!(
            entries[0]["changes"]["active"],
            json!({"from": true, "to": false})
        );
        assert_eq!(entries[0]["changes"]["base"]["to"], "Centro");
        assert_eq!(entries[1]["by"]["id"], w.api.id("admin"));
        assert_eq!(
            entries[1]["changes"]["team"],
            json!({"from": {"id": team.0, "name": team.1}, "to": null})
        );
        // Refusals: an unknown base (nothing written), nothing to change, the wrong profile.
        let r = patch("frota", unit, json!({"base": "Atlantis", "active": false})).await;
        assert_eq!(r.problem(422, "invalid_reference"), Some("base".into()));
        patch("frota", unit, json!({}))
            .await
            .problem(400, "invalid_payload");
        patch("tarm", unit, json!({"active": false}))
            .await
            .problem(403, "forbidden");
        let all = w.api.get("admin", "/mobile-unit").await;
        let row = all
            .array()
            .iter()
            .find(|u| u["id"] == unit)
            .unwrap()
            .clone();
        assert_eq!(row["active"], true);
        // A unit on a dispatch is not changed: 409, and nothing written.
        let (id, v) = w.incident_in("regulated").await;
        let r = w
            .post(
                &format!("/incident/{id}/dispatch"),
                "frota",
                Some(v),
                json!({"mobile_unit_id": unit}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        patch("frota", unit, json!({"active": false}))
            .await
            .problem(409, "unit_dispatched");
        let history = w
            .api
            .get("frota", &format!("/mobile-unit/{unit}/history"))
            .await;
        assert_eq!(history.array().len(), 2);

        // A person from /unallocated joins the team and leaves the list; again is 409.
        let page = w.api.get("admin", "/unallocated?page_size=100").await;
        let person = page.ok()["items"][0]["user"]["id"].as_i64().unwrap();
        let total = page.ok()["total"].as_i64().unwrap();
        let alloc = |login: &'static str, path: &'static str, body: Value| {
            let uri = format!("/team/{}/{path}", team.0);
            let w = &w;
            async move { w.post(&uri, login, None, body).await }
        };
        let r = alloc("admin", "allocate", json!({"user_id": person})).await;
        assert_eq!(r.ok()["team"], json!({"id": team.0, "name": team.1}));
        assert_eq!(r.ok()["user"]["id"], person);
        let page = w.api.get("admin", "/unallocated?page_size=100").await;
        assert_eq!(page.ok()["total"].as_i64().unwrap(), total - 1);
        assert!(
            page.ok()["items"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["user"]["id"] != person)
        );
        let team_of: Option<i32> = users::table
            .find(person)
            .select(users::team_id)
            .first(&mut w.api.conn().await)
            .await
            .unwrap();
        assert_eq!(team_of, Some(team.0));
        alloc("frota", "allocate", json!({"user_id": person}))
            .await
            .problem(409, "already_allocated");
        // Released with a reason: back on the list with it, from the write's time.
        let r = alloc(
            "frota",
            "release",
            json!({"user_id": person, "reason": "férias"}),
        )
        .await;
        assert_eq!(r.ok()["team"], Value::Null);
        let page = w.api.get("admin", "/unallocated?page_size=100").await;
        assert_eq!(page.ok()["total"].as_i64().unwrap(), total);
        let entry = page.ok()["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["user"]["id"] == person)
            .cloned()
            .unwrap();
        assert_eq!(entry["reason"], "férias");
        let (reason, since): (String, chrono::DateTime<Utc>) = unallocated::table
            .filter(unallocated::user_id.eq(person))
            .select((unallocated::reason, unallocated::since))
            .first(&mut w.api.conn().await)
            .await
            .unwrap();
        assert_eq!(reason, "férias");
        assert!(since <= w.api.state().clock.now());
        alloc(
            "frota",
            "release",
            json!({"user_id": person, "reason": "x"}),
        )
        .await
        .problem(409, "not_allocated");
        alloc(
            "frota",
            "release",
            json!({"user_id": person, "reason": " "}),
        )
        .await
        .problem(400, "invalid_payload");
        alloc("tarm", "allocate", json!({"user_id": person}))
            .await
            .problem(403, "forbidden");
    }
}

// --- Queues that can be worked, complete screens, pickers --------------------------------
// (docs/dispatch-routes.md, "Work queues", "Screens -> requests", "Pickers")

mod screens {
    use actix_web::http::Method;
    use chrono::{DateTime, Duration, SubsecRound, Utc};
    use common::Clock;
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use dispatch_api::schema::dispatch::{employees, health_units, profiles, users};
    use serde_json::{Value, json};

    use crate::client::W;
    use crate::support::{Reply, keys, set};

    /// Where a row stands in a work queue: priority (critical first, none last), then how
    /// long it has waited, then id.
    fn queue_key(row: &Value) -> (usize, DateTime<Utc>, i64) {
        let rank = ["critical", "high", "medium", "low"]
            .iter()
            .position(|p| row["priority"] == *p)
            .unwrap_or(4);
        (rank, waiting(row), row["id"].as_i64().unwrap())
    }

    fn waiting(row: &Value) -> DateTime<Utc> {
        row["waiting_since"].as_str().unwrap().parse().unwrap()
    }

    /// Every row of `/incident/mask?{query}`, page by page, as a client scrolls it.
    async fn scrolled(w: &W, login: &str, query: &str) -> Vec<Value> {
        let mut rows: Vec<Value> = Vec::new();
        loop {
            let uri = format!("/incident/mask?{query}&offset={}", rows.len());
            let page = w.api.get(login, &uri).await.array().clone();
            let full = page.len() == 20;
            rows.extend(page);
            if !full {
                return rows;
            }
        }
    }

    fn ids(rows: &[Value]) -> Vec<i64> {
        rows.iter().map(|r| r["id"].as_i64().unwrap()).collect()
    }

    /// The regulation queue is worked by priority, critical first, then by how long each call
    /// has waited (issue 26: "the oldest, five days old, on page 4"): calls of known
    /// priorities handed to regulation at known times on the service's clock come back in
    /// that order, each row with its priority, complaint and waiting time, and the whole
    /// queue is in that order page after page. Once decided, the fleet's queue rows carry
    /// the vehicle type asked for.
    #[actix_web::test]
    async fn the_regulation_queue_is_worked_by_priority_then_waiting_time() {
        let clock = Clock::manual(Utc::now().trunc_subsecs(6));
        let w = W::at(clock.clone()).await;
        let t0 = clock.now();
        // (priority, when the call was handed to regulation)
        let calls: [(Option<&str>, Duration); 7] = [
            (Some("medium"), -Duration::days(5)),
            (Some("critical"), Duration::minutes(3)),
            (Some("critical"), Duration::minutes(1)),
            (Some("high"), Duration::zero()),
            (Some("medium"), Duration::minutes(2)),
            (None, Duration::minutes(4)),
            (Some("low"), Duration::minutes(5)),
        ];
        let mut sent = Vec::new();
        for (n, (priority, at)) in calls.iter().enumerate() {
            clock.set(t0 + *at);
            let mut call = json!({"caller_name": format!("Fila {n}"),
                "caller_phone": "(12) 99100-4321", "address": "Rua da Fila, 1",
                "complaint": format!("queixa {n}")});
            if let Some(p) = priority {
                call["occurrence"] = json!({"priority": p});
            }
            let r = w.post("/incident", "tarm", None, call).await;
            assert_eq!(r.status.as_u16(), 201, "{}", r.body);
            let id = r.body["id"].as_i64().unwrap();
            let uri = format!("/incident/{id}/submit");
            w.post(&uri, "tarm", Some(1), json!({})).await.ok();
            sent.push(id);
        }
        clock.set(t0 + Duration::minutes(10));

        let queue = scrolled(&w, "regulador", "state=awaiting_regulation").await;
        let order: Vec<_> = queue.iter().map(queue_key).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted, "the whole queue in queue order");
        let ours: Vec<i64> = ids(&queue)
            .into_iter()
            .filter(|id| sent.contains(id))
            .collect();
        assert_eq!(ours, [2, 1, 3, 0, 4, 6, 5].map(|n| sent[n]));
        for (n, (priority, at)) in calls.iter().enumerate() {
            let row = queue.iter().find(|r| r["id"] == sent[n]).unwrap();
            assert_eq!(row["priority"], json!(priority), "{row}");
            assert_eq!(row["complaint"], format!("queixa {n}"));
            assert_eq!(waiting(row), t0 + *at, "{row}");
            assert_eq!(row["state"], "awaiting_regulation");
            assert_eq!(row["requested_vehicle_type"], Value::Null);
        }
        assert_eq!(keys(&queue[0]), set(crate::incidents::MASK_ROW_KEYS));
        // Newest first on request; a queue order for what is no queue is refused, named.
        let newest = scrolled(&w, "regulador", "state=awaiting_regulation&order=newest").await;
        assert_eq!(ids(&newest)[0], sent[6]);
        let created: Vec<&str> = newest
            .iter()
            .map(|r| r["created_at"].as_str().unwrap())
            .collect();
        let mut by_time: Vec<DateTime<Utc>> = created.iter().map(|t| t.parse().unwrap()).collect();
        by_time.reverse();
        assert!(by_time.is_sorted(), "{created:?}");
        let r = w
            .api
            .get("regulador", "/incident/mask?q=fila&order=queue")
            .await;
        assert_eq!(
            r.problem(400, "invalid_parameter").as_deref(),
            Some("order")
        );

        // Decided: the critical call asks for a USA, the high one for no vehicle. The
        // fleet's queue rows say what each asks for, so no request per row.
        let defaults = w.api.get("frota", "/shared/default-values").await;
        let usa = defaults.ok()["vehicle_types"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "USA")
            .cloned()
            .unwrap();
        let action = w.action(true).await;
        for (n, vehicle) in [(2, Some(&usa)), (3, None)] {
            clock.advance(Duration::minutes(1));
            let mut decision = json!({"action_id": action, "notes": "decidido"});
            if let Some(t) = vehicle {
                decision["vehicle_type_id"] = t["id"].clone();
            }
            let id = sent[n];
            let uri = format!("/incident/{id}/technical-decision");
            w.post(&uri, "regulador", Some(2), decision).await.ok();
        }
        let fleet = scrolled(&w, "frota", "state=regulated").await;
        let order: Vec<_> = fleet.iter().map(queue_key).collect();
        assert!(order.is_sorted(), "{order:?}");
        let row = |id: i64| fleet.iter().find(|r| r["id"] == id).cloned().unwrap();
        let (critical, high) = (row(sent[2]), row(sent[3]));
        assert_eq!(critical["requested_vehicle_type"], usa);
        assert_eq!(critical["priority"], "critical");
        assert_eq!(critical["complaint"], "queixa 2");
        assert_eq!(waiting(&critical), t0 + Duration::minutes(11));
        assert_eq!(high["requested_vehicle_type"], Value::Null);
        assert_eq!(waiting(&high), t0 + Duration::minutes(12));
        let position = |id: i64| ids(&fleet).iter().position(|x| *x == id).unwrap();
        assert!(position(sent[2]) < position(sent[3]));
        // The row says what the selected incident's summary says.
        let summary = w
            .api
            .get("frota", &format!("/incident/{}/fleet-summary", sent[2]))
            .await;
        for field in ["priority", "complaint", "requested_vehicle_type", "number"] {
            assert_eq!(summary.ok()[field], critical[field], "{field}");
        }
    }

    /// The `ETag` of a screen, and the version its body carries (quoted, as `If-Match` takes it).
    fn etag(r: &Reply) -> String {
        assert_eq!(r.status.as_u16(), 200, "{}", r.body);
        r.header("etag").expect("an ETag").to_owned()
    }

    /// Every screen that carries the incident's version sends it as its `ETag`, the value its
    /// writes take as `If-Match` (a stale one is 412); the regulator sees the
    /// intercurrences; the fleet occurrence names the caller and who holds the attendance;
    /// the pickers never offer the caller and the "Transfer to" rows name team and
    /// professional type; hospitals are found by their words in any order, narrowed by city;
    /// the occurrence type is one of the catalogue's.
    #[actix_web::test]
    async fn every_screen_shows_what_it_needs_and_its_etag_is_what_writes_take() {
        let w = W::new().await;
        let (id, mut v) = w.incident_in("regulated").await;

        // The occurrence type: the catalogue's names, in default values; another is refused.
        let defaults = w.api.get("tarm", "/shared/default-values").await;
        let types: Vec<Value> = defaults.ok()["occurrence_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(
            types,
            [
                "Clínico",
                "Obstétrico",
                "Pediátrico",
                "Psiquiátrico",
                "Trauma"
            ]
            .map(Value::from)
        );
        let patch = |v: i32, body: Value| crate::destination::patch(&w, id, v, body);
        let r = patch(v, json!({"occurrence": {"type": "Queimadura"}})).await;
        assert_eq!(
            r.problem(400, "invalid_payload").as_deref(),
            Some("occurrence.type")
        );
        assert_eq!(r.body["allowed_values"], json!(types));
        assert!(r.body["detail"].as_str().unwrap().contains("`Queimadura`"));
        assert_eq!(w.version(id).await, v);
        v = patch(v, json!({"occurrence": {"type": "Trauma"}}))
            .await
            .ok()["version"]
            .as_i64()
            .unwrap() as i32;

        // Hospitals by their words in any order, then one city's.
        let mut conn = w.api.conn().await;
        let hospitals: Vec<i64> = diesel::insert_into(health_units::table)
            .values(
                [
                    ("Hospital Regional de São Sebastião", "São Sebastião"),
                    ("UPA São Sebastião Centro", "São Sebastião"),
                    ("Hospital São Sebastião", "Caraguatatuba"),
                ]
                .iter()
                .enumerate()
                .map(|(n, (name, city))| {
                    (
                        health_units::cnes.eq(format!("99{n:05}")),
                        health_units::name.eq(*name),
                        health_units::city.eq(*city),
                        health_units::uf.eq("SP"),
                        health_units::active.eq(true),
                    )
                })
                .collect::<Vec<_>>(),
            )
            .returning(health_units::id)
            .get_results(&mut conn)
            .await
            .unwrap();
        let state = w.api.state();
        state.catalog.refresh(&state.pool).await.unwrap();
        // `hosp sao` matches many demo units ("Hospital São Lucas de ..."): scrolled, every
        // one holds both words and ours are among them.
        let mut found: Vec<Value> = Vec::new();
        loop {
            let uri = format!("/health-unit?q=hosp%20sao&offset={}", found.len());
            let page = w.api.get("regulador", &uri).await.array().clone();
            let full = page.len() == 20;
            found.extend(page);
            if !full {
                break;
            }
        }
        for h in &found {
            let name = dispatch_api::search::fold(h["name"].as_str().unwrap());
            assert!(name.contains("hosp") && name.contains("sao"), "{h}");
        }
        let found = ids(&found);
        assert!(found.contains(&hospitals[0]) && found.contains(&hospitals[2]));
        let apart = w
            .api
            .get("regulador", "/health-unit?q=sebastiao%20HOSP")
            .await;
        assert_eq!(ids(apart.array()), [hospitals[0], hospitals[2]]);
        let in_city = w
            .api
            .get(
                "regulador",
                "/health-unit?q=hosp%20sao&city=S%C3%83O%20SEBASTI%C3%83O",
            )
            .await;
        assert_eq!(
            in_city.ok(),
            &json!([{"id": hospitals[0], "name": "Hospital Regional de São Sebastião",
                     "city": "São Sebastião", "uf": "SP"}])
        );
        let city = w
            .api
            .get("regulador", "/health-unit?city=sao%20sebastiao")
            .await;
        assert_eq!(ids(city.array()), [hospitals[0], hospitals[1]]);
        v = patch(v, json!({"patient": {"destination_id": hospitals[0]}}))
            .await
            .ok()["version"]
            .as_i64()
            .unwrap() as i32;

        // "Send to": a regulator is never offered themself, a colleague is.
        let (colleague, colleague_name): (i64, String) = users::table
            .inner_join(profiles::table)
            .filter(profiles::title.eq("MEDICO_REGULADOR"))
            .filter(users::status.eq("ativo"))
            .filter(users::id.ne(w.api.id("regulador")))
            .select((users::id, users::descriptive_name))
            .first(&mut conn)
            .await
            .unwrap();
        let q = colleague_name.replace(' ', "%20");
        let theirs = w
            .api
            .get_as_user(colleague, &format!("/user/search?q={q}"))
            .await;
        assert!(
            ids(theirs.array()).iter().all(|u| *u != colleague),
            "{}",
            theirs.body
        );
        let offered = w.api.get("regulador", &format!("/user/search?q={q}")).await;
        assert!(ids(offered.array()).contains(&colleague));
        let sent = w
            .post(
                &format!("/incident/{id}/send-to"),
                "regulador",
                Some(v),
                json!({"regulator_id": colleague}),
            )
            .await;
        v = sent.ok()["version"].as_i64().unwrap() as i32;

        // "Transfer to": an employee with a team and a professional type, offered to the
        // fleet operator with both, never to themself.
        let (person, name): (i64, String) = employees::table
            .inner_join(users::table)
            .filter(employees::active)
            .filter(users::status.eq("ativo"))
            .filter(users::team_id.is_not_null())
            .filter(users::professional_type_id.is_not_null())
            .filter(users::id.ne(w.api.id("frota")))
            .select((users::id, users::descriptive_name))
            .first(&mut conn)
            .await
            .unwrap();
        let q = name.replace(' ', "%20");
        let own = w
            .api
            .get_as_user(person, &format!("/employee/search?query={q}"))
            .await;
        assert!(
            ids(own.array()).iter().all(|u| *u != person),
            "{}",
            own.body
        );
        let options = w
            .api
            .get("frota", &format!("/employee/search?query={q}"))
            .await;
        let option = options
            .array()
            .iter()
            .find(|o| o["id"] == person)
            .cloned()
            .expect("offered to the fleet operator");
        let record = w
            .api
            .get("frota", &format!("/employee/user_id/{person}"))
            .await;
        assert_eq!(
            option,
            json!({"id": person, "descriptive_name": name,
                   "team": record.ok()["team"], "professional_type": record.ok()["professional_type"]})
        );
        assert!(option["team"].is_object() && option["professional_type"].is_object());

        // The transfer takes the fleet occurrence's ETag as its If-Match.
        let occurrence = w
            .api
            .get("frota", &format!("/incident/{id}/fleet-occurrence"))
            .await;
        let tag = etag(&occurrence);
        assert_eq!(tag, format!("\"{v}\""));
        let r = w
            .call_with(
                Method::POST,
                &format!("/incident/{id}/transfer"),
                "frota",
                None,
                Some(json!({"assigned_to_id": person})),
                &[("If-Match", tag.as_str())],
            )
            .await;
        v = r.ok()["version"].as_i64().unwrap() as i32;
        // The same ETag again is stale: 412, nothing written.
        let intercurrence = defaults.ok()["intercurrences"][0].clone();
        let record_one =
            json!({"intercurrence_id": intercurrence["id"], "notes": "pneu furado na via"});
        let r = w
            .call_with(
                Method::POST,
                &format!("/incident/{id}/intercurrence"),
                "frota",
                None,
                Some(record_one.clone()),
                &[("If-Match", tag.as_str())],
            )
            .await;
        r.problem(412, "version_conflict");
        assert_eq!(w.version(id).await, v);
        let r = w
            .post(
                &format!("/incident/{id}/intercurrence"),
                "frota",
                Some(v),
                record_one,
            )
            .await;
        v = r.ok()["version"].as_i64().unwrap() as i32;

        // Every screen with the incident's version sends it as its ETag.
        let screens: [(&str, String); 7] = [
            ("frota", format!("/incident/{id}/unit-selection")),
            ("frota", format!("/incident/{id}/fleet-summary")),
            ("frota", format!("/incident/{id}/fleet-occurrence")),
            ("frota", format!("/dispatch/bff/dispatch-data/{id}")),
            ("regulador", format!("/incident/{id}/regulation")),
            ("regulador", format!("/incident/{id}/occurrence-view")),
            ("tarm", format!("/incident/{id}")),
        ];
        let mut read = Vec::new();
        for (login, uri) in &screens {
            let r = w.api.get(login, uri).await;
            assert_eq!(etag(&r), format!("\"{v}\""), "{uri}");
            read.push(r.body);
        }
        let [
            selection,
            summary,
            occurrence,
            data,
            regulation,
            view,
            detail,
        ] = <[Value; 7]>::try_from(read).unwrap();
        for body in [&selection, &summary, &detail] {
            assert_eq!(body["version"], v);
        }
        for body in [&occurrence, &data, &regulation, &view] {
            assert_eq!(body["incident"]["version"], v);
        }

        // The fleet occurrence: the caller, who holds the attendance, the intercurrence.
        let holder = json!({"id": person, "descriptive_name": name});
        assert_eq!(occurrence["caller_name"], "Maria Souza");
        assert_eq!(occurrence["caller_phone"], "(12) 99100-4321");
        assert_eq!(occurrence["assigned_to"], holder);
        assert_eq!(detail["regulation"]["assigned_to"], holder);
        assert_eq!(
            detail["regulation"]["regulator"],
            json!({"id": colleague, "descriptive_name": colleague_name})
        );
        assert_eq!(occurrence["patient"]["destination"]["id"], hospitals[0]);
        let recorded = occurrence["intercurrences"].as_array().unwrap();
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0]["intercurrence"], intercurrence);
        assert_eq!(recorded[0]["notes"], "pneu furado na via");
        assert_eq!(recorded[0]["recorded_by"]["id"], w.api.id("frota"));
        // The regulator's screens show the same intercurrences.
        assert_eq!(regulation["intercurrences"], occurrence["intercurrences"]);
        assert_eq!(view["intercurrences"], occurrence["intercurrences"]);
        assert_eq!(view["incident"]["occurrence"]["type"], "Trauma");

        // The history names what the screens show, by the names the writes took
        // (docs/dispatch-routes.md, "Names").
        let entries = w
            .api
            .get("tarm", &format!("/incident/{id}?include_history=true"))
            .await;
        let entries = entries.ok()["history"].as_array().unwrap().clone();
        let changed = |key: &str| {
            entries
                .iter()
                .rev()
                .find_map(|e| e["changes"].get(key).cloned())
                .unwrap_or_else(|| panic!("no entry records `{key}`"))
        };
        assert_eq!(changed("occurrence.type")["to"], "Trauma");
        assert_eq!(
            changed("patient.destination")["to"],
            json!({"id": occurrence["patient"]["destination"]["id"],
                   "name": occurrence["patient"]["destination"]["name"]})
        );
        assert_eq!(
            changed("regulator")["to"],
            detail["regulation"]["regulator"]
        );
        assert_eq!(changed("assigned_to")["to"], occurrence["assigned_to"]);
        assert_eq!(changed("intercurrence"), intercurrence);

        // A unit is dispatched with unit selection's ETag; every screen's ETag follows.
        let unit = w.free_units().await[0];
        let selection = w
            .api
            .get("frota", &format!("/incident/{id}/unit-selection"))
            .await;
        let tag = etag(&selection);
        let r = w
            .call_with(
                Method::POST,
                &format!("/incident/{id}/dispatch"),
                "frota",
                None,
                Some(json!({"mobile_unit_id": unit})),
                &[("If-Match", tag.as_str())],
            )
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        let v = r.body["version"].as_i64().unwrap();
        for (login, uri) in &screens {
            let r = w.api.get(login, uri).await;
            assert_eq!(etag(&r), format!("\"{v}\""), "{uri}");
        }
        // The unit reads back with its vehicle type, as the board and the history name it.
        let occurrence = w
            .api
            .get("frota", &format!("/incident/{id}/fleet-occurrence"))
            .await;
        let sent = occurrence.ok()["dispatches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["mobile_unit"]["id"] == unit)
            .cloned()
            .unwrap();
        let board = w.api.get("frota", "/mobile-unit/board").await;
        let on_board = board.array().iter().find(|u| u["id"] == unit).unwrap();
        assert_eq!(
            sent["mobile_unit"]["vehicle_type"],
            on_board["vehicle_type"]
        );
        let entries = w
            .api
            .get("tarm", &format!("/incident/{id}?include_history=true"))
            .await;
        let last = entries.ok()["history"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["action"], "dispatched");
        assert_eq!(
            last["changes"]["dispatch"]["mobile_unit"],
            json!({"id": unit, "name": sent["mobile_unit"]["name"],
                   "vehicle_type": sent["mobile_unit"]["vehicle_type"]})
        );
    }
}

/// The fields a problem's `errors` name, in order.
fn ends(r: &crate::support::Reply) -> Vec<&str> {
    r.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect()
}
