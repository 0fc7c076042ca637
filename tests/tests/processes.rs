//! Both services as processes: one database, two schemas, real sockets, real signals.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::test_support::TestDb;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

/// Builds the two binaries once per test run and returns the directory they are in.
fn bin_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "--bins",
                "-p",
                "dispatch-api",
                "-p",
                "proposal-callback",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building the services failed");
        // This test binary lives in <target>/debug/deps; the services in <target>/debug.
        let exe = std::env::current_exe().expect("test binary path");
        exe.parent()
            .and_then(|p| p.parent())
            .expect("target dir")
            .to_path_buf()
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A minimal HTTP/1.0 GET: status, lower-cased head, body.
fn get(addr: &str, path: &str, headers: &[(&str, &str)]) -> std::io::Result<(u16, String, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut req = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes())?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw)?;
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    Ok((status, head.to_ascii_lowercase(), body.to_owned()))
}

struct Service {
    child: Child,
    addr: String,
}

impl Service {
    fn start(name: &str, db: &TestDb) -> Service {
        let addr = format!("127.0.0.1:{}", free_port());
        let child = Command::new(bin_dir().join(name))
            .arg("serve")
            .env("BIND", &addr)
            .env("DATABASE_URL", db.url())
            .env("JWT_SECRET", "system-test-secret-system-test-secret")
            .env("LOG_FORMAT", "json")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let mut service = Service { child, addr };
        service.wait_ready(name);
        service
    }

    fn wait_ready(&mut self, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok((200, _, _)) = get(&self.addr, "/readyz", &[]) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{name} exited before it was ready: {status}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{name} was not ready within 60 s");
    }

    /// SIGTERM, then the exit status and everything the process logged.
    fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "no exit within the 30 s grace period"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut logs = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut logs)
            .unwrap();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut logs)
            .unwrap();
        (status, logs)
    }
}

#[derive(QueryableByName)]
struct Placement {
    #[diesel(sql_type = diesel::sql_types::Text)]
    table_schema: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    table_name: String,
}

#[tokio::test(flavor = "multi_thread")]
async fn both_services_share_a_database_each_in_its_own_schema() {
    let db = TestDb::blank().await;
    let dispatch = Service::start("dispatch-api", &db);
    let callback = Service::start("proposal-callback", &db);

    for service in [&dispatch, &callback] {
        let (status, _, body) = get(&service.addr, "/healthz", &[]).unwrap();
        assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
        let (status, head, _) =
            get(&service.addr, "/readyz", &[("X-Request-Id", "sys-1")]).unwrap();
        assert_eq!(status, 200);
        assert!(head.contains("x-request-id: sys-1"), "{head}");
        let (status, _, body) = get(&service.addr, "/openapi.json", &[]).unwrap();
        assert_eq!(status, 200);
        assert!(body.contains(r#""openapi":"3.1"#), "{body:.80}");
    }

    let mut conn = db.pool().get().await.unwrap();
    let placed: Vec<Placement> = diesel::sql_query(
        "SELECT table_schema::text AS table_schema, table_name::text AS table_name \
         FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let in_schema = |s: &str| placed.iter().filter(|p| p.table_schema == s).count();
    assert!(
        in_schema("dispatch") >= 3,
        "dispatch tables live in dispatch"
    );
    assert!(
        in_schema("proposal") >= 2,
        "proposal tables live in proposal"
    );
    let elsewhere: Vec<_> = placed
        .iter()
        .filter(|p| p.table_schema != "dispatch" && p.table_schema != "proposal")
        .map(|p| format!("{}.{}", p.table_schema, p.table_name))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "tables outside the two schemas: {elsewhere:?}"
    );
    drop(conn);

    for (name, service) in [("dispatch-api", dispatch), ("proposal-callback", callback)] {
        let (status, logs) = service.terminate();
        assert!(status.success(), "{name} exited with {status}: {logs}");
        assert!(
            logs.contains(&format!("{name} stopped")),
            "{name} drained and said so: {logs}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_without_a_secret_refuses_to_start_and_names_the_variable() {
    let db = TestDb::blank().await;
    for name in ["dispatch-api", "proposal-callback"] {
        let out = Command::new(bin_dir().join(name))
            .arg("serve")
            .env("DATABASE_URL", db.url())
            .env_remove("JWT_SECRET")
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "{name} must not start without JWT_SECRET"
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("JWT_SECRET"),
            "{name}"
        );
    }
}
