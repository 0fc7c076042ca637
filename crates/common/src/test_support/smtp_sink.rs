//! A tiny SMTP server on 127.0.0.1 that keeps what it receives. While `down`, it answers
//! every connection `421` (service not available), as a relay in trouble does. While `hung`,
//! it accepts connections and never says a word, as a relay stuck behind a firewall or
//! overloaded does. `data_delay_ms` makes it take that long to accept each message.
//!
//! It may also speak TLS ([`SmtpSink::start_tls`]), with a certificate the test made: from
//! the first byte (implicit TLS, as on port 465) or after `STARTTLS` (as on port 587). Each
//! message remembers whether it came over TLS, the `AUTH PLAIN` credentials it came with and
//! the connection it came on.
//!
//! It counts what a relay's operator would see: connections ([`SmtpSink::connections`]),
//! logins ([`SmtpSink::logins`]) and every `RCPT TO` ([`SmtpSink::rcpts`]). It can refuse as
//! a real relay does: a login ([`SmtpSink::refuse_logins`], e.g. `535 5.7.8` for a wrong
//! password), a sender ([`SmtpSink::refuse_senders`]), a recipient
//! ([`SmtpSink::refuse_rcpt`], e.g. `550 5.1.1` for an unknown mailbox), every recipient
//! ([`SmtpSink::refuse_every_rcpt`], e.g. Postfix's `553 5.7.1 <x>: Sender address rejected`,
//! which it gives at RCPT) or a message after its DATA ([`SmtpSink::refuse_data`]), always or
//! a number of times. Like Postfix's `reject_non_fqdn_helo_hostname`, it may refuse an EHLO
//! name that is not fully qualified ([`SmtpSink::require_fqdn_helo`]); it keeps every EHLO
//! name it is given ([`SmtpSink::helos`]).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

#[derive(Debug, Clone)]
pub struct Received {
    pub rcpt: Vec<String>,
    /// The message as sent after `DATA`, dot-stuffing undone, lines ending in `\n`.
    pub data: String,
    /// Whether the message came over TLS.
    pub tls: bool,
    /// The `AUTH PLAIN` initial response (base64 of `\0user\0password`), if the client
    /// authenticated.
    pub auth_plain: Option<String>,
    /// The connection it came on: 1 for the sink's first, 2 for the next, ...
    pub connection: usize,
    /// What the sink answered to it: `250 queued`, or the refusal it was told to give.
    pub reply: String,
}

impl Received {
    /// The `Message-ID` header's value, e.g. `<0b6f2a8e-...@demo-a.example.com>`.
    pub fn message_id(&self) -> Option<String> {
        self.data.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("message-id")
                .then(|| value.trim().to_owned())
        })
    }
}

/// How a sink started with [`SmtpSink::start_tls`] speaks TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkTls {
    /// TLS from the first byte (`smtps://`).
    Implicit,
    /// Plain until the client sends `STARTTLS`, which the greeting offers.
    StartTls,
}

/// A refusal the sink gives: its reply (`550 5.1.1 ...`) and how many times more (none:
/// every time).
#[derive(Debug, Clone)]
struct Refusal {
    reply: String,
    times: Option<u32>,
}

impl Refusal {
    /// The reply to give now, counting it; none once its times are used up.
    fn take(&mut self) -> Option<String> {
        match &mut self.times {
            None => Some(self.reply.clone()),
            Some(0) => None,
            Some(n) => {
                *n -= 1;
                Some(self.reply.clone())
            }
        }
    }
}

/// What the sink refuses, set by the test while it runs.
#[derive(Debug, Default)]
struct Refusals {
    login: Option<Refusal>,
    sender: Option<Refusal>,
    /// By recipient address (lowercase).
    rcpt: std::collections::HashMap<String, Refusal>,
    /// Every recipient, whatever its address.
    every_rcpt: Option<Refusal>,
    /// After DATA, by recipient address (lowercase).
    data: std::collections::HashMap<String, Refusal>,
}

#[derive(Clone)]
pub struct SmtpSink {
    pub port: u16,
    pub down: Arc<AtomicBool>,
    pub hung: Arc<AtomicBool>,
    pub data_delay_ms: Arc<AtomicU64>,
    /// Messages the sink accepted (`250` after their DATA).
    pub received: Arc<Mutex<Vec<Received>>>,
    /// Messages the sink refused after their DATA ([`SmtpSink::refuse_data`]).
    pub refused: Arc<Mutex<Vec<Received>>>,
    connections: Arc<AtomicUsize>,
    logins: Arc<AtomicUsize>,
    rcpts: Arc<Mutex<Vec<String>>>,
    helos: Arc<Mutex<Vec<String>>>,
    /// Refuse an EHLO name without a dot (`504 5.5.2 <vm>: Helo command rejected: need
    /// fully-qualified hostname`), as Postfix's `reject_non_fqdn_helo_hostname` does.
    pub require_fqdn_helo: Arc<AtomicBool>,
    refusals: Arc<Mutex<Refusals>>,
    tls: Option<(SinkTls, TlsAcceptor)>,
}

/// Where a conversation stands when the client asks for `STARTTLS`.
enum Ended<S> {
    Done,
    StartTls(S),
}

impl SmtpSink {
    /// On a free port.
    pub async fn start() -> SmtpSink {
        Self::start_on(0).await
    }

    /// On `port` (0: a free one), e.g. a port a service was told about before anything
    /// listened on it.
    pub async fn start_on(port: u16) -> SmtpSink {
        Self::listen(port, None).await
    }

    /// On a free port, speaking TLS as `mode` says with the certificate chain `chain_der`
    /// (leaf first, DER) and its PKCS#8 private key `key_der`.
    pub async fn start_tls(mode: SinkTls, chain_der: Vec<Vec<u8>>, key_der: Vec<u8>) -> SmtpSink {
        use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
        let chain = chain_der.into_iter().map(CertificateDer::from).collect();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der));
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("the sink's certificate and key");
        Self::listen(0, Some((mode, TlsAcceptor::from(Arc::new(config))))).await
    }

    async fn listen(port: u16, tls: Option<(SinkTls, TlsAcceptor)>) -> SmtpSink {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap_or_else(|e| panic!("SMTP sink on port {port}: {e}"));
        let sink = SmtpSink {
            port: listener.local_addr().unwrap().port(),
            down: Arc::new(AtomicBool::new(false)),
            hung: Arc::new(AtomicBool::new(false)),
            data_delay_ms: Arc::new(AtomicU64::new(0)),
            received: Arc::new(Mutex::new(Vec::new())),
            refused: Arc::new(Mutex::new(Vec::new())),
            connections: Arc::new(AtomicUsize::new(0)),
            logins: Arc::new(AtomicUsize::new(0)),
            rcpts: Arc::new(Mutex::new(Vec::new())),
            helos: Arc::new(Mutex::new(Vec::new())),
            require_fqdn_helo: Arc::new(AtomicBool::new(false)),
            refusals: Arc::new(Mutex::new(Refusals::default())),
            tls,
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

    /// `smtp://127.0.0.1:<port>`; a TLS sink's URL is the test's to write (`smtps://` or
    /// `smtp://...?tls=required`).
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

    /// Messages refused after their DATA, in the order they came.
    pub fn refused_messages(&self) -> Vec<Received> {
        self.refused.lock().unwrap().clone()
    }

    /// TCP connections accepted so far (those refused while `down` or held while `hung`
    /// too).
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// `AUTH` commands received so far, accepted or refused.
    pub fn logins(&self) -> usize {
        self.logins.load(Ordering::SeqCst)
    }

    /// Every `RCPT TO` address received so far, accepted or refused, in order.
    pub fn rcpts(&self) -> Vec<String> {
        self.rcpts.lock().unwrap().clone()
    }

    /// Every name given in `EHLO` (or `HELO`) so far, in order.
    pub fn helos(&self) -> Vec<String> {
        self.helos.lock().unwrap().clone()
    }

    /// Refuses a non fully qualified EHLO name from now on (see
    /// [`SmtpSink::require_fqdn_helo`]).
    pub fn refuse_non_fqdn_helo(&self) {
        self.require_fqdn_helo.store(true, Ordering::SeqCst);
    }

    /// Answers every `RCPT TO`, whatever the address, with `reply` (e.g. `553 5.7.1
    /// <propostas@x>: Sender address rejected: not owned by user`, as Postfix refuses a
    /// sender), `times` times or, with none, until [`SmtpSink::accept_everything`].
    pub fn refuse_every_rcpt(&self, reply: &str, times: Option<u32>) {
        self.refusals.lock().unwrap().every_rcpt = Some(Refusal {
            reply: reply.to_owned(),
            times,
        });
    }

    /// Answers every `AUTH` with `reply` (e.g. `535 5.7.8 Authentication credentials
    /// invalid`), `times` times or, with none, until [`SmtpSink::accept_everything`].
    pub fn refuse_logins(&self, reply: &str, times: Option<u32>) {
        self.refusals.lock().unwrap().login = Some(Refusal {
            reply: reply.to_owned(),
            times,
        });
    }

    /// Answers every `MAIL FROM` with `reply` (e.g. `553 5.7.1 Sender address rejected`),
    /// `times` times or, with none, until [`SmtpSink::accept_everything`].
    pub fn refuse_senders(&self, reply: &str, times: Option<u32>) {
        self.refusals.lock().unwrap().sender = Some(Refusal {
            reply: reply.to_owned(),
            times,
        });
    }

    /// Answers `RCPT TO:<address>` with `reply` (e.g. `550 5.1.1 <x>: Recipient address
    /// rejected: User unknown`), `times` times or, with none, until
    /// [`SmtpSink::accept_everything`].
    pub fn refuse_rcpt(&self, address: &str, reply: &str, times: Option<u32>) {
        self.refusals.lock().unwrap().rcpt.insert(
            address.to_ascii_lowercase(),
            Refusal {
                reply: reply.to_owned(),
                times,
            },
        );
    }

    /// Takes the message for `address` whole and then answers its end of DATA with `reply`
    /// (e.g. `451 4.3.0 try again later`), `times` times or, with none, until
    /// [`SmtpSink::accept_everything`]. Each refused message is kept in
    /// [`SmtpSink::refused_messages`].
    pub fn refuse_data(&self, address: &str, reply: &str, times: Option<u32>) {
        self.refusals.lock().unwrap().data.insert(
            address.to_ascii_lowercase(),
            Refusal {
                reply: reply.to_owned(),
                times,
            },
        );
    }

    /// Forgets every refusal set: logins, recipients and messages are accepted again.
    pub fn accept_everything(&self) {
        *self.refusals.lock().unwrap() = Refusals::default();
    }

    async fn session(&self, mut stream: TcpStream) -> std::io::Result<()> {
        let connection = self.connections.fetch_add(1, Ordering::SeqCst) + 1;
        if self.hung.load(Ordering::SeqCst) {
            // Holds the connection open, reads whatever comes, answers nothing.
            let mut lines = BufReader::new(stream).lines();
            while lines.next_line().await?.is_some() {}
            return Ok(());
        }
        if self.down.load(Ordering::SeqCst) {
            stream.write_all(b"421 sink is down\r\n").await?;
            return Ok(());
        }
        match &self.tls {
            None => self
                .converse(stream, connection, false, false, true)
                .await
                .map(drop),
            Some((SinkTls::Implicit, acceptor)) => {
                let stream = acceptor.accept(stream).await?;
                self.converse(stream, connection, true, false, true)
                    .await
                    .map(drop)
            }
            Some((SinkTls::StartTls, acceptor)) => {
                if let Ended::StartTls(plain) =
                    self.converse(stream, connection, false, true, true).await?
                {
                    let stream = acceptor.accept(plain).await?;
                    // After STARTTLS the client starts over with EHLO, without a greeting.
                    self.converse(stream, connection, true, false, false)
                        .await?;
                }
                Ok(())
            }
        }
    }

    /// One conversation on `stream` (the sink's `connection`th): `tls` says whether it is
    /// encrypted, `offer_starttls` whether EHLO offers STARTTLS (which then hands the stream
    /// back), `greet` whether to send the greeting first.
    async fn converse<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        stream: S,
        connection: usize,
        tls: bool,
        offer_starttls: bool,
        greet: bool,
    ) -> std::io::Result<Ended<S>> {
        let mut io = BufReader::new(stream);
        if greet {
            io.get_mut().write_all(b"220 sink ready\r\n").await?;
        }
        let mut rcpt = Vec::new();
        let mut auth_plain = None;
        let mut line = String::new();
        loop {
            line.clear();
            if io.read_line(&mut line).await? == 0 {
                return Ok(Ended::Done);
            }
            let command = line.trim_end_matches(['\r', '\n']).to_owned();
            let upper = command.to_ascii_uppercase();
            let w = io.get_mut();
            if upper.starts_with("EHLO") || upper.starts_with("HELO") {
                let name = command[4..].trim().to_owned();
                self.helos.lock().unwrap().push(name.clone());
                let bare = !name.contains('.') && !name.starts_with('[');
                if bare && self.require_fqdn_helo.load(Ordering::SeqCst) {
                    w.write_all(
                        format!("504 5.5.2 <{name}>: Helo command rejected: need fully-qualified hostname\r\n")
                            .as_bytes(),
                    )
                    .await?;
                    continue;
                }
                let starttls = if offer_starttls {
                    "250-STARTTLS\r\n"
                } else {
                    ""
                };
                w.write_all(format!("250-sink\r\n{starttls}250 AUTH PLAIN\r\n").as_bytes())
                    .await?;
            } else if upper == "STARTTLS" && offer_starttls {
                w.write_all(b"220 go ahead\r\n").await?;
                w.flush().await?;
                return Ok(Ended::StartTls(io.into_inner()));
            } else if upper.starts_with("AUTH") {
                self.logins.fetch_add(1, Ordering::SeqCst);
                let refusal = self
                    .refusals
                    .lock()
                    .unwrap()
                    .login
                    .as_mut()
                    .and_then(Refusal::take);
                match refusal {
                    Some(reply) => w.write_all(format!("{reply}\r\n").as_bytes()).await?,
                    None => {
                        auth_plain = upper
                            .starts_with("AUTH PLAIN ")
                            .then(|| command[11..].trim().to_owned());
                        w.write_all(b"235 authenticated\r\n").await?;
                    }
                }
            } else if upper.starts_with("MAIL FROM:") || upper == "RSET" {
                // A new transaction: the recipients of the last one are forgotten.
                rcpt.clear();
                let refusal = upper
                    .starts_with("MAIL FROM:")
                    .then(|| {
                        self.refusals
                            .lock()
                            .unwrap()
                            .sender
                            .as_mut()
                            .and_then(Refusal::take)
                    })
                    .flatten();
                match refusal {
                    Some(reply) => w.write_all(format!("{reply}\r\n").as_bytes()).await?,
                    None => w.write_all(b"250 ok\r\n").await?,
                }
            } else if upper.starts_with("RCPT TO:") {
                let address = command[8..].trim().trim_matches(['<', '>']).to_owned();
                self.rcpts.lock().unwrap().push(address.clone());
                let refusal = {
                    let mut refusals = self.refusals.lock().unwrap();
                    match refusals.every_rcpt.as_mut().and_then(Refusal::take) {
                        Some(reply) => Some(reply),
                        None => refusals
                            .rcpt
                            .get_mut(&address.to_ascii_lowercase())
                            .and_then(Refusal::take),
                    }
                };
                match refusal {
                    Some(reply) => w.write_all(format!("{reply}\r\n").as_bytes()).await?,
                    None => {
                        rcpt.push(address);
                        w.write_all(b"250 ok\r\n").await?;
                    }
                }
            } else if upper == "DATA" {
                w.write_all(b"354 go ahead\r\n").await?;
                let mut data = String::new();
                loop {
                    line.clear();
                    if io.read_line(&mut line).await? == 0 {
                        return Ok(Ended::Done);
                    }
                    let l = line.trim_end_matches(['\r', '\n']);
                    if l == "." {
                        break;
                    }
                    // Dot-stuffing (RFC 5321 4.5.2): a leading dot was doubled.
                    data.push_str(l.strip_prefix('.').unwrap_or(l));
                    data.push('\n');
                }
                let delay = self.data_delay_ms.load(Ordering::SeqCst);
                if delay > 0 {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                }
                let refusal = {
                    let mut refusals = self.refusals.lock().unwrap();
                    rcpt.iter().find_map(|a| {
                        refusals
                            .data
                            .get_mut(&a.to_ascii_lowercase())
                            .and_then(Refusal::take)
                    })
                };
                let reply = refusal.unwrap_or_else(|| "250 queued".to_owned());
                let message = Received {
                    rcpt: std::mem::take(&mut rcpt),
                    data,
                    tls,
                    auth_plain: auth_plain.clone(),
                    connection,
                    reply: reply.clone(),
                };
                if reply.starts_with('2') {
                    self.received.lock().unwrap().push(message);
                } else {
                    self.refused.lock().unwrap().push(message);
                }
                io.get_mut()
                    .write_all(format!("{reply}\r\n").as_bytes())
                    .await?;
            } else if upper == "QUIT" {
                w.write_all(b"221 bye\r\n").await?;
                return Ok(Ended::Done);
            } else {
                // NOOP and anything else.
                w.write_all(b"250 ok\r\n").await?;
            }
        }
    }
}
