//! Debian's PgBouncer (`/usr/sbin/pgbouncer`) in front of a [`PrivatePg`], started by the
//! test on a free port and stopped when dropped: the transaction pooler the services meet in
//! production (docs/operations.md, "Transaction poolers"). `./dev test` and `.ci/run`
//! install the package; PgBouncer refuses to run as root, so it runs as `postgres` then.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::PrivatePg;
use super::private_pg::is_root;

const BINARY: &str = "/usr/sbin/pgbouncer";

pub struct PgBouncer {
    child: Child,
    dir: PathBuf,
    pub port: u16,
}

impl PgBouncer {
    /// PgBouncer in `pool_mode = transaction` before `pg`, with at most `server_connections`
    /// server connections per database and user: fewer than the services' pools, so
    /// statements of different clients share a server connection, as under load.
    pub fn transaction_mode(pg: &PrivatePg, server_connections: u16) -> PgBouncer {
        assert!(
            std::path::Path::new(BINARY).exists(),
            "{BINARY} is missing: install Debian's pgbouncer (`apt-get install pgbouncer`; \
             ./dev test and .ci/run do)"
        );
        let (dir, port) = PrivatePg::fresh_dir();
        let ini = dir.join("pgbouncer.ini");
        let users = dir.join("userlist.txt");
        std::fs::write(&users, "\"postgres\" \"\"\n").unwrap();
        std::fs::write(
            &ini,
            format!(
                "[databases]\n\
                 * = host=127.0.0.1 port={pg_port}\n\
                 [pgbouncer]\n\
                 listen_addr = 127.0.0.1\n\
                 listen_port = {port}\n\
                 unix_socket_dir =\n\
                 auth_type = trust\n\
                 auth_file = {users}\n\
                 pool_mode = transaction\n\
                 default_pool_size = {server_connections}\n\
                 max_client_conn = 400\n\
                 ignore_startup_parameters = extra_float_digits\n\
                 logfile = {log}\n",
                pg_port = pg.port,
                users = users.display(),
                log = dir.join("pgbouncer.log").display(),
            ),
        )
        .unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres", dir.to_str().unwrap()])
                .status()
                .unwrap();
            assert!(ok.success(), "chown PgBouncer's directory");
        }
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", BINARY]);
            c
        } else {
            Command::new(BINARY)
        };
        let child = command
            .arg(&ini)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {BINARY}: {e}"));
        let bouncer = PgBouncer { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "PgBouncer did not listen within 15 s: {}",
                bouncer.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        bouncer
    }

    /// The URL of `database` through the pooler.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// What PgBouncer logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        // `runuser` passes the signal on to PgBouncer; kill both to be sure.
        let _ = Command::new("pkill")
            .args([
                "-f",
                &format!("{}", self.dir.join("pgbouncer.ini").display()),
            ])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
