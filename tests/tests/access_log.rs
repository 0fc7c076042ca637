//! The access log against a crash (docs/dispatch-access-log.md, "How it is written"): a
//! read's answer leaves only once its entry is committed, so a `SIGKILL` loses no entry of a
//! read that was answered.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::test_support::TestDb;
use diesel::QueryableByName;
use tokio::sync::Notify;

use support::{Service, client, connect, count, dispatch_token, seed_dispatch};

/// Concurrent clients, answered reads before the kill, incidents read.
const CLIENTS: usize = 8;
const READS: usize = 400;
const INCIDENTS: i64 = 20;

#[derive(QueryableByName)]
struct PerIncident {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    incident_id: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_read_answered_before_a_sigkill_has_its_entry() {
    let db = TestDb::blank().await;
    let url = db.url().to_owned();
    seed_dispatch(&url);
    let token = dispatch_token(&url, "regulador");
    let user = count(
        &url,
        "SELECT id AS n FROM dispatch.users WHERE login = 'regulador'",
    )
    .await;
    let ids = first_incidents(&url).await;
    assert_eq!(ids.len(), INCIDENTS as usize);
    // The service as deployed: its default settings.
    let mut service = Service::start("dispatch-api", &url, &[]);
    let http = client();

    // Each client reads the incidents in turn, one read after the other, and counts the
    // reads answered 200 with the incident's forms, per incident; it goes on until the
    // service is gone.
    let answered: Arc<Mutex<BTreeMap<i64, i64>>> = Arc::default();
    let total = Arc::new(AtomicUsize::new(0));
    let enough = Arc::new(Notify::new());
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let (http, base, token, ids) = (http.clone(), service.base(), token.clone(), ids.clone());
        let (answered, total, enough, stop) = (
            answered.clone(),
            total.clone(),
            enough.clone(),
            stop.clone(),
        );
        clients.push(tokio::spawn(async move {
            let mut i = c * 3;
            while !stop.load(Ordering::SeqCst) {
                let id = ids[i % ids.len()];
                i += 1;
                let Ok(res) = http
                    .get(format!("{base}/incident/{id}"))
                    .bearer_auth(&token)
                    .send()
                    .await
                else {
                    return;
                };
                let status = res.status().as_u16();
                // Answered: the whole body arrived and is the incident's record.
                let Ok(body) = res.json::<serde_json::Value>().await else {
                    return;
                };
                if status != 200 {
                    continue;
                }
                assert_eq!(body["id"].as_i64(), Some(id), "{body}");
                *answered.lock().unwrap().entry(id).or_default() += 1;
                if total.fetch_add(1, Ordering::SeqCst) + 1 == READS {
                    enough.notify_one();
                }
            }
        }));
    }
    // Right after the READS-th answer, with the other clients' reads in flight.
    enough.notified().await;
    service.kill9();
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.await.unwrap();
    }

    let answered = answered.lock().unwrap().clone();
    let reads: i64 = answered.values().sum();
    assert!(reads >= READS as i64, "{reads} reads answered");
    let entries = entries_per_incident(&url, user).await;
    let missing: BTreeMap<i64, i64> = answered
        .iter()
        .map(|(id, n)| (*id, n - entries.get(id).copied().unwrap_or(0)))
        .filter(|(_, missing)| *missing > 0)
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {reads} answered reads have no entry (missing per incident: {missing:?})",
        missing.values().sum::<i64>()
    );
    // Nobody else read: every entry is one of these clients' reads, answered or in flight.
    let all = count(
        &url,
        "SELECT count(*) AS n FROM dispatch.patient_access_log",
    )
    .await;
    assert!(
        all <= reads + CLIENTS as i64,
        "{all} entries for {reads} reads"
    );
}

/// The ids of the first `INCIDENTS` incidents.
async fn first_incidents(url: &str) -> Vec<i64> {
    use diesel_async::RunQueryDsl;
    #[derive(QueryableByName)]
    struct Id {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        id: i64,
    }
    diesel::sql_query(format!(
        "SELECT id FROM dispatch.incidents ORDER BY id LIMIT {INCIDENTS}"
    ))
    .load::<Id>(&mut connect(url).await)
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.id)
    .collect()
}

/// How many entries of `GET /incident/{id}` by `user` each incident has.
async fn entries_per_incident(url: &str, user: i64) -> BTreeMap<i64, i64> {
    use diesel_async::RunQueryDsl;
    diesel::sql_query(format!(
        "SELECT incident_id, count(*) AS n FROM dispatch.patient_access_log \
         WHERE user_id = {user} AND route = 'GET /incident/{{id}}' GROUP BY incident_id"
    ))
    .load::<PerIncident>(&mut connect(url).await)
    .await
    .unwrap()
    .into_iter()
    .map(|r| (r.incident_id, r.n))
    .collect()
}
