//! A PostgreSQL server of the test's own, for tests that stop or restart the database: the
//! machine's shared server is never touched. `initdb` and `pg_ctl` refuse to run as root, so
//! they run as the `postgres` user when the tests run as root.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

pub struct PrivatePg {
    pub(super) dir: PathBuf,
    pub port: u16,
    /// Started inside a network namespace (its name) listening on the veth's far address
    /// ([`PrivatePg::start_in`]); `None`: on 127.0.0.1 here.
    pub(super) net: Option<(String, String)>,
}

/// The tool from /usr/local/bin, else the newest /usr/lib/postgresql/<version>/bin, else PATH.
fn bin(name: &str) -> String {
    let local = format!("/usr/local/bin/{name}");
    if std::path::Path::new(&local).exists() {
        return local;
    }
    let mut versions: Vec<u32> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    versions.sort_unstable();
    versions
        .iter()
        .rev()
        .map(|v| format!("/usr/lib/postgresql/{v}/bin/{name}"))
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or_else(|| name.to_owned())
}

pub(super) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A PostgreSQL tool, run as `postgres` when we are root, inside network namespace `netns`
/// when given (we are root then).
fn tool_in(netns: Option<&str>, name: &str) -> Command {
    if let Some(ns) = netns {
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            ns,
            "runuser",
            "-u",
            "postgres",
            "--",
            &bin(name),
        ]);
        return c;
    }
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", &bin(name)]);
        c
    } else {
        Command::new(bin(name))
    }
}

pub(super) fn run(name: &str, args: &[&str]) {
    run_in(None, name, args);
}

fn run_in(netns: Option<&str>, name: &str, args: &[&str]) {
    let out = tool_in(netns, name)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        out.status.success(),
        "{name} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl PrivatePg {
    /// initdb in a fresh temporary directory and start on a free port.
    pub fn start() -> PrivatePg {
        let pg = Self::init();
        pg.pg_ctl(&["start"]);
        pg
    }

    /// Like [`PrivatePg::start`], inside `ns` and listening on its far address only: the
    /// services reach it over the veth, which the test can cut ([`super::NetNs`]).
    pub fn start_in(ns: &super::NetNs) -> PrivatePg {
        let mut pg = Self::init();
        // initdb trusts the loopback only; the services come over the veth.
        let hba = pg.dir.join("data").join("pg_hba.conf");
        let mut rules = std::fs::read_to_string(&hba).expect("read pg_hba.conf");
        rules.push_str(&format!("host all all {}/32 trust\n", ns.host_addr));
        std::fs::write(&hba, rules).expect("write pg_hba.conf");
        pg.net = Some((ns.name.clone(), ns.addr.clone()));
        pg.pg_ctl(&["start"]);
        pg
    }

    /// Like [`PrivatePg::start`], with `ssl = on`, `cert` as the server's certificate and
    /// `hostssl` lines only: a client that does not speak TLS is refused.
    pub fn start_tls(cert: &super::pg_tls::ServerCert) -> PrivatePg {
        let pg = Self::init();
        super::pg_tls::configure(&pg.dir.join("data"), cert, is_root());
        pg.pg_ctl(&["start"]);
        pg
    }

    fn init() -> PrivatePg {
        let (dir, port) = Self::fresh_dir();
        let data = dir.join("data");
        run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        PrivatePg {
            dir,
            port,
            net: None,
        }
    }

    /// A new empty directory the `postgres` user owns, and a free port.
    pub(super) fn fresh_dir() -> (PathBuf, u16) {
        let dir = std::env::temp_dir().join(format!("pcb-pg-{}", uuid_like()));
        std::fs::create_dir_all(&dir).unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres", dir.to_str().unwrap()])
                .status()
                .unwrap();
            assert!(ok.success(), "chown the private database directory");
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        (dir, port)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@{}:{}/postgres", self.host(), self.port)
    }

    /// A URL over its Unix socket: reaches it from this namespace whatever happens to the
    /// network (a test's own statements during a partition).
    pub fn socket_url(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres",
            self.dir.display(),
            self.port
        )
    }

    /// The address it listens on.
    pub fn host(&self) -> &str {
        self.net.as_ref().map_or("127.0.0.1", |(_, addr)| addr)
    }

    pub(super) fn pg_ctl(&self, action: &[&str]) {
        let data = self.dir.join("data");
        let log = self.dir.join("server.log");
        let opts = format!(
            "-c listen_addresses={} -p {} -c unix_socket_directories={} -c max_connections=50",
            self.host(),
            self.port,
            self.dir.display()
        );
        let mut args = vec![
            "-D",
            data.to_str().unwrap(),
            "-l",
            log.to_str().unwrap(),
            "-o",
            &opts,
            "-w",
            "-t",
            "30",
        ];
        args.extend_from_slice(action);
        let netns = self.net.as_ref().map(|(ns, _)| ns.as_str());
        run_in(netns, "pg_ctl", &args);
    }

    /// Kills the server the way a crash would (`-m immediate`) and starts it again.
    pub fn restart_immediate(&self) {
        self.pg_ctl(&["-m", "immediate", "restart"]);
    }

    /// Kills the server the way a crash would; [`PrivatePg::start_again`] brings it back on
    /// the same port with the same data.
    pub fn stop_immediate(&self) {
        self.pg_ctl(&["-m", "immediate", "stop"]);
    }

    /// Starts a stopped server again.
    pub fn start_again(&self) {
        self.pg_ctl(&["start"]);
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let netns = self.net.as_ref().map(|(ns, _)| ns.as_str());
        let _ = tool_in(netns, "pg_ctl")
            .args([
                "-D",
                data.to_str().unwrap_or_default(),
                "-m",
                "immediate",
                "stop",
            ])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{nanos}", std::process::id())
}
