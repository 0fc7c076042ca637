//! A tiny SMTP server on 127.0.0.1 that keeps what it receives. While `down`, it answers
//! every connection `421` (service not available), as a relay in trouble does. While `hung`,
//! it accepts connections and never says a word, as a relay stuck behind a firewall or
//! overloaded does. `data_delay_ms` makes it take that long to accept each message.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

#[derive(Debug, Clone)]
pub struct Received {
    pub rcpt: Vec<String>,
    pub data: String,
}

impl Received {
    /// The `Message-ID` header's value, e.g. `<outbox-7@proposal-callback>`.
    pub fn message_id(&self) -> Option<String> {
        self.data.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("message-id")
                .then(|| value.trim().to_owned())
        })
    }
}

#[derive(Clone)]
pub struct SmtpSink {
    pub port: u16,
    pub down: Arc<AtomicBool>,
    pub hung: Arc<AtomicBool>,
    pub data_delay_ms: Arc<AtomicU64>,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl SmtpSink {
    /// On a free port.
    pub async fn start() -> SmtpSink {
        Self::start_on(0).await
    }

    /// On `port` (0: a free one), e.g. a port a service was told about before anything
    /// listened on it.
    pub async fn start_on(port: u16) -> SmtpSink {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap_or_else(|e| panic!("SMTP sink on port {port}: {e}"));
        let sink = SmtpSink {
            port: listener.local_addr().unwrap().port(),
            down: Arc::new(AtomicBool::new(false)),
            hung: Arc::new(AtomicBool::new(false)),
            data_delay_ms: Arc::new(AtomicU64::new(0)),
            received: Arc::new(Mutex::new(Vec::new())),
        };
        let s = sink.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = s.session(stream).await;
                });
            }
        });
        sink
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// How many messages arrived carrying `Message-ID: <id>` (case-insensitive header name).
    pub fn copies_of(&self, message_id: &str) -> usize {
        self.messages()
            .iter()
            .filter(|m| m.message_id().as_deref() == Some(message_id))
            .count()
    }

    pub fn messages(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    async fn session(&self, stream: tokio::net::TcpStream) -> std::io::Result<()> {
        let (r, mut w) = stream.into_split();
        let mut lines = BufReader::new(r).lines();
        if self.hung.load(Ordering::SeqCst) {
            // Holds the connection open, reads whatever comes, answers nothing.
            while lines.next_line().await?.is_some() {}
            return Ok(());
        }
        if self.down.load(Ordering::SeqCst) {
            w.write_all(b"421 sink is down\r\n").await?;
            return Ok(());
        }
        w.write_all(b"220 sink ready\r\n").await?;
        let mut rcpt = Vec::new();
        while let Some(line) = lines.next_line().await? {
            let upper = line.to_ascii_uppercase();
            if upper.starts_with("EHLO") || upper.starts_with("HELO") {
                w.write_all(b"250 sink\r\n").await?;
            } else if upper.starts_with("RCPT TO:") {
                rcpt.push(line[8..].trim().trim_matches(['<', '>']).to_owned());
                w.write_all(b"250 ok\r\n").await?;
            } else if upper == "DATA" {
                w.write_all(b"354 go ahead\r\n").await?;
                let mut data = String::new();
                while let Some(l) = lines.next_line().await? {
                    if l == "." {
                        break;
                    }
                    data.push_str(&l);
                    data.push('\n');
                }
                let delay = self.data_delay_ms.load(Ordering::SeqCst);
                if delay > 0 {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                }
                self.received.lock().unwrap().push(Received {
                    rcpt: std::mem::take(&mut rcpt),
                    data,
                });
                w.write_all(b"250 queued\r\n").await?;
            } else if upper == "QUIT" {
                w.write_all(b"221 bye\r\n").await?;
                return Ok(());
            } else {
                // MAIL FROM, RSET, NOOP and anything else.
                w.write_all(b"250 ok\r\n").await?;
            }
        }
        Ok(())
    }
}
