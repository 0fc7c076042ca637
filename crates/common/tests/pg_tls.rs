//! TLS to PostgreSQL: private clusters with `ssl = on` and `hostssl` lines only, a CA of the
//! test's own, and the skeleton fixture service (`migrate`, its `count` command on the pool)
//! plus the pool and the `LISTEN` connection in-process.

use std::process::{Command, Output};
use std::time::Duration;

use common::db::{self, DatabaseUrl, PoolSettings, StartupError};
use common::listen::{self, ListenEvent, ListenSettings};
use common::test_support::PrivatePg;
use common::test_support::pg_tls::{PemFile, TestCa};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use tokio::sync::broadcast;

const BIN: &str = env!("CARGO_BIN_EXE_skeleton-fixture");

fn run(args: &[&str], database_url: &str) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("JWT_SECRET")
        .env_remove("JWT_SECRET_FILE")
        .env_remove("BIND")
        .env("LOG_FORMAT", "json")
        .env("DATABASE_URL", database_url)
        .output()
        .expect("run the fixture service")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A URL to `pg` (host 127.0.0.1) with `query` appended.
fn url(pg: &PrivatePg, query: &str) -> String {
    format!("postgres://postgres@127.0.0.1:{}/postgres?{query}", pg.port)
}

#[derive(QueryableByName)]
struct Ssl {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    ssl: bool,
}

/// Whether the pool's connection to `url` is encrypted, by the server's own account.
async fn pool_speaks_tls(url: &str) -> bool {
    let pool = db::pool(url, &PoolSettings::new("tls_test")).unwrap();
    let mut conn = db::conn(&pool).await.expect("a pooled connection");
    let row: Ssl = diesel::sql_query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .get_result(&mut conn)
        .await
        .unwrap();
    row.ssl
}

async fn reachable(url: &str) -> Result<(), StartupError> {
    DatabaseUrl::parse("DATABASE_URL", url)?
        .check_reachable()
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn require_encrypts_every_connection_the_services_open() {
    let ca = TestCa::new("pg_tls test CA");
    let pg = tokio::task::spawn_blocking({
        let cert = ca.server_cert(&["localhost", "127.0.0.1"]);
        move || PrivatePg::start_tls(&cert)
    })
    .await
    .unwrap();
    let url = url(&pg, "sslmode=require");

    // The start-up check, the migrations and the service's pool (its `count` command).
    let out = run(&["migrate"], &url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(&["count"], &url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), r#"{"notes":0}"#);
    assert!(pool_speaks_tls(&url).await);
    // `prefer`, libpq's default, encrypts too when the server offers TLS.
    assert!(pool_speaks_tls(&url.replace("sslmode=require", "sslmode=prefer")).await);

    // The LISTEN connection hears a notification sent over another TLS connection.
    let (tx, mut rx) = broadcast::channel(16);
    let settings = ListenSettings {
        heartbeat: Duration::from_millis(200),
        application_name: "tls_listen".into(),
        ..ListenSettings::default()
    };
    let handle = listen::spawn(url.clone(), vec!["tls_test".into()], settings, tx);
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Ok(ListenEvent::Reconnected)) => break,
            Ok(Ok(_)) => continue,
            other => panic!("the listener did not connect: {other:?}"),
        }
    }
    let pool = db::pool(&url, &PoolSettings::new("tls_test")).unwrap();
    let mut conn = db::conn(&pool).await.unwrap();
    listen::notify(&mut conn, "tls_test", "over tls")
        .await
        .unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Ok(ListenEvent::Notification { channel, payload })) => {
                assert_eq!(
                    (channel.as_str(), payload.as_str()),
                    ("tls_test", "over tls")
                );
                break;
            }
            Ok(Ok(_)) => continue,
            other => panic!("no notification: {other:?}"),
        }
    }
    handle.abort();

    // verify-full with the CA's certificate: the chain and the host name are checked.
    let ca_file = ca.pem_file();
    let full = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}",
        pg.port,
        ca_file.path()
    );
    reachable(&full).await.unwrap();
    let out = run(&["migrate"], &full);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(pool_speaks_tls(&full).await);
    let by_ip = url_with(&pg, "verify-full", ca_file.path());
    reachable(&by_ip).await.unwrap();

    // A certificate from another CA is refused, and the error says so.
    let other_ca = TestCa::new("another CA");
    let other_file = other_ca.pem_file();
    for mode in ["verify-full", "verify-ca", "require"] {
        let wrong = url_with(&pg, mode, other_file.path());
        assert_eq!(
            reachable(&wrong).await.unwrap_err().to_string(),
            format!(
                "TLS with PostgreSQL at 127.0.0.1:{port} (DATABASE_URL) failed: the server's \
                 certificate is not signed by the CA in sslrootcert={path} (sslmode={mode})",
                port = pg.port,
                path = other_file.path()
            )
        );
        let out = run(&["migrate"], &wrong);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("certificate is not signed by the CA in sslrootcert="),
            "{}",
            text(&out.stderr)
        );
    }

    // A plain connection to a server that takes TLS only is refused in the server's words.
    let plain = format!(
        "postgres://postgres:hunter2@127.0.0.1:{}/postgres?sslmode=disable",
        pg.port
    );
    let err = reachable(&plain).await.unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "PostgreSQL at 127.0.0.1:{} (DATABASE_URL) refused the connection: no pg_hba.conf \
             entry for host \"127.0.0.1\"",
            pg.port
        )) && err.ends_with("no encryption"),
        "{err}"
    );
    let out = run(&["migrate"], &plain);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no encryption"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stderr).contains("hunter2"),
        "{}",
        text(&out.stderr)
    );
}

fn url_with(pg: &PrivatePg, mode: &str, rootcert: &str) -> String {
    url(pg, &format!("sslmode={mode}&sslrootcert={rootcert}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_refuses_a_certificate_for_another_host() {
    let ca = TestCa::new("pg_tls test CA");
    let cert = ca.server_cert(&["db.example.org"]);
    let pg = tokio::task::spawn_blocking(move || PrivatePg::start_tls(&cert))
        .await
        .unwrap();
    let ca_file = ca.pem_file();
    let full = url_with(&pg, "verify-full", ca_file.path());
    assert_eq!(
        reachable(&full).await.unwrap_err().to_string(),
        format!(
            "TLS with PostgreSQL at 127.0.0.1:{} (DATABASE_URL) failed: the server's \
             certificate is for another host: it names db.example.org but the host \
             connected to is 127.0.0.1 (sslmode=verify-full)",
            pg.port
        )
    );
    let out = run(&["migrate"], &full);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("certificate is for another host"),
        "{}",
        text(&out.stderr)
    );
    // verify-ca checks the chain only, as libpq does.
    reachable(&url_with(&pg, "verify-ca", ca_file.path()))
        .await
        .unwrap();
}

#[test]
fn a_missing_sslrootcert_is_named_before_connecting() {
    let url =
        "postgres://app:hunter2@127.0.0.1:1/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem";
    let out = run(&["migrate"], url);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "skeleton-fixture: DATABASE_URL: cannot read sslrootcert=/nonexistent/ca.pem (no such \
         file or directory)\n"
    );
    // A file that holds no certificate is named as such.
    let empty = PemFile::new("not a certificate\n");
    let url = format!(
        "postgres://app:hunter2@127.0.0.1:1/db?sslmode=verify-ca&sslrootcert={}",
        empty.path()
    );
    let err = DatabaseUrl::parse("DATABASE_URL", &url).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "DATABASE_URL: sslrootcert={} holds no PEM certificate",
            empty.path()
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn require_refuses_a_server_without_tls_and_prefer_falls_back_to_plain() {
    let pg = tokio::task::spawn_blocking(PrivatePg::start).await.unwrap();
    assert_eq!(
        reachable(&url(&pg, "sslmode=require"))
            .await
            .unwrap_err()
            .to_string(),
        format!(
            "TLS with PostgreSQL at 127.0.0.1:{} (DATABASE_URL) failed: error performing TLS \
             handshake: server does not support TLS",
            pg.port
        )
    );
    assert!(!pool_speaks_tls(&url(&pg, "sslmode=prefer")).await);
    assert!(!pool_speaks_tls(&pg.url()).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_certificate_is_shown_when_the_server_asks_for_one() {
    let ca = TestCa::new("pg_tls test CA");
    let mut cert = ca.server_cert(&["localhost", "127.0.0.1"]);
    cert.client_ca_pem = Some(ca.pem().to_owned());
    let pg = tokio::task::spawn_blocking(move || PrivatePg::start_tls(&cert))
        .await
        .unwrap();
    let ca_file = ca.pem_file();
    let client = ca.client_cert("postgres");
    let with_cert = format!(
        "{}&sslcert={}&sslkey={}",
        url_with(&pg, "verify-full", ca_file.path()),
        client.cert.path(),
        client.key.path()
    );
    reachable(&with_cert).await.unwrap();
    let out = run(&["migrate"], &with_cert);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(pool_speaks_tls(&with_cert).await);
    // Without one, the server refuses, in its own words.
    let err = reachable(&url_with(&pg, "verify-full", ca_file.path()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            StartupError::Refused { cause, .. } if cause.contains("certificate")
        ),
        "{err}"
    );
}
