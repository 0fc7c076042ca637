//! What the system tests share: the two binaries built once, a service started as a process
//! (its logs drained as it runs, killed if a test fails), seeding through the binaries, tokens,
//! and small HTTP and SQL helpers.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use serde_json::Value;

pub const SECRET: &str = "system-test-secret-system-test-secret";

/// Builds the two binaries once per test run and returns the directory they are in.
pub fn bin_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut cargo = Command::new(env!("CARGO"));
        // Cargo gives this test process the variables of the package under test
        // (CARGO_MANIFEST_DIR, CARGO_PKG_NAME, ...). Build scripts that watch them (ring's
        // does) would see them change and rebuild half the tree on every run.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if [
                "CARGO_PKG_",
                "CARGO_MANIFEST_",
                "CARGO_CRATE_",
                "CARGO_BIN_",
                "CARGO_TARGET_TMPDIR",
            ]
            .iter()
            .any(|p| name.starts_with(p))
                || name == "OUT_DIR"
                || name == "CARGO_PRIMARY_PACKAGE"
            {
                cargo.env_remove(&*name);
            }
        }
        let status = cargo
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

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A minimal HTTP/1.0 GET: status, lower-cased head, body.
pub fn get(
    addr: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<(u16, String, String)> {
    raw_request(
        addr,
        format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n").as_bytes(),
        headers,
        b"",
    )
}

/// Sends `start` (request line and first headers, each ending in CRLF), `headers`, an empty
/// line and `body` as they are, over HTTP/1.0 (the server closes after answering), and reads
/// the answer: status, lower-cased head, body.
pub fn raw_request(
    addr: &str,
    start: &[u8],
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<(u16, String, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut req = start.to_vec();
    for (k, v) in headers {
        req.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    req.extend_from_slice(b"\r\n");
    req.extend_from_slice(body);
    // The server may answer (413, 431) and close before it has read everything we send.
    let _ = stream.write_all(&req);
    read_response(&mut stream)
}

/// Reads one answer: up to the end of its body when it has a `Content-Length` (as a client
/// does; the server may hold the connection a moment longer), else to the end of the stream.
pub fn read_response(stream: &mut TcpStream) -> std::io::Result<(u16, String, String)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            if length.is_some_and(|n| raw.len() >= end + 4 + n) {
                break;
            }
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if raw.is_empty() => return Err(e),
            Err(_) => break,
        }
    }
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    Ok((status, head.to_ascii_lowercase(), body.to_owned()))
}

/// Reads a child's piped stdout and stderr as it runs (a full pipe would block it), into the
/// text returned.
pub fn drain(child: &mut Child) -> Arc<Mutex<String>> {
    let logs = Arc::new(Mutex::new(String::new()));
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    for mut pipe in [Box::new(out) as Box<dyn Read + Send>, Box::new(err)] {
        let logs = logs.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                logs.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    logs
}

/// A service binary running as a process. Its stdout and stderr are read as it runs (a full
/// pipe would block it); dropped while running, it is killed.
pub struct Service {
    pub name: &'static str,
    pub addr: String,
    child: Child,
    logs: Arc<Mutex<String>>,
    exited: Option<ExitStatus>,
}

impl Service {
    /// `serve` with the common settings over `database_url`, plus `env`; waits until ready.
    pub fn start(name: &'static str, database_url: &str, env: &[(&str, &str)]) -> Service {
        let mut service = Self::spawn(name, database_url, env);
        service.wait_ready(Duration::from_secs(60));
        service
    }

    /// As [`Service::start`], without waiting for readiness.
    pub fn spawn(name: &'static str, database_url: &str, env: &[(&str, &str)]) -> Service {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(bin_dir().join(name));
        cmd.arg("serve")
            .env("BIND", &addr)
            .env("DATABASE_URL", database_url)
            .env("JWT_SECRET", SECRET)
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("start {name}: {e}"));
        let logs = drain(&mut child);
        Service {
            name,
            addr,
            child,
            logs,
            exited: None,
        }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn logs(&self) -> String {
        self.logs.lock().unwrap().clone()
    }

    pub fn wait_ready(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok((200, _, _)) = get(&self.addr, "/readyz", &[]) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{} exited before it was ready: {status}\n{}",
                    self.name,
                    self.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{} was not ready within {within:?}", self.name);
    }

    pub fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -TERM {}", self.child.id());
    }

    /// `kill -9`: the process dies at once, without any chance to clean up.
    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.exited = Some(self.child.wait().expect("wait after SIGKILL"));
    }

    /// Waits up to `within` for the process to exit; None if it is still running.
    pub fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.exited = Some(status);
                // Let the log readers catch the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then the exit status (within 30 s, the 25 s grace period and a margin) and
    /// everything the process logged.
    pub fn terminate(mut self) -> (ExitStatus, String) {
        self.sigterm();
        let status = self
            .wait_exit(Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{}: no exit within the 30 s grace period", self.name));
        (status, self.logs())
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if self.exited.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `name args...` with `DATABASE_URL` and the secret; its stdout.
pub fn run_bin(name: &str, database_url: &str, args: &[&str]) -> String {
    run_bin_env(name, database_url, args, &[])
}

/// [`run_bin`] with more variables.
pub fn run_bin_env(name: &str, database_url: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(bin_dir().join(name))
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("JWT_SECRET", SECRET)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        out.status.success(),
        "{name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Seeds the dispatch demo data through its binary.
pub fn seed_dispatch(database_url: &str) {
    run_bin("dispatch-api", database_url, &["seed", "--scale", "test"]);
}

/// Seeds the callback demo data through its binary; the integrations' Basic tokens keyed
/// `tenant/insurer`.
pub fn seed_callback(database_url: &str) -> Vec<(String, String)> {
    let report: Value = serde_json::from_str(&run_bin(
        "proposal-callback",
        database_url,
        &["seed", "--no-history"],
    ))
    .unwrap();
    report["integrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                format!(
                    "{}/{}",
                    i["tenant"].as_str().unwrap(),
                    i["insurer"].as_str().unwrap()
                ),
                i["token"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Both services' demo data; see [`seed_callback`].
pub fn seed_both(database_url: &str) -> Vec<(String, String)> {
    seed_dispatch(database_url);
    seed_callback(database_url)
}

pub fn basic_token(tokens: &[(String, String)], key: &str) -> String {
    tokens
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| panic!("no integration {key}"))
}

/// A dispatch access token from `dispatch-api token --login`.
pub fn dispatch_token(database_url: &str, login: &str) -> String {
    run_bin("dispatch-api", database_url, &["token", "--login", login])
        .trim()
        .to_owned()
}

/// An HTTP client that never hangs a test.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The body as JSON when it is JSON, else as a string.
pub async fn read(res: reqwest::Response) -> (u16, String, Value) {
    let status = res.status().as_u16();
    let ctype = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = res.bytes().await.unwrap_or_default();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, ctype, body)
}

/// A callback JWT from `/callback/auth` with the integration's Basic token.
pub async fn callback_jwt(client: &reqwest::Client, base: &str, basic: &str) -> String {
    let res = client
        .post(format!("{base}/callback/auth"))
        .header("authorization", format!("Basic {basic}"))
        .send()
        .await
        .unwrap();
    let (status, _, body) = read(res).await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

/// A porto callback for `proposal` with its own protocol number.
pub fn porto(proposal: &str, situacao: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "idProposta": proposal,
        "situacao": situacao,
        "dataHora": "2026-11-20T14:03:11-03:00",
        "motivo": null,
        "protocolo": format!("sys-{proposal}-{situacao}"),
    }))
    .unwrap()
}

/// A connection with both services' schemas on its search path (their triggers and indexes
/// call their own functions unqualified).
pub async fn connect(database_url: &str) -> AsyncPgConnection {
    // Through the services' own connector: a URL may ask for TLS (`sslmode`, `sslrootcert`).
    let mut conn = common::db::tls::establish(database_url)
        .await
        .unwrap_or_else(|e| panic!("connect to {database_url}: {e}"));
    conn.batch_execute("SET search_path TO dispatch, proposal, public")
        .await
        .unwrap();
    conn
}

pub async fn exec(database_url: &str, sql: &str) {
    connect(database_url)
        .await
        .batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// `SELECT count(*) AS n ...` or any query of one bigint column `n`.
pub async fn count(database_url: &str, sql: &str) -> i64 {
    let mut conn = connect(database_url).await;
    diesel::sql_query(sql)
        .get_result::<Count>(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .n
}

#[derive(QueryableByName)]
struct Text {
    #[diesel(sql_type = diesel::sql_types::Text)]
    t: String,
}

/// A query of one text column `t`, as strings.
pub async fn texts(database_url: &str, sql: &str) -> Vec<String> {
    let mut conn = connect(database_url).await;
    diesel::sql_query(sql)
        .load::<Text>(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(|r| r.t)
        .collect()
}

/// `n` proposals `{prefix}{i}` of tenant demo-a, `under_analysis`, contact
/// `{prefix}{i}@example.com` (lower case).
pub async fn insert_proposals(database_url: &str, prefix: &str, n: usize) {
    exec(
        database_url,
        &format!(
            "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email, in_queue) \
             SELECT 'demo-a', '{prefix}' || g, 'under_analysis', lower('{prefix}' || g || '@example.com'), true \
             FROM generate_series(0, {}) g",
            n - 1
        ),
    )
    .await;
}

/// Row counts of every table of `schema`, by name: what a refused request must not change.
pub async fn row_counts(database_url: &str, schema: &str) -> Vec<(String, i64)> {
    let tables = texts(
        database_url,
        &format!(
            "SELECT table_name::text AS t FROM information_schema.tables \
             WHERE table_schema = '{schema}' AND table_type = 'BASE TABLE' ORDER BY 1"
        ),
    )
    .await;
    let mut out = Vec::new();
    for t in tables {
        let n = count(
            database_url,
            &format!("SELECT count(*) AS n FROM {schema}.\"{t}\""),
        )
        .await;
        out.push((t, n));
    }
    out
}

/// A check that `status` is a 4xx problem+json with a `code`.
pub fn assert_problem(what: &str, status: u16, ctype: &str, body: &Value, expected: &[u16]) {
    assert!(
        expected.contains(&status),
        "{what}: status {status}, expected one of {expected:?}: {body}"
    );
    assert!(
        ctype.starts_with("application/problem+json"),
        "{what}: content type {ctype:?}: {body}"
    );
    assert_eq!(
        body["status"].as_u64(),
        Some(u64::from(status)),
        "{what}: {body}"
    );
    assert!(
        body["code"].as_str().is_some_and(|c| !c.is_empty()),
        "{what}: {body}"
    );
}

/// A socket to a running dispatch-api.
pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A socket following the `registering` queue (new incidents), as the call takers' screen:
/// subscribed, its `subscribed` answer read.
pub async fn queue_socket(dispatch: &Service, token: &str) -> Socket {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let url = format!("ws://{}/ws?access_token={token}", dispatch.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    ws.send(Message::text(
        r#"{"type":"subscribe","queue":"registering"}"#,
    ))
    .await
    .unwrap();
    let reply = tokio::time::timeout(Duration::from_secs(5), ws.next()).await;
    let Ok(Some(Ok(Message::Text(reply)))) = reply else {
        panic!("no answer to subscribe: {reply:?}");
    };
    assert!(reply.contains(r#""type":"subscribed""#), "{reply}");
    ws
}
