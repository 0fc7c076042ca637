//! TLS to PostgreSQL over rustls, with libpq's connection parameters: `sslmode` (`disable`,
//! `prefer`, `require`, `verify-ca`, `verify-full`), `sslrootcert` (a CA file, or `system`
//! for Mozilla's roots), `sslcert` and `sslkey` (a client certificate). They are read from the
//! connection string (URL query or `key=value` form) and taken out of it before it reaches
//! the driver, which knows only `disable`, `prefer` and `require`.
//!
//! libpq's meanings: `disable` plain; `prefer` (the default) TLS when the server offers it,
//! no certificate check; `require` TLS, no certificate check unless `sslrootcert` is given
//! (then as `verify-ca`); `verify-ca` TLS, the server's certificate chains to `sslrootcert`
//! (or Mozilla's roots); `verify-full` that and the certificate names the host connected to.
//!
//! Every connection of the services is made here: the pool, the migrations, the start-up
//! check and the `LISTEN` connection.

use std::str::FromStr;
use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    Disable,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }

    /// What the driver is told: it encrypts (or not), the verifier checks.
    fn driver(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require | Self::VerifyCa | Self::VerifyFull => "require",
        }
    }
}

/// The TLS parameters of a connection string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsParams {
    pub mode: SslMode,
    pub rootcert: Option<String>,
    pub cert: Option<String>,
    pub key: Option<String>,
}

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    None,
    Chain,
    ChainAndName,
}

impl TlsParams {
    fn check(&self) -> Check {
        match self.mode {
            SslMode::Disable | SslMode::Prefer => Check::None,
            SslMode::Require if self.rootcert.is_none() => Check::None,
            SslMode::Require | SslMode::VerifyCa => Check::Chain,
            SslMode::VerifyFull => Check::ChainAndName,
        }
    }

    /// The roots checked against, for messages: `the CA in sslrootcert=/x.pem`.
    fn roots(&self) -> String {
        match self.rootcert.as_deref() {
            None | Some("system") => "a trusted root CA (Mozilla's roots)".to_owned(),
            Some(path) => format!("the CA in sslrootcert={path}"),
        }
    }
}

const OURS: [&str; 3] = ["sslrootcert", "sslcert", "sslkey"];

/// Splits `raw` into the connection string for the driver (without `sslrootcert`, `sslcert`,
/// `sslkey`, and with `sslmode` as the driver knows it) and the TLS parameters. The error is
/// a reason naming the parameter, never a value other than a file's path.
pub fn split(raw: &str) -> Result<(String, TlsParams), String> {
    let mut params = TlsParams::default();
    let mut take = |key: &str, value: String| -> Result<Option<String>, String> {
        match key {
            "sslmode" => {
                params.mode = SslMode::parse(&value)
                    .ok_or_else(|| "invalid value for option `sslmode`".to_owned())?;
                Ok(Some(params.mode.driver().to_owned()))
            }
            "sslrootcert" => {
                params.rootcert = Some(value);
                Ok(None)
            }
            "sslcert" => {
                params.cert = Some(value);
                Ok(None)
            }
            "sslkey" => {
                params.key = Some(value);
                Ok(None)
            }
            _ => unreachable!("only our keys are taken"),
        }
    };
    let is_ours = |key: &str| key == "sslmode" || OURS.contains(&key);
    let driver = if let Some((scheme, rest)) = raw.split_once("://") {
        // The query starts after the user info (which may hold an unencoded `?`).
        let from = rest.rfind('@').map_or(0, |i| i + 1);
        match rest[from..].find('?') {
            None => raw.to_owned(),
            Some(q) => {
                let (path, query) = rest.split_at(from + q);
                let mut kept = Vec::new();
                for pair in query[1..].split('&').filter(|p| !p.is_empty()) {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if is_ours(key) {
                        let value = percent_encoding::percent_decode_str(value)
                            .decode_utf8()
                            .map_err(|_| format!("option `{key}` is not UTF-8"))?
                            .into_owned();
                        if let Some(v) = take(key, value)? {
                            kept.push(format!("{key}={v}"));
                        }
                    } else {
                        kept.push(pair.to_owned());
                    }
                }
                if kept.is_empty() {
                    format!("{scheme}://{path}")
                } else {
                    format!("{scheme}://{path}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = Vec::new();
        for (key, text, value) in pairs(raw) {
            if is_ours(&key) {
                if let Some(v) = take(&key, value)? {
                    kept.push(format!("{key}={v}"));
                }
            } else {
                kept.push(format!("{key}={text}"));
            }
        }
        kept.join(" ")
    };
    Ok((driver, params))
}

/// libpq's `key=value` form as (key, value as written, value unquoted). A malformed string
/// comes back as the driver would read it closely enough for the driver to refuse it.
fn pairs(raw: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut chars = raw.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return out;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next_if_eq(&'=').is_none() {
            out.push((key, String::new(), String::new()));
            continue;
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let (mut text, mut value) = (String::new(), String::new());
        if chars.next_if_eq(&'\'').is_some() {
            text.push('\'');
            while let Some(c) = chars.next() {
                text.push(c);
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            text.push(n);
                            value.push(n);
                        }
                    }
                    '\'' => break,
                    _ => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                text.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        text.push(n);
                        value.push(n);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, text, value));
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read(option: &str, path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {option}={path} ({})", phrase(&e)))
}

/// `No such file or directory (os error 2)` -> `no such file or directory`.
fn phrase(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text,
    };
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The rustls configuration for `params`, reading the files it names. The error names the
/// parameter and the file.
pub fn client_config(params: &TlsParams) -> Result<ClientConfig, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let verifier: Arc<dyn ServerCertVerifier> = match params.check() {
        Check::None => Arc::new(AnyCertificate(provider.clone())),
        check => {
            let mut roots = RootCertStore::empty();
            match params.rootcert.as_deref() {
                None | Some("system") => {
                    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                }
                Some(path) => {
                    let pem = read("sslrootcert", path)?;
                    for cert in CertificateDer::pem_slice_iter(&pem) {
                        let cert = cert.map_err(|e| {
                            format!("sslrootcert={path} is not a PEM certificate file ({e})")
                        })?;
                        roots.add(cert).map_err(|e| {
                            format!("sslrootcert={path} holds a certificate rustls refuses ({e})")
                        })?;
                    }
                    if roots.is_empty() {
                        return Err(format!("sslrootcert={path} holds no PEM certificate"));
                    }
                }
            }
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| e.to_string())?;
            if check == Check::Chain {
                Arc::new(ChainOnly(webpki))
            } else {
                webpki
            }
        }
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match (params.cert.as_deref(), params.key.as_deref()) {
        (None, None) => Ok(builder.with_no_client_auth()),
        (Some(_), None) => Err("sslcert is given without sslkey".to_owned()),
        (None, Some(_)) => Err("sslkey is given without sslcert".to_owned()),
        (Some(cert), Some(key)) => {
            let pem = read("sslcert", cert)?;
            let certs = CertificateDer::pem_slice_iter(&pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("sslcert={cert} is not a PEM certificate file ({e})"))?;
            if certs.is_empty() {
                return Err(format!("sslcert={cert} holds no PEM certificate"));
            }
            let key_pem = read("sslkey", key)?;
            // The key's own error could quote it: only its kind is said.
            let private = PrivateKeyDer::from_pem_slice(&key_pem)
                .map_err(|_| format!("sslkey={key} holds no PEM private key"))?;
            builder.with_client_auth_cert(certs, private).map_err(|_| {
                format!("sslcert={cert} and sslkey={key} do not make a client certificate")
            })
        }
    }
}

/// `require` and `prefer` without a CA: encrypted, any certificate (libpq's meaning). The
/// handshake's signatures are still checked, so the server holds the certificate's key.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain is checked, the host name is not. webpki checks the name after the
/// chain, so a name mismatch means the chain was good.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    /// The connection string or a file it names (`sslrootcert`, ...) is wrong.
    Config(String),
    /// The TLS handshake failed: the reason, in words (a certificate from another CA, for
    /// another host, ...).
    Tls(String),
    /// The server refused us (its own words) or could not be reached.
    Server(String),
    /// Connected, but the connection's setup failed.
    Setup(diesel::ConnectionError),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config(m) | Self::Server(m) => f.write_str(m),
            Self::Tls(m) => write!(f, "TLS: {m}"),
            Self::Setup(e) => e.fmt(f),
        }
    }
}

impl From<ConnectError> for diesel::ConnectionError {
    fn from(e: ConnectError) -> Self {
        match e {
            ConnectError::Setup(e) => e,
            other => diesel::ConnectionError::BadConnection(other.to_string()),
        }
    }
}

/// Opens a connection to `url` (a connection string with libpq's TLS parameters).
pub async fn connect(url: &str) -> Result<AsyncPgConnection, ConnectError> {
    let (driver_url, params) = split(url).map_err(ConnectError::Config)?;
    let mut config = tokio_postgres::Config::from_str(&driver_url).map_err(|e| {
        ConnectError::Config(
            std::error::Error::source(&e).map_or_else(|| e.to_string(), ToString::to_string),
        )
    })?;
    // A bound on every round trip whatever the network does (`super::network`).
    super::network::apply(&mut config);
    let tls = MakeRustlsConnect::new(client_config(&params).map_err(ConnectError::Config)?);
    let (client, connection) = config
        .connect(tls)
        .await
        .map_err(|e| describe(&e, &params))?;
    AsyncPgConnection::try_from_client_and_connection(client, connection)
        .await
        .map_err(ConnectError::Setup)
}

/// [`connect`] for diesel's and the pool's callers.
pub async fn establish(url: &str) -> diesel::ConnectionResult<AsyncPgConnection> {
    Ok(connect(url).await?)
}

/// The driver's error in words: the server's own, or what the TLS handshake objected to.
fn describe(e: &tokio_postgres::Error, params: &TlsParams) -> ConnectError {
    if let Some(db) = e.as_db_error() {
        return ConnectError::Server(db.message().to_owned());
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        let tls = err.downcast_ref::<rustls::Error>().or_else(|| {
            err.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(tls) = tls {
            return ConnectError::Tls(describe_tls(tls, params));
        }
        source = err.source();
    }
    // The driver's text without its cause says little (`error performing TLS handshake`).
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = cause.source();
    }
    if text.contains("TLS") {
        ConnectError::Tls(text)
    } else {
        ConnectError::Server(text)
    }
}

fn describe_tls(e: &rustls::Error, params: &TlsParams) -> String {
    use CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer | C::BadSignature | C::UnknownRevocationStatus => format!(
                "the server's certificate is not signed by {} (sslmode={})",
                params.roots(),
                mode_name(params.mode)
            ),
            C::NotValidForName => "the server's certificate is for another host than the one \
                                   connected to (sslmode=verify-full)"
                .to_owned(),
            C::NotValidForNameContext {
                expected,
                presented,
            } => format!(
                "the server's certificate is for another host: it names {} but the host \
                 connected to is {} (sslmode=verify-full)",
                if presented.is_empty() {
                    "no host".to_owned()
                } else {
                    presented
                        .iter()
                        .map(|p| bare(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                server_name(expected)
            ),
            C::Expired | C::ExpiredContext { .. } => {
                "the server's certificate has expired".to_owned()
            }
            C::NotValidYet | C::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet".to_owned()
            }
            other => format!("the server's certificate is refused ({other:?})"),
        },
        other => format!("the TLS handshake failed ({other})"),
    }
}

/// rustls's `DnsName("db.example.org")` -> `db.example.org`.
fn bare(presented: &str) -> &str {
    match (presented.find('('), presented.rfind(')')) {
        (Some(open), Some(close)) if open < close => presented[open + 1..close].trim_matches('"'),
        _ => presented,
    }
}

fn server_name(name: &ServerName<'_>) -> String {
    match name {
        ServerName::DnsName(d) => d.as_ref().to_owned(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => format!("{other:?}"),
    }
}

fn mode_name(mode: SslMode) -> &'static str {
    match mode {
        SslMode::Disable => "disable",
        SslMode::Prefer => "prefer",
        SslMode::Require => "require",
        SslMode::VerifyCa => "verify-ca",
        SslMode::VerifyFull => "verify-full",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(mode: SslMode, rootcert: Option<&str>) -> TlsParams {
        TlsParams {
            mode,
            rootcert: rootcert.map(str::to_owned),
            ..TlsParams::default()
        }
    }

    #[test]
    fn takes_libpq_parameters_out_of_a_url() {
        let (driver, p) = split(
            "postgres://app:pw@db.example.org:5432/emergency?sslmode=verify-full\
             &sslrootcert=/etc/ssl/rds%20ca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(
            driver,
            "postgres://app:pw@db.example.org:5432/emergency?sslmode=require&application_name=x"
        );
        assert_eq!(p, params(SslMode::VerifyFull, Some("/etc/ssl/rds ca.pem")));
        let (driver, p) = split("postgres://u@h/db?sslrootcert=/ca.pem").unwrap();
        assert_eq!(driver, "postgres://u@h/db");
        assert_eq!(p, params(SslMode::Prefer, Some("/ca.pem")));
        let (driver, p) = split("postgres://u:a?b@h/db").unwrap();
        assert_eq!(driver, "postgres://u:a?b@h/db");
        assert_eq!(p, TlsParams::default());
        let (driver, p) =
            split("postgres://u@h/db?sslmode=verify-ca&sslcert=/c.pem&sslkey=/k.pem").unwrap();
        assert_eq!(driver, "postgres://u@h/db?sslmode=require");
        assert_eq!(p.mode, SslMode::VerifyCa);
        assert_eq!(p.cert.as_deref(), Some("/c.pem"));
        assert_eq!(p.key.as_deref(), Some("/k.pem"));
    }

    #[test]
    fn takes_libpq_parameters_out_of_key_value_pairs() {
        let (driver, p) =
            split("host=db user=u password='a b' sslmode=verify-full sslrootcert='/x y.pem'")
                .unwrap();
        assert_eq!(driver, "host=db user=u password='a b' sslmode=require");
        assert_eq!(p, params(SslMode::VerifyFull, Some("/x y.pem")));
    }

    #[test]
    fn presented_names_read_bare() {
        assert_eq!(bare("DnsName(\"db.example.org\")"), "db.example.org");
        assert_eq!(bare("IpAddress(10.0.0.1)"), "10.0.0.1");
        assert_eq!(bare("plain"), "plain");
    }

    #[test]
    fn an_unknown_sslmode_is_named() {
        assert_eq!(
            split("postgres://u:secret@h/db?sslmode=bogus").unwrap_err(),
            "invalid value for option `sslmode`"
        );
    }

    #[test]
    fn libpq_checks_per_mode() {
        assert_eq!(params(SslMode::Prefer, None).check(), Check::None);
        assert_eq!(params(SslMode::Require, None).check(), Check::None);
        assert_eq!(params(SslMode::Require, Some("/ca")).check(), Check::Chain);
        assert_eq!(params(SslMode::VerifyCa, None).check(), Check::Chain);
        assert_eq!(
            params(SslMode::VerifyFull, Some("/ca")).check(),
            Check::ChainAndName
        );
    }

    #[test]
    fn a_missing_file_is_named() {
        let err =
            client_config(&params(SslMode::VerifyFull, Some("/nonexistent/ca.pem"))).unwrap_err();
        assert_eq!(
            err,
            "cannot read sslrootcert=/nonexistent/ca.pem (no such file or directory)"
        );
        let p = TlsParams {
            cert: Some("/c.pem".into()),
            ..TlsParams::default()
        };
        assert_eq!(
            client_config(&p).unwrap_err(),
            "sslcert is given without sslkey"
        );
        assert!(client_config(&params(SslMode::VerifyFull, Some("system"))).is_ok());
        assert!(client_config(&params(SslMode::Require, None)).is_ok());
    }
}
