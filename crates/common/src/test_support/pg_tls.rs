//! Certificates for PostgreSQL clusters of the tests that speak TLS: a CA of the test's own,
//! server certificates it signs, and the server's configuration (`ssl = on`, `hostssl` lines
//! only, so a plain connection is refused).

use std::path::{Path, PathBuf};
use std::process::Command;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

/// A certificate authority of the test's own.
pub struct TestCa {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A server's certificate and key, PEM; with `client_ca_pem`, the server lets in only
/// clients showing a certificate that CA signed (`clientcert=verify-ca`).
#[derive(Clone)]
pub struct ServerCert {
    pub cert_pem: String,
    pub key_pem: String,
    pub client_ca_pem: Option<String>,
}

/// A client's certificate and key in temporary files, as `sslcert` and `sslkey` name them.
pub struct ClientCert {
    pub cert: PemFile,
    pub key: PemFile,
}

impl TestCa {
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let cert = params.self_signed(&key).expect("the CA's certificate");
        Self {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA's certificate, PEM.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A server certificate signed by this CA for `names` (host names or IP addresses).
    pub fn server_cert(&self, names: &[&str]) -> ServerCert {
        let key = KeyPair::generate().expect("a server key");
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let cert = CertificateParams::new(names)
            .expect("server certificate parameters")
            .signed_by(&key, &self.issuer)
            .expect("the server's certificate");
        ServerCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            client_ca_pem: None,
        }
    }

    /// A client certificate signed by this CA, for user `user` (its common name).
    pub fn client_cert(&self, user: &str) -> ClientCert {
        let key = KeyPair::generate().expect("a client key");
        let mut params =
            CertificateParams::new(Vec::<String>::new()).expect("client certificate parameters");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, user);
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("the client's certificate");
        ClientCert {
            cert: PemFile::new(&cert.pem()),
            key: PemFile::new(&key.serialize_pem()),
        }
    }

    /// The CA's certificate in a temporary file, as `sslrootcert` names it.
    pub fn pem_file(&self) -> PemFile {
        PemFile::new(&self.pem)
    }
}

/// A PEM file removed on drop.
pub struct PemFile(PathBuf);

impl PemFile {
    pub fn new(pem: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("pcb-test-{}-{n}.pem", std::process::id()));
        std::fs::write(&path, pem).expect("write a PEM file");
        Self(path)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary path")
    }
}

impl Drop for PemFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Puts `cert` in the data directory, turns TLS on and lets clients in over TLS only.
pub(super) fn configure(data: &Path, cert: &ServerCert, as_postgres: bool) {
    let write = |name: &str, text: &str| {
        let path = data.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {name}: {e}"));
        path
    };
    write("server.crt", &cert.cert_pem);
    let key = write("server.key", &cert.key_pem);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut files = vec!["server.crt", "server.key", "pg_hba.conf", "postgresql.conf"];
    let clientcert = match &cert.client_ca_pem {
        Some(ca) => {
            write("client_ca.crt", ca);
            files.push("client_ca.crt");
            " clientcert=verify-ca"
        }
        None => "",
    };
    write(
        "pg_hba.conf",
        &format!(
            "local all all trust\n\
             hostssl all all 127.0.0.1/32 trust{clientcert}\n\
             hostssl all all ::1/128 trust{clientcert}\n"
        ),
    );
    let conf = data.join("postgresql.conf");
    let mut text = std::fs::read_to_string(&conf).expect("read postgresql.conf");
    text.push_str("\nssl = on\n");
    if cert.client_ca_pem.is_some() {
        text.push_str("ssl_ca_file = 'client_ca.crt'\n");
    }
    std::fs::write(&conf, text).expect("write postgresql.conf");
    if as_postgres {
        for name in files {
            let ok = Command::new("chown")
                .args(["postgres:postgres", data.join(name).to_str().unwrap()])
                .status()
                .unwrap();
            assert!(ok.success(), "chown {name}");
        }
    }
}
