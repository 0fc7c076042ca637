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
    let fleet = people(&w.api, "OPERADOR_FROTA", 2).await;
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
    let send_to = |v: i32, to: i64| {
        let w = &w;
        async move {
            let r = w
                .post(
                    &format!("/incident/{id}/send-to"),
                    "regulador",
                    Some(v),
                    json!({"user_id": to}),
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
                    json!({"user_id": to}),
                )
                .await;
            version(&r)
        }
    };

    // The deciding regulator becomes the regulator: it came to them.
    let v = w.step(id, v, "decide").await;
    hear(&mut sockets, &[(a, told(v, "regulated", true))]).await;
    // Sent to the second regulator: theirs now, no longer the first's.
    let v = send_to(v, b.id).await;
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
    // Sent back to the first regulator.
    let v = send_to(v, a).await;
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
/// people through six routes (one a revalidation answered 304), are listed exactly, in
/// order, with who and when; refused and missing reads are not; the person's own listing
/// holds only theirs; only the administrator may list.
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
    assert_eq!(r.problem(400, "invalid_parameter").as_deref(), Some("from"));
    let r = api
        .get(
            "admin",
            &format!(
                "/user/{regulador}/access-log?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z"
            ),
        )
        .await;
    assert_eq!(r.problem(400, "invalid_parameter").as_deref(), Some("to"));
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
