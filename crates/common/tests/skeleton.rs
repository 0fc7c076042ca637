//! The service skeleton, through a small service built on it (tests/fixtures/skeleton_service.rs)
//! run as a process, as the real ones are: its command line, its start-up errors, `migrate`,
//! the service's own subcommands, and `serve` until SIGTERM.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::db::DatabaseUrl;
use common::test_support::{TestDb, server_url, with_database};

const BIN: &str = env!("CARGO_BIN_EXE_skeleton-fixture");
const EXPECTED: &str = "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE";

/// The fixture service with a clean environment: only what the test gives.
fn service(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("DATABASE_URL")
        .env_remove("JWT_SECRET")
        .env_remove("JWT_SECRET_FILE")
        .env_remove("BIND")
        .env("LOG_FORMAT", "json")
        .envs(env.iter().copied());
    cmd
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    service(args, env)
        .output()
        .expect("run the fixture service")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A port nothing listens on: bound, then let go.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_url_that_is_not_postgresql_is_named_without_its_password() {
    for args in [&["migrate"][..], &["serve", "--dev"], &["count"]] {
        let out = run(
            args,
            &[("DATABASE_URL", "mysql://root:hunter2@127.0.0.1/app")],
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "skeleton-fixture: DATABASE_URL is not a PostgreSQL URL (its scheme is `mysql`, \
                 not `postgres` or `postgresql`); {EXPECTED}\n"
            ),
            "{args:?}"
        );
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    let out = run(
        &["migrate"],
        &[("DATABASE_URL", "postgres://u:hunter2@db:port/app")],
    );
    assert_eq!(
        text(&out.stderr),
        format!(
            "skeleton-fixture: DATABASE_URL is not a PostgreSQL URL (invalid value for option \
             `port`); {EXPECTED}\n"
        )
    );
}

#[test]
fn a_server_that_cannot_be_reached_is_named_by_address_and_variable() {
    let port = closed_port();
    let url = format!("postgres://postgres:hunter2@127.0.0.1:{port}/postgres");
    for args in [&["migrate"][..], &["serve", "--dev"], &["count"]] {
        let out = run(args, &[("DATABASE_URL", &url)]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "skeleton-fixture: cannot reach PostgreSQL at 127.0.0.1:{port} (DATABASE_URL): \
                 connection refused\n"
            ),
            "{args:?}"
        );
    }
}

#[test]
fn a_server_that_refuses_us_says_why() {
    let server = server_url();
    let url = with_database(&server, "no_such_database_here");
    let out = run(&["migrate"], &[("DATABASE_URL", &url)]);
    assert_eq!(out.status.code(), Some(1));
    let address = DatabaseUrl::parse("DATABASE_URL", &server)
        .unwrap()
        .server();
    assert_eq!(
        text(&out.stderr),
        format!(
            "skeleton-fixture: PostgreSQL at {address} (DATABASE_URL) refused the connection: \
             database \"no_such_database_here\" does not exist\n"
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn migrate_then_the_services_own_commands() {
    let db = TestDb::blank().await;
    let env = [("DATABASE_URL", db.url())];
    let out = run(&["migrate"], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\"applied\":[\"20260101000001\"]}\n");
    let out = run(&["migrate"], &env);
    assert_eq!(text(&out.stdout), "{\"applied\":[]}\n");
    let out = run(&["count"], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\"notes\":0}\n");
}

#[test]
fn the_jwt_secret_is_required_only_where_the_command_says_so() {
    let out = run(&["key"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("skeleton-fixture: environment variable JWT_SECRET is required"),
        "{stderr}"
    );
    let out = run(&["key", "--dev"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\"dev_key\":true}\n");
    let secret = "s".repeat(40);
    let out = run(&["key"], &[("JWT_SECRET", &secret)]);
    assert_eq!(text(&out.stdout), "{\"dev_key\":false}\n");
    // `migrate` needs no secret; a command that does not use the database needs no server.
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", closed_port());
    let out = run(&["offline"], &[("DATABASE_URL", &url)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "offline\n");
}

#[test]
fn help_lists_the_shared_and_the_services_own_commands() {
    let out = run(&["--help"], &[]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    let lines: Vec<&str> = help.lines().map(str::trim).collect();
    assert_eq!(
        lines[0],
        "A service for the skeleton's tests. Configuration comes from the environment"
    );
    let commands: Vec<&str> = lines
        .iter()
        .skip_while(|l| **l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    assert_eq!(
        commands,
        [
            "serve        Migrate, then serve HTTP (the default)",
            "migrate      Apply pending database migrations and exit",
            "count        Print how many notes there are, as JSON",
            "key          Print whether the development key stands in for JWT_SECRET",
            "offline      Print \"offline\" without touching the database",
            "healthcheck  Exit 0 when this service answers GET /healthz on BIND (container healthcheck)",
            "help         Print this message or the help of the given subcommand(s)",
        ]
    );
    let out = run(&["--version"], &[]);
    assert_eq!(
        text(&out.stdout),
        format!("skeleton-fixture {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = run(&["serve", "--help"], &[]);
    assert!(
        text(&out.stdout).contains(
            "--dev   Sign tokens with a public development key when JWT_SECRET is unset. Never in production\n"
        ),
        "{}",
        text(&out.stdout)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_migrates_answers_and_drains_on_sigterm() {
    let db = TestDb::blank().await;
    let bind = format!("127.0.0.1:{}", closed_port());
    let env = [("DATABASE_URL", db.url()), ("BIND", bind.as_str())];
    let child = service(&["serve", "--dev"], &env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Up once `healthcheck` (the same binary, as in the image) says so.
    let started = Instant::now();
    loop {
        if run(&["healthcheck"], &[("BIND", &bind)]).status.success() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "serve did not come up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // `serve` migrated before listening.
    let out = run(&["count"], &env);
    assert_eq!(text(&out.stdout), "{\"notes\":0}\n");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let logs = text(&out.stdout) + &text(&out.stderr);
    assert!(out.status.success(), "{logs}");
    for line in [
        "DEV MODE: tokens are signed with the public development key",
        "migrations up to date",
        "skeleton-fixture listening",
        "signal hook ran",
        "skeleton-fixture stopped",
    ] {
        assert!(logs.contains(line), "{line:?} missing from {logs}");
    }
    let after = run(&["healthcheck"], &[("BIND", &bind)]);
    assert_eq!(after.status.code(), Some(1));
}
