//! An identity provider played by a local server (docs/dispatch-routes.md, "Authentication"):
//! signing keys generated per test run, their public halves served as a key set over real
//! HTTP at `/certs`.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use actix_web::{App, HttpResponse, HttpServer, web};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::Value;

/// A signing key of the provider: its private half signs tokens, its public half is served.
pub struct ProviderKey {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    /// The public half, as the key set publishes it.
    pub jwk: Jwk,
}

impl ProviderKey {
    /// A fresh RSA key (RS256).
    pub fn rsa(kid: &str) -> Self {
        use rsa::pkcs1::EncodeRsaPrivateKey;
        let private = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap();
        let der = private.to_pkcs1_der().unwrap();
        Self::new(
            kid,
            Algorithm::RS256,
            EncodingKey::from_rsa_der(der.as_bytes()),
        )
    }

    /// A fresh P-256 key (ES256).
    pub fn ec(kid: &str) -> Self {
        use p256::pkcs8::EncodePrivateKey;
        let private = p256::SecretKey::random(&mut rsa::rand_core::OsRng);
        let der = private.to_pkcs8_der().unwrap();
        Self::new(
            kid,
            Algorithm::ES256,
            EncodingKey::from_ec_der(der.as_bytes()),
        )
    }

    fn new(kid: &str, alg: Algorithm, encoding: EncodingKey) -> Self {
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        Self {
            kid: kid.to_owned(),
            alg,
            encoding,
            jwk,
        }
    }

    /// This key's public half published under another `kid` (to sign with one key while
    /// naming another).
    pub fn published_as(&self, kid: &str) -> Jwk {
        let mut jwk = self.jwk.clone();
        jwk.common.key_id = Some(kid.to_owned());
        jwk
    }

    /// A token of `claims` signed with this key, naming it in the header.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }

    /// Signs with this key while naming the key `kid` in the header.
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(kid.to_owned());
        self.sign_with(&header, claims)
    }

    /// Signs with this key under a header of the test's own (no `kid`, another `alg`...).
    pub fn sign_with(&self, header: &Header, claims: &Value) -> String {
        jsonwebtoken::encode(header, claims, &self.encoding).unwrap()
    }
}

/// The provider: serves the key set it was last given at `/certs`, counting requests, or a
/// 500 while failing.
#[derive(Default)]
pub struct Provider {
    keys: Mutex<Vec<Jwk>>,
    requests: AtomicUsize,
    failing: AtomicBool,
}

impl Provider {
    /// Serves these public keys from now on.
    pub fn publish(&self, keys: Vec<Jwk>) {
        *self.keys.lock().unwrap() = keys;
    }

    /// Serves the public halves of these keys from now on.
    pub fn publish_keys(&self, keys: &[&ProviderKey]) {
        self.publish(keys.iter().map(|k| k.jwk.clone()).collect());
    }

    /// How many times the key set was asked for.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// While `true`, `/certs` answers 500.
    pub fn set_failing(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// Starts the provider on 127.0.0.1 with a free port (on the test's runtime); answers its
    /// key set URL.
    pub fn start(self: &Arc<Self>) -> String {
        let data = web::Data::from(self.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/certs", web::get().to(certs))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
        let addr = server.addrs()[0];
        actix_web::rt::spawn(server.run());
        format!("http://{addr}/certs")
    }
}

async fn certs(provider: web::Data<Provider>) -> HttpResponse {
    provider.requests.fetch_add(1, Ordering::SeqCst);
    if provider.failing.load(Ordering::SeqCst) {
        return HttpResponse::InternalServerError().body("down for maintenance");
    }
    HttpResponse::Ok().json(JwkSet {
        keys: provider.keys.lock().unwrap().clone(),
    })
}
