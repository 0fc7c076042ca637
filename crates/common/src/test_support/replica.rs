//! Failover for tests: a streaming hot standby of a [`PrivatePg`] (`pg_basebackup -R`), its
//! promotion, and [`Vip`], a TCP forwarder that stands for a DNS name or virtual IP moved
//! from one server to another.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use super::private_pg::{PrivatePg, run};

impl PrivatePg {
    /// A hot standby streaming from `primary` (which must be running), started on a port of
    /// its own. It answers reads and refuses writes until [`PrivatePg::promote`].
    pub fn standby_of(primary: &PrivatePg) -> PrivatePg {
        let (dir, port) = Self::fresh_dir();
        let data = dir.join("data");
        let primary_port = primary.port.to_string();
        run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &primary_port,
                "-U",
                "postgres",
                "-D",
                data.to_str().unwrap(),
                "-R",
                "-X",
                "stream",
                "--no-sync",
            ],
        );
        let pg = PrivatePg {
            dir,
            port,
            net: None,
        };
        pg.pg_ctl(&["start"]);
        pg
    }

    /// Promotes a standby to primary (`pg_ctl promote`, waiting until it takes writes).
    pub fn promote(&self) {
        let data = self.dir.join("data");
        run(
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-w", "-t", "30", "promote"],
        );
    }

    /// Stops the server cleanly (`-m fast`): a primary first sends its standbys everything
    /// it committed, as a planned switchover does.
    pub fn stop_fast(&self) {
        self.pg_ctl(&["-m", "fast", "stop"]);
    }
}

/// A TCP address (127.0.0.1, a port of its own) that forwards to one server's port, then,
/// after [`Vip::switch`], to another's: what a DNS name or a virtual IP does in a failover.
/// Switching cuts the connections made before, as moving an address does.
pub struct Vip {
    pub port: u16,
    target: Arc<AtomicU16>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl Vip {
    pub fn to(target: u16) -> Vip {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let vip = Vip {
            port,
            target: Arc::new(AtomicU16::new(target)),
            open: Arc::default(),
            stop: Arc::default(),
        };
        let (target, open, stop) = (vip.target.clone(), vip.open.clone(), vip.stop.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let to = target.load(Ordering::SeqCst);
                let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                    continue;
                };
                let mut open = open.lock().unwrap();
                for (from, into) in [(&client, &server), (&server, &client)] {
                    let (Ok(mut from), Ok(mut into)) = (from.try_clone(), into.try_clone()) else {
                        continue;
                    };
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 || into.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = into.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
                open.push(client);
                open.push(server);
            }
        });
        vip
    }

    /// A URL for the server behind the address.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Points the address at `target` and cuts every connection made through it so far.
    pub fn switch(&self, target: u16) {
        self.target.store(target, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Vip {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so it sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        self.switch(0);
    }
}
