//! A network of the test's own between the services and PostgreSQL, to break on purpose
//! (docs/operations.md, "Network faults"): a network namespace joined to this one by a veth
//! pair, with a PostgreSQL ([`super::PrivatePg::start_in`]) listening inside it on the veth's
//! far address. [`NetNs::partition`] drops every packet both ways with `iptables` inside the
//! namespace (no reset, no error: what a failed switch or a cut link does); [`NetNs::heal`]
//! lets them through again. The processes in this namespace are untouched.
//!
//! Needs root, `ip` (iproute2) and `iptables`; `./dev test` and `.ci/run` install them.
//! Every namespace has a name and a /30 of its own, so two runs never collide, and is
//! deleted (with its veth pair and rules) when dropped, even when the test fails.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct NetNs {
    pub name: String,
    /// The veth end in this namespace.
    host_if: String,
    /// The address of this side of the veth.
    pub host_addr: String,
    /// The address inside the namespace, where its PostgreSQL listens.
    pub addr: String,
    partitioned: bool,
}

fn run(args: &[&str]) -> Result<String, String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn must(args: &[&str]) {
    if let Err(e) = run(args) {
        panic!("{e}");
    }
}

/// What is missing to make a namespace here, if anything (not root, no `ip`, no `iptables`).
pub fn missing() -> Option<String> {
    if !super::private_pg::is_root() {
        return Some("network namespaces need root".into());
    }
    for tool in ["ip", "iptables"] {
        if run(&["sh", "-c", &format!("command -v {tool}")]).is_err() {
            return Some(format!(
                "`{tool}` is not installed (apt-get install iproute2 iptables; ./dev test does)"
            ));
        }
    }
    None
}

impl NetNs {
    /// A fresh namespace joined by a veth pair, its loopback up. Panics with what is missing
    /// when it cannot be made.
    pub fn create() -> NetNs {
        if let Some(why) = missing() {
            panic!("cannot make a network namespace: {why}");
        }
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let tag = format!("{:x}{n:x}", pid % 0xfffff);
        let name = format!("pgfault-{tag}");
        let host_if = format!("pgf{tag}a");
        let far_if = format!("pgf{tag}b");
        // A /30 in 10.224.0.0/11 from the process and the counter, skipping any in use.
        let used = run(&["ip", "-o", "-4", "addr", "show"]).unwrap_or_default();
        let mut seed = (pid.wrapping_mul(2_654_435_761) ^ n.wrapping_mul(40_503)) % (1 << 19);
        let (host_addr, addr) = loop {
            let base = (10u32 << 24) | (224 << 16) | (seed << 2);
            let ip = |k: u32| {
                let v = base + k;
                format!(
                    "{}.{}.{}.{}",
                    v >> 24,
                    (v >> 16) & 255,
                    (v >> 8) & 255,
                    v & 255
                )
            };
            let (h, f) = (ip(1), ip(2));
            if !used.contains(&format!("{h}/")) && !used.contains(&format!("{f}/")) {
                break (h, f);
            }
            seed = (seed + 1) % (1 << 19);
        };
        let ns = NetNs {
            name: name.clone(),
            host_if: host_if.clone(),
            host_addr: host_addr.clone(),
            addr: addr.clone(),
            partitioned: false,
        };
        must(&["ip", "netns", "add", &name]);
        must(&[
            "ip", "link", "add", &host_if, "type", "veth", "peer", "name", &far_if,
        ]);
        must(&["ip", "link", "set", &far_if, "netns", &name]);
        must(&[
            "ip",
            "addr",
            "add",
            &format!("{host_addr}/30"),
            "dev",
            &host_if,
        ]);
        must(&["ip", "link", "set", &host_if, "up"]);
        ns.exec(&["ip", "addr", "add", &format!("{addr}/30"), "dev", &far_if]);
        ns.exec(&["ip", "link", "set", &far_if, "up"]);
        ns.exec(&["ip", "link", "set", "lo", "up"]);
        ns
    }

    /// `args` run inside the namespace; panics on failure.
    pub fn exec(&self, args: &[&str]) {
        let mut all = vec!["ip", "netns", "exec", &self.name];
        all.extend_from_slice(args);
        must(&all);
    }

    /// The command prefix that runs a program inside the namespace.
    pub fn prefix(&self) -> Vec<String> {
        ["ip", "netns", "exec", &self.name]
            .map(str::to_owned)
            .to_vec()
    }

    /// Every packet between the namespace and the rest dropped, both ways, from now on
    /// (loopback inside it still works).
    pub fn partition(&mut self) {
        if self.partitioned {
            return;
        }
        self.exec(&[
            "iptables", "-w", "-I", "INPUT", "!", "-i", "lo", "-j", "DROP",
        ]);
        self.exec(&[
            "iptables", "-w", "-I", "OUTPUT", "!", "-o", "lo", "-j", "DROP",
        ]);
        self.partitioned = true;
    }

    /// A share `probability` (0 to 1) of the packets dropped at random, both ways, from now
    /// on: packet loss, which TCP retransmits (`iptables -m statistic`; netem is not on
    /// every kernel).
    pub fn lose(&mut self, probability: f64) {
        let p = format!("{probability}");
        for chain in ["INPUT", "OUTPUT"] {
            let lo = if chain == "INPUT" { "-i" } else { "-o" };
            self.exec(&[
                "iptables",
                "-w",
                "-A",
                chain,
                "!",
                lo,
                "lo",
                "-m",
                "statistic",
                "--mode",
                "random",
                "--probability",
                &p,
                "-j",
                "DROP",
            ]);
        }
    }

    /// The partition lifted.
    pub fn heal(&mut self) {
        if !self.partitioned {
            return;
        }
        self.exec(&[
            "iptables", "-w", "-D", "INPUT", "!", "-i", "lo", "-j", "DROP",
        ]);
        self.exec(&[
            "iptables", "-w", "-D", "OUTPUT", "!", "-o", "lo", "-j", "DROP",
        ]);
        self.partitioned = false;
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // Deleting the namespace deletes its rules and its veth end, which takes the pair.
        let _ = run(&["ip", "netns", "delete", &self.name]);
        let _ = run(&["ip", "link", "delete", &self.host_if]);
    }
}
