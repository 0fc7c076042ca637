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
