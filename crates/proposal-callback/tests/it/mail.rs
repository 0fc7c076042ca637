//! Mail as a customer gets it: over TLS to a real relay (a local sink with a certificate of a
//! test CA), in Portuguese, readable by a mail client.

use std::collections::HashMap;

use base64::Engine;
use common::settings::FromSource;
use common::test_support::{SinkTls, SmtpSink};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use proposal_callback::email::config::EmailConfig;
use proposal_callback::flow::email_worker::Mailer;
use proposal_callback::schema::proposal::email_outbox as o;
use proposal_callback::settings::EmailSettings;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

use crate::support::{TestApp, edited, example, read_mail, subject};

/// A CA of the test's own and a certificate it signed for the relay at 127.0.0.1.
struct TestPki {
    ca_pem: String,
    chain_der: Vec<Vec<u8>>,
    key_der: Vec<u8>,
}

fn test_pki() -> TestPki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "proposal-callback test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let relay_key = KeyPair::generate().unwrap();
    let relay = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&relay_key, &issuer)
        .unwrap();
    TestPki {
        ca_pem: ca_cert.pem(),
        chain_der: vec![relay.der().to_vec()],
        key_der: relay_key.serialize_der(),
    }
}

/// The CA's certificate in a file, as `SMTP_TLS_CA_FILE` names it; removed on drop.
struct CaFile(std::path::PathBuf);

impl CaFile {
    fn new(pem: &str, port: u16) -> Self {
        let path = std::env::temp_dir().join(format!(
            "proposal-callback-test-ca-{}-{port}.pem",
            std::process::id()
        ));
        std::fs::write(&path, pem).unwrap();
        Self(path)
    }
}

impl Drop for CaFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn config(smtp_url: &str, ca_file: Option<&CaFile>) -> EmailConfig {
    let mut env: HashMap<String, String> = HashMap::new();
    env.insert("SMTP_URL".into(), smtp_url.into());
    env.insert(
        "EMAIL_FROM".into(),
        "Imobiliária Demo A <propostas@demo-a.example.com>".into(),
    );
    env.insert("EMAIL_RETRY_BASE".into(), "50ms".into());
    env.insert("SMTP_TIMEOUT".into(), "5s".into());
    if let Some(f) = ca_file {
        env.insert(
            "SMTP_TLS_CA_FILE".into(),
            f.0.to_string_lossy().into_owned(),
        );
    }
    EmailSettings::from_source(&env).unwrap().config().unwrap()
}

async fn outbox_errors(t: &TestApp) -> Vec<(String, Option<String>)> {
    o::table
        .order(o::id)
        .select((o::status, o::last_error))
        .load(&mut t.conn().await)
        .await
        .unwrap()
}

/// `\0user\0password`, as AUTH PLAIN carries it.
fn plain(received: &common::test_support::Received) -> String {
    let raw = received.auth_plain.as_deref().expect("no AUTH PLAIN");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

#[actix_web::test]
async fn an_email_is_delivered_over_starttls_with_credentials_to_a_relay_with_a_private_ca() {
    let t = TestApp::start().await;
    let pki = test_pki();
    let sink = SmtpSink::start_tls(SinkTls::StartTls, pki.chain_der, pki.key_der).await;
    let ca = CaFile::new(&pki.ca_pem, sink.port);
    let url = format!(
        "smtp://relay-user:p%40ss%3Aword@127.0.0.1:{}?tls=required",
        sink.port
    );
    let mailer = Mailer::new(&config(&url, Some(&ca))).unwrap().unwrap();
    let (s, _) = t.callback("demo-a", "too", example("too", "pending")).await;
    assert_eq!(s, 200);

    assert_eq!(mailer.run_once(&t.db.pool()).await.unwrap(), 1);
    assert_eq!(outbox_errors(&t).await, vec![("sent".to_owned(), None)]);
    let received = sink.messages();
    assert_eq!(received.len(), 1);
    // Credentials and message went over TLS, the password percent-decoded.
    assert!(received[0].tls);
    assert_eq!(plain(&received[0]), "\0relay-user\0p@ss:word");
    let mail = read_mail(&received[0]);
    assert_eq!(mail.subject, subject("99121", "pending"));
    assert_eq!(
        mail.from,
        "Imobiliária Demo A <propostas@demo-a.example.com>"
    );
}

#[actix_web::test]
async fn an_email_is_delivered_over_implicit_tls() {
    let t = TestApp::start().await;
    let pki = test_pki();
    let sink = SmtpSink::start_tls(SinkTls::Implicit, pki.chain_der, pki.key_der).await;
    let ca = CaFile::new(&pki.ca_pem, sink.port);
    let url = format!("smtps://relay-user:secret@127.0.0.1:{}", sink.port);
    let mailer = Mailer::new(&config(&url, Some(&ca))).unwrap().unwrap();
    let (s, _) = t
        .callback("demo-a", "tokio", example("tokio", "approved"))
        .await;
    assert_eq!(s, 200);

    assert_eq!(mailer.run_once(&t.db.pool()).await.unwrap(), 1);
    let received = sink.messages();
    assert_eq!(received.len(), 1);
    assert!(received[0].tls);
    assert_eq!(plain(&received[0]), "\0relay-user\0secret");
    assert_eq!(
        read_mail(&received[0]).subject,
        subject("548812", "approved")
    );
}

/// A relay whose certificate chains to no trusted root gets nothing: the attempt fails with
/// the TLS error, the email stays queued, and is sent once the CA is trusted.
#[actix_web::test]
async fn a_relay_with_an_untrusted_certificate_gets_nothing() {
    // The app and the workers on one manual clock: the retry falls due when it is advanced.
    let clock = common::Clock::manual(chrono::Utc::now());
    let t = TestApp::start_with_state({
        let clock = clock.clone();
        move |state| state.with_clock(clock)
    })
    .await;
    let pki = test_pki();
    let sink = SmtpSink::start_tls(SinkTls::Implicit, pki.chain_der, pki.key_der).await;
    let url = format!("smtps://relay-user:secret@127.0.0.1:{}", sink.port);
    let untrusting = Mailer::new(&config(&url, None))
        .unwrap()
        .unwrap()
        .with_clock(clock.clone());
    t.callback("demo-a", "too", example("too", "approved"))
        .await;

    assert_eq!(untrusting.run_once(&t.db.pool()).await.unwrap(), 0);
    let rows = outbox_errors(&t).await;
    assert_eq!(rows.len(), 1);
    let (status, error) = &rows[0];
    assert_eq!(status, "queued");
    let error = error.as_deref().unwrap();
    assert!(
        error.starts_with("SMTP connect (greeting, EHLO): ") && error.contains("UnknownIssuer"),
        "{error}"
    );
    assert!(sink.messages().is_empty());

    let ca = CaFile::new(&pki.ca_pem, sink.port);
    let trusting = Mailer::new(&config(&url, Some(&ca)))
        .unwrap()
        .unwrap()
        .with_clock(clock.clone());
    // Past the email's backoff (EMAIL_RETRY_BASE 50ms).
    clock.advance(chrono::Duration::milliseconds(100));
    assert_eq!(trusting.run_once(&t.db.pool()).await.unwrap(), 1);
    assert_eq!(sink.messages().len(), 1);
}

/// `tls=required` means required: a relay that does not offer STARTTLS is told nothing, not
/// the credentials and not the message.
#[actix_web::test]
async fn a_relay_without_starttls_gets_nothing_when_tls_is_required() {
    let t = TestApp::start().await;
    let plain_sink = SmtpSink::start().await;
    let url = format!(
        "smtp://relay-user:secret@127.0.0.1:{}?tls=required",
        plain_sink.port
    );
    let mailer = Mailer::new(&config(&url, None)).unwrap().unwrap();
    t.callback("demo-a", "too", example("too", "approved"))
        .await;
    assert_eq!(mailer.run_once(&t.db.pool()).await.unwrap(), 0);
    assert_eq!(
        outbox_errors(&t).await,
        vec![(
            "queued".to_owned(),
            Some("SMTP STARTTLS: the relay does not offer STARTTLS; nothing was sent".to_owned())
        )]
    );
    assert!(plain_sink.messages().is_empty());
}

/// Credentials over plain SMTP to anything but this machine stop `serve` at start, naming
/// the variable and never the password.
#[actix_web::test]
async fn credentials_in_clear_are_refused_at_start() {
    let t = TestApp::start().await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_proposal-callback"))
        .arg("serve")
        .env("DATABASE_URL", t.db.url())
        .env("JWT_SECRET", crate::support::SECRET)
        .env("BIND", "127.0.0.1:0")
        .env(
            "SMTP_URL",
            "smtp://relay-user:hunter2-secret@smtp.example.com:25",
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("SMTP_URL") && stderr.contains("in clear"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    // To a relay on this machine (the compose Mailpit, a local sink) they are allowed.
    let sink = SmtpSink::start().await;
    let url = format!("smtp://relay-user:secret@127.0.0.1:{}", sink.port);
    let mailer = Mailer::new(&config(&url, None)).unwrap().unwrap();
    t.callback("demo-a", "too", example("too", "approved"))
        .await;
    assert_eq!(mailer.run_once(&t.db.pool()).await.unwrap(), 1);
    assert!(!sink.messages()[0].tls);
    assert_eq!(plain(&sink.messages()[0]), "\0relay-user\0secret");
}

/// One email per status a callback can bring, as a mail client shows it: subject and both
/// parts in Portuguese, every byte on the wire 7-bit (UTF-8 encoded in headers and parts).
#[actix_web::test]
async fn each_status_arrives_in_portuguese() {
    let t = TestApp::start().await;
    let sink = SmtpSink::start().await;
    let id = "POR-2026-000124";
    let porto = |situacao: &str, at: &str, protocolo: &str, motivo: Option<&str>| {
        edited("porto", "pending", |v| {
            v["situacao"] = situacao.into();
            v["dataHora"] = at.into();
            v["protocolo"] = protocolo.into();
            v["motivo"] = motivo.into();
        })
    };
    for body in [
        example("porto", "pending"),
        porto("EM_ANALISE", "2026-11-21T09:00:00-03:00", "p-2", None),
        porto(
            "APROVADA",
            "2026-11-22T10:30:00-03:00",
            "p-3",
            Some("Garantia de 30 meses"),
        ),
        example("porto", "refused"),
    ] {
        let (s, b) = t.callback("demo-a", "porto", body).await;
        assert_eq!(s, 200, "{b}");
    }
    let mailer = Mailer::new(&config(&sink.url(), None)).unwrap().unwrap();
    assert_eq!(mailer.run_once(&t.db.pool()).await.unwrap(), 4);
    let mails: Vec<_> = sink.messages().iter().map(read_mail).collect();
    let subjects: Vec<_> = mails.iter().map(|m| m.subject.clone()).collect();
    assert_eq!(
        subjects,
        vec![
            subject(id, "pending"),
            subject(id, "under_analysis"),
            subject(id, "approved"),
            subject("POR-2026-000125", "refused"),
        ]
    );
    let says = [
        "A seguradora Porto Seguro precisa de mais informações para concluir a análise da proposta POR-2026-000124 de seguro fiança locatícia:\n\n- Comprovante de renda ilegível\n",
        "A proposta POR-2026-000124 de seguro fiança locatícia está em análise na seguradora Porto Seguro.\n",
        "Boa notícia: a seguradora Porto Seguro aprovou a proposta POR-2026-000124 de seguro fiança locatícia.\n\nImobiliária Demo A vai seguir com a contratação e entrará em contato com os próximos passos. Você não precisa fazer nada agora.\n\nObservação da seguradora: Garantia de 30 meses\n",
        "A seguradora Porto Seguro recusou a proposta POR-2026-000125 de seguro fiança locatícia.\n\nMotivo informado pela seguradora: Restrição cadastral do pretendente\n",
    ];
    let headings = [
        "Proposta pendente: faltam informações",
        "Proposta em análise",
        "Proposta aprovada",
        "Proposta recusada",
    ];
    for ((mail, says), heading) in mails.iter().zip(says).zip(headings) {
        assert!(mail.ascii_only, "8-bit bytes on the wire: {mail:?}");
        assert!(mail.text.starts_with("Olá,\n\n"), "{}", mail.text);
        assert!(mail.text.contains(says), "{}", mail.text);
        assert!(
            mail.text.contains("Atenciosamente,\nImobiliária Demo A\n"),
            "{}",
            mail.text
        );
        let html = mail.html.as_deref().expect("an HTML part");
        assert!(html.contains("<html lang=\"pt-BR\">"), "{html}");
        assert!(html.contains(&format!(">{heading}</h1>")), "{html}");
    }
}
