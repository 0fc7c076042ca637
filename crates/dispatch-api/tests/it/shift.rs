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
