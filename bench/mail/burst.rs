//! A burst of emails through the outbox worker: over one SMTP session with each message and
//! its end written at once (what the worker does, docs/proposal-callback.md "Email"), against
//! the local SMTP sink of the tests. Run by hand (bench/mail/README.md, which says how to
//! measure the worker as it was before sessions, from git history):
//!
//!   cargo run -p proposal-callback --release --example mail_burst
//!
//! `EMAILS` (default 300) emails are queued in a fresh database (`DATABASE_URL`, default the
//! local server) and drained `ROUNDS` times (default 3), over implicit TLS with AUTH (a
//! hosted relay) and over plain SMTP (a relay on the same host). Prints the median time to
//! drain the burst, emails per second, and the connections and logins the relay saw.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::settings::FromSource;
use common::test_support::{SinkTls, SmtpSink, TestDb};
use diesel_async::RunQueryDsl;
use proposal_callback::flow::email_worker::Mailer;
use proposal_callback::settings::EmailSettings;
use proposal_callback::{MIGRATIONS, MIGRATIONS_DIR, SCHEMA};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the relay saw and how long one drain took.
struct Drain {
    elapsed: Duration,
    connections: usize,
    logins: usize,
}

#[tokio::main]
async fn main() {
    let emails = env_or("EMAILS", 300);
    let rounds = env_or("ROUNDS", 3);
    let db = TestDb::new(SCHEMA, MIGRATIONS, MIGRATIONS_DIR).await;
    let pool = db.pool();
    proposal_callback::seed::run(
        &mut pool.get().await.unwrap(),
        &common::Clock::system(),
        proposal_callback::seed::SeedOptions {
            rotate_tokens: false,
            history: false,
        },
    )
    .await
    .unwrap();
    queue(&pool, emails).await;

    // A CA of the bench's own and the relay's certificate for 127.0.0.1.
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let relay_key = KeyPair::generate().unwrap();
    let relay = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&relay_key, &issuer)
        .unwrap();
    let ca_file = std::env::temp_dir().join(format!("mail-burst-ca-{}.pem", std::process::id()));
    std::fs::write(&ca_file, ca_cert.pem()).unwrap();

    println!(
        "{emails} emails, {rounds} rounds, {} cores",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for (name, tls) in [
        ("implicit TLS + AUTH", true),
        ("plain SMTP, no AUTH", false),
    ] {
        let sink = if tls {
            SmtpSink::start_tls(
                SinkTls::Implicit,
                vec![relay.der().to_vec()],
                relay_key.serialize_der(),
            )
            .await
        } else {
            SmtpSink::start().await
        };
        let url = if tls {
            format!("smtps://bench:secret@127.0.0.1:{}", sink.port)
        } else {
            sink.url()
        };
        let mut env: HashMap<String, String> = HashMap::new();
        env.insert("SMTP_URL".into(), url);
        env.insert(
            "EMAIL_FROM".into(),
            "Propostas <propostas@demo-a.example.com>".into(),
        );
        env.insert(
            "SMTP_TLS_CA_FILE".into(),
            ca_file.to_string_lossy().into_owned(),
        );
        let config = EmailSettings::from_source(&env).unwrap().config().unwrap();
        let mut drains = Vec::new();
        for _ in 0..rounds {
            drains.push(drain(&pool, &sink, Mailer::new(&config).unwrap().unwrap(), emails).await);
        }
        drains.sort_by_key(|d| d.elapsed);
        let median = &drains[drains.len() / 2];
        println!(
            "{name}: median {:>8.1} ms  {:>7.0} emails/s  {} connections, {} logins",
            median.elapsed.as_secs_f64() * 1e3,
            emails as f64 / median.elapsed.as_secs_f64(),
            median.connections,
            median.logins
        );
    }
    let _ = std::fs::remove_file(&ca_file);
}

/// Queues `n` emails of the size the service sends (a text and an HTML part), each for its
/// own approved proposal.
async fn queue(pool: &common::db::Pool, n: usize) {
    let text =
        "Olá,\n\nBoa notícia: a seguradora Porto Seguro aprovou a proposta de seguro fiança \
                locatícia.\n\n"
            .repeat(6);
    let html = format!(
        "<html><body><p>{}</p></body></html>",
        text.replace('\n', "<br>")
    );
    diesel::sql_query(
        "WITH p AS (
             INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email, in_queue)
             SELECT 'demo-a', 'MB-' || n, 'approved', 'locatario.mb' || n || '@demo-a.example.com', false
             FROM generate_series(1, $1) AS n RETURNING id, contact_email),
         h AS (
             INSERT INTO proposal.integration_history (proposal_id, insurer, from_status, to_status)
             SELECT id, 'porto', 'under_analysis', 'approved' FROM p RETURNING id, proposal_id)
         INSERT INTO proposal.email_outbox (proposal_id, history_id, recipient, subject, body, html_body)
         SELECT h.proposal_id, h.id, p.contact_email, 'Proposta aprovada | Imobiliária Demo A', $2, $3
         FROM h JOIN p ON p.id = h.proposal_id",
    )
    .bind::<diesel::sql_types::Integer, _>(n as i32)
    .bind::<diesel::sql_types::Text, _>(&text)
    .bind::<diesel::sql_types::Text, _>(&html)
    .execute(&mut pool.get().await.unwrap())
    .await
    .unwrap();
}

/// Puts every email back in the queue, due, then runs `mailer` as `serve` does until the
/// relay has accepted them all; what it took.
async fn drain(pool: &common::db::Pool, sink: &SmtpSink, mailer: Mailer, n: usize) -> Drain {
    diesel::sql_query(
        "UPDATE proposal.email_outbox SET status = 'queued', attempts = 0, sent_at = NULL, \
         last_error = NULL, next_attempt_at = now() - interval '1 minute'",
    )
    .execute(&mut pool.get().await.unwrap())
    .await
    .unwrap();
    let (connections, logins) = (sink.connections(), sink.logins());
    let before = sink.received.lock().unwrap().len();
    let started = Instant::now();
    let worker = tokio::spawn(mailer.run(pool.clone()));
    let deadline = started + Duration::from_secs(600);
    while sink.received.lock().unwrap().len() < before + n {
        assert!(
            Instant::now() < deadline,
            "the burst did not drain in 10 minutes"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let elapsed = started.elapsed();
    worker.abort();
    let _ = worker.await;
    Drain {
        elapsed,
        connections: sink.connections() - connections,
        logins: sink.logins() - logins,
    }
}
