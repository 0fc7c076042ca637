//! Repairs previewed and the silence watch, measured (run by hand, not a test): on a fresh
//! database, against baselines measured in the same run.
//!
//! - **A bulk replay's preview** (`flow::replay::preview_matching`, the dry run: the replay's
//!   code in a transaction rolled back) of `N` failed callbacks whose proposals now exist,
//!   against the **real replay** of the same receipts afterwards. The preview holds its row
//!   locks for its whole length, so its time is also the longest a live callback for one of
//!   those proposals waits for it.
//! - **A silence watch round** (`flow::silence::SilenceWatch::check_once`) over `TENANTS` x 3
//!   integrations, each with 28 days of callbacks every 20 minutes: all healthy (the common
//!   case), all past the floor for the first time (every history read), and the same again
//!   (thresholds kept). Against the baseline of **one callback** through the callback path
//!   (`flow::receive::receive`, a processed approval), median of 200.
//!
//! ```sh
//! cargo run -p proposal-callback --release --example repairs    # N, TENANTS to adjust
//! ```
//! Results: bench/callback/README.md.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::Clock;
use common::db::Pool;
use common::test_support::TestDb;
use diesel_async::RunQueryDsl;
use proposal_callback::domain::insurer::Insurer;
use proposal_callback::domain::silence::SilenceRule;
use proposal_callback::flow::receive::{Arrival, receive};
use proposal_callback::flow::replay::{preview_matching, replay_matching};
use proposal_callback::flow::silence::{SilenceWatch, WatchConfig};
use proposal_callback::seed::{self, SeedOptions};
use proposal_callback::store::receipts::ReceiptFilter;
use proposal_callback::store::{integrations, proposals};
use proposal_callback::{MIGRATIONS, MIGRATIONS_DIR, SCHEMA};

fn var(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn porto(proposal: &str, protocolo: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "idProposta": proposal,
        "situacao": "APROVADA",
        "dataHora": "2026-11-20T14:03:11-03:00",
        "protocolo": protocolo,
    }))
    .unwrap()
}

async fn exec(pool: &Pool, sql: &str) -> usize {
    diesel::sql_query(sql)
        .execute(&mut pool.get().await.unwrap())
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// One callback through the callback path; its time.
async fn one_callback(pool: &Pool, clock: &Clock, integration: i64, proposal: &str) -> Duration {
    let mut conn = pool.get().await.unwrap();
    let body = porto(proposal, &format!("bench-{proposal}"));
    let arrival = Arrival {
        tenant: "demo-a",
        insurer: Insurer::Porto,
        integration_id: integration,
        headers: serde_json::json!({}),
        body: &body,
    };
    let started = Instant::now();
    receive(&mut conn, clock, &arrival).await.ok();
    started.elapsed()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let n = var("N", 500);
    let tenants = var("TENANTS", 100);
    let db = TestDb::new(SCHEMA, MIGRATIONS, MIGRATIONS_DIR).await;
    let pool = db.pool();
    let clock = Clock::system();
    let options = SeedOptions {
        rotate_tokens: false,
        history: false,
    };
    seed::run(&mut pool.get().await?, &clock, options).await?;
    let porto_id = integrations::ensure(
        &mut *pool.get().await?,
        "demo-a",
        Insurer::Porto,
        proposal_callback::registration::config::Environment::Homologation,
    )
    .await?
    .id;

    // Baseline: one processed callback, median of 200; and the same without the index the
    // watch reads (`callback_receipts_integration_received`), alternating in rounds of 50 so
    // the machine's load falls on both alike.
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for round in 0..8 {
        let indexed = round % 2 == 0;
        if !indexed {
            exec(
                &pool,
                "DROP INDEX proposal.callback_receipts_integration_received",
            )
            .await;
        }
        for i in 0..50 {
            let id = format!("BASE-{round}-{i}");
            proposals::insert_if_absent(
                &mut *pool.get().await?,
                "demo-a",
                &id,
                "b@example.com",
                clock.now(),
            )
            .await?;
            let t = one_callback(&pool, &clock, porto_id, &id).await;
            if indexed {
                with.push(t)
            } else {
                without.push(t)
            }
        }
        if !indexed {
            exec(
                &pool,
                "CREATE INDEX callback_receipts_integration_received \
                 ON proposal.callback_receipts (integration_id, received_at)",
            )
            .await;
        }
    }
    let callback = median(with);
    let unindexed = median(without);
    println!(
        "baseline: one callback {:.2} ms (median of 200); without the watch's index {:.2} ms: \
         with/without {:.2}",
        ms(callback),
        ms(unindexed),
        callback.as_secs_f64() / unindexed.as_secs_f64()
    );

    // The bulk replay: N callbacks failed (no proposal yet), then the proposals created.
    for limit in [100usize, n] {
        let prefix = format!("FIX{limit}-");
        for i in 0..limit {
            one_callback(&pool, &clock, porto_id, &format!("{prefix}{i}")).await;
        }
        for i in 0..limit {
            proposals::insert_if_absent(
                &mut *pool.get().await?,
                "demo-a",
                &format!("{prefix}{i}"),
                "f@example.com",
                clock.now(),
            )
            .await?;
        }
        let filter = ReceiptFilter {
            code: Some("proposal_not_found".into()),
            ..ReceiptFilter::default()
        };
        let mut previews = Vec::new();
        for _ in 0..3 {
            let mut conn = pool.get().await?;
            let started = Instant::now();
            let preview =
                preview_matching(&mut conn, &clock, "demo-a", &filter, None, limit as i64).await?;
            previews.push(started.elapsed());
            assert_eq!(preview.outcomes.get("processed"), Some(&limit));
        }
        let preview = median(previews);
        let mut conn = pool.get().await?;
        let started = Instant::now();
        let real =
            replay_matching(&mut conn, &clock, "demo-a", &filter, None, limit as i64).await?;
        let real_time = started.elapsed();
        assert_eq!(real.outcomes.get("processed"), Some(&limit));
        println!(
            "bulk replay of {limit}: preview {:.0} ms (median of 3), real run {:.0} ms: preview/real {:.2}; \
             a live callback for one of them waits at most the preview ({:.0} callbacks' time)",
            ms(preview),
            ms(real_time),
            preview.as_secs_f64() / real_time.as_secs_f64(),
            preview.as_secs_f64() / callback.as_secs_f64(),
        );
    }

    // The silence watch: TENANTS x 3 integrations, 28 days of callbacks every 20 minutes.
    let now: DateTime<Utc> = clock.now();
    exec(
        &pool,
        &format!(
            "INSERT INTO proposal.tenants (id, name) \
             SELECT 'bench-' || g, 'Bench ' || g FROM generate_series(1, {tenants}) g"
        ),
    )
    .await;
    exec(
        &pool,
        "INSERT INTO proposal.integrations (tenant_id, insurer) \
         SELECT t.id, i FROM proposal.tenants t, unnest(ARRAY['porto', 'tokio', 'too']) i \
         WHERE t.id LIKE 'bench-%'",
    )
    .await;
    let started = Instant::now();
    let mut rows = 0;
    // A tenant per statement: each within the pool's statement timeout.
    for t in 1..=tenants {
        rows += exec(
            &pool,
            &format!(
                "INSERT INTO proposal.callback_receipts \
                     (tenant_id, insurer, integration_id, received_at, body, body_sha256, status) \
                 SELECT i.tenant_id, i.insurer, i.id, at, convert_to('{{}}', 'UTF8'), \
                        sha256(convert_to('{{}}', 'UTF8')), 'processed' \
                 FROM proposal.integrations i, \
                      generate_series(now() - interval '28 days', now() - interval '1 minute', \
                                      interval '20 minutes') at \
                 WHERE i.tenant_id = 'bench-{t}'"
            ),
        )
        .await;
    }
    exec(&pool, "ANALYZE proposal.callback_receipts").await;
    println!(
        "silence watch: {} integrations, {rows} callbacks stored in {:.0} s",
        tenants * 3,
        started.elapsed().as_secs_f64()
    );
    let config = WatchConfig {
        interval: Duration::from_secs(60),
        rule: SilenceRule::default(),
        console_url: "http://127.0.0.1:8081/admin/integracao".into(),
    };
    let healthy = Clock::manual(now + chrono::Duration::minutes(5));
    let mut watch = SilenceWatch::new(config.clone());
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let round = watch.check_once(&pool, &healthy).await?;
        rounds.push(started.elapsed());
        assert!(round.flagged.len() <= 1, "{round:?}");
    }
    let healthy_round = median(rounds);
    // 31 minutes after the last callback: past the floor, under 3 x 20 minutes.
    let quiet = Clock::manual(now + chrono::Duration::minutes(31));
    let mut fresh = SilenceWatch::new(config);
    let started = Instant::now();
    let round = fresh.check_once(&pool, &quiet).await?;
    let learning_round = started.elapsed();
    // Only demo-a's porto, whose baseline callbacks came seconds apart, is silent by now.
    assert!(round.flagged.len() <= 1, "{round:?}");
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        fresh.check_once(&pool, &quiet).await?;
        rounds.push(started.elapsed());
    }
    let kept_round = median(rounds);
    for (what, t) in [
        ("all healthy", healthy_round),
        (
            "all past the floor, first time (every history read)",
            learning_round,
        ),
        ("all past the floor, thresholds kept", kept_round),
    ] {
        println!(
            "silence watch round, {what}: {:.1} ms = {:.1} callbacks' time",
            ms(t),
            t.as_secs_f64() / callback.as_secs_f64()
        );
    }
    Ok(())
}
