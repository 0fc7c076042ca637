//! No data loss when the database restarts under callbacks: every callback answered 200 is
//! applied, every other one got a 5xx, and retrying those applies each exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::db;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::registration::config::RegistrationConfig;
use proposal_callback::schema::proposal::{email_outbox, integration_history, proposals};
use proposal_callback::startup;
use proposal_callback::{MIGRATIONS, SCHEMA, auth, store};

use crate::support::{keys, seeded, serve};
use common::test_support::PrivatePg;

const PROPOSALS: usize = 300;
const CLIENTS: usize = 6;

fn body(i: usize) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "idProposta": format!("R-{i}"),
        "situacao": "APROVADA",
        "dataHora": "2026-11-20T14:03:11-03:00",
        "motivo": null,
        "protocolo": format!("restart-{i}"),
    }))
    .unwrap()
}

#[actix_web::test]
async fn a_database_restart_loses_no_callback() {
    let pg = std::sync::Arc::new(PrivatePg::start());
    db::migrate_async(pg.url(), SCHEMA, MIGRATIONS)
        .await
        .unwrap();
    let pool = db::pool(&pg.url(), &proposal_callback::SKELETON.pool_settings(8)).unwrap();
    let seed = seeded(&pool).await;
    {
        let mut conn = pool.get().await.unwrap();
        for i in 0..PROPOSALS {
            store::proposals::insert_if_absent(
                &mut conn,
                "demo-a",
                &format!("R-{i}"),
                "r@example.com",
                chrono::Utc::now(),
            )
            .await
            .unwrap();
        }
    }
    let integration = seed
        .integrations
        .iter()
        .find(|i| i.tenant == "demo-a" && i.insurer.as_str() == "porto")
        .unwrap();
    let token = auth::jwt::issue_callback_token(
        &keys(),
        integration.id,
        "demo-a",
        proposal_callback::domain::insurer::Insurer::Porto,
    )
    .unwrap();
    let (base, _handle) =
        serve(startup::state(pool.clone(), keys(), RegistrationConfig::default()).unwrap());
    let url = format!("{base}/callback/demo-a/porto");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();

    // Clients send every callback once while the database is killed and restarted.
    let send = |i: usize| {
        let req = client
            .post(&url)
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body(i));
        async move {
            let status = req.send().await.map(|r| r.status().as_u16()).unwrap_or(0);
            (i, status, Instant::now())
        }
    };
    // A third is sent before the restart, a third while the database goes down and comes
    // back, the last third once it is back: the test holds on a loaded machine too.
    let sent = AtomicUsize::new(0);
    let (restarted_tx, mut restarted_rx) = tokio::sync::watch::channel(None::<Instant>);
    let load = async {
        let mut answers = Vec::new();
        for chunk in (0..PROPOSALS).collect::<Vec<_>>().chunks(CLIENTS) {
            if chunk[0] >= 2 * PROPOSALS / 3 {
                let _ = restarted_rx.wait_for(Option::is_some).await;
            }
            answers.extend(futures_util::future::join_all(chunk.iter().map(|i| send(*i))).await);
            sent.fetch_add(chunk.len(), Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        answers
    };
    let chaos = async {
        while AtomicUsize::load(&sent, Ordering::SeqCst) < PROPOSALS / 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // pg_ctl blocks: off the runtime, so callbacks keep flowing meanwhile.
        let pg = pg.clone();
        actix_web::rt::task::spawn_blocking(move || pg.restart_immediate())
            .await
            .unwrap();
        let at = Instant::now();
        let _ = restarted_tx.send(Some(at));
        at
    };
    let (answers, restarted) = tokio::join!(load, chaos);

    let ok: Vec<usize> = answers
        .iter()
        .filter(|(_, s, _)| *s == 200)
        .map(|(i, _, _)| *i)
        .collect();
    let failed: Vec<(usize, u16)> = answers
        .iter()
        .filter(|(_, s, _)| *s != 200)
        .map(|(i, s, _)| (*i, *s))
        .collect();
    assert!(
        failed.iter().all(|(_, s)| (500..600).contains(s)),
        "non-200 answers must be 5xx: {failed:?}"
    );
    let after = answers
        .iter()
        .filter(|(_, s, at)| *s == 200 && *at > restarted)
        .count();
    eprintln!(
        "restart test: {} answered 200 ({after} after the restart), {} answered 5xx",
        ok.len(),
        failed.len()
    );
    assert!(!failed.is_empty(), "the restart was felt");
    assert!(
        after > 0,
        "the service recovered by itself after the restart"
    );

    // Wait for the database to answer again.
    let mut conn = loop {
        if let Ok(c) = pool.get().await {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let approved: Vec<String> = proposals::table
        .filter(proposals::status.eq("approved"))
        .select(proposals::proposal_id)
        .load(&mut conn)
        .await
        .unwrap();
    for i in &ok {
        assert!(
            approved.contains(&format!("R-{i}")),
            "R-{i} answered 200 but is not applied"
        );
    }

    // The insurer retries the others until each gets a 200; each is applied exactly once.
    for (i, _) in &failed {
        let mut tries = 0;
        loop {
            let (_, s, _) = send(*i).await;
            if s == 200 {
                break;
            }
            assert!((500..600).contains(&s), "retry of R-{i}: {s}");
            tries += 1;
            assert!(tries < 100, "R-{i} never succeeded");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let history: i64 = integration_history::table
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    let emails: i64 = email_outbox::table
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    let approved: i64 = proposals::table
        .filter(proposals::status.eq("approved"))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        (approved, history, emails),
        (PROPOSALS as i64, PROPOSALS as i64, PROPOSALS as i64)
    );
    drop(conn);
    pool.close();
}
