//! The integrations console and both `/docs` pages in a real browser: headless Chromium
//! (Debian's `chromium`) driven by Playwright (`tests/browser/console.mjs`), against the real
//! binaries on a fresh database with the demo data, and a local HTTP server playing the
//! insurers' registration route. This test prepares the data the browser looks at, runs the
//! script, and then checks in the database what the clicks changed.
//!
//! Needs `node` (20 or newer) and `chromium`; without them it fails saying what to install
//! (`.ci/run` installs them). `SCREENSHOTS_DIR=docs/screenshots` also saves a screenshot of
//! each screen (`tests/browser/screenshots.sh`).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::test_support::{SmtpSink, TestDb};

use support::{Service, callback_jwt, client, count, exec, read, run_bin, texts};

/// The browser script and its Node project.
fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("browser")
}

/// The Chromium to drive: `CHROMIUM`, else Debian's `/usr/bin/chromium`, else one on PATH.
fn chromium() -> PathBuf {
    if let Some(named) = std::env::var_os("CHROMIUM").map(PathBuf::from) {
        assert!(
            named.is_file(),
            "CHROMIUM={} is not a file: point it at a Chromium or Chrome binary, or unset it to \
             use /usr/bin/chromium (apt-get install chromium)",
            named.display()
        );
        return named;
    }
    let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .map(PathBuf::from)
        .into_iter()
        .chain(which("chromium"));
    for c in candidates {
        if c.is_file() {
            return c;
        }
    }
    panic!(
        "the browser tests need Chromium and found none (CHROMIUM, /usr/bin/chromium, PATH).\n\
         Install it: apt-get install chromium   (Debian; .ci/run does this)\n\
         or set CHROMIUM to a Chromium or Chrome binary."
    );
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

/// Node 20 or newer (playwright-core's minimum), and the script's dependencies installed
/// (`npm ci` from the committed lock file when `node_modules` is missing; it never downloads
/// a browser).
fn node_ready() {
    let version = Command::new("node")
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "the browser tests need Node.js 20 or newer and `node` cannot be run ({e}).\n\
             Install it: apt-get install nodejs npm   (Debian; .ci/run does this)"
            )
        });
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 20,
        "the browser tests need Node.js 20 or newer; `node --version` says {version:?}"
    );
    let dir = browser_dir();
    if !dir
        .join("node_modules/playwright-core/package.json")
        .is_file()
    {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "`npm ci` in {} cannot run ({e}): apt-get install npm",
                    dir.display()
                )
            });
        assert!(
            out.status.success(),
            "`npm ci` in {} failed:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A request the fake insurer received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    body: String,
}

/// The insurers' registration route on 127.0.0.1: a path under `/aceita` answers 200, one
/// under `/recusa` 503 Service Unavailable. Each request is recorded before it is answered.
struct FakeInsurer {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl FakeInsurer {
    fn start() -> FakeInsurer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || answer(stream, &log));
            }
        });
        FakeInsurer { base, received }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// Reads one HTTP/1.1 request (head, then `Content-Length` bytes) and answers it.
fn answer(stream: std::net::TcpStream, log: &Mutex<Vec<Received>>) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    log.lock().unwrap().push(Received {
        path: path.clone(),
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let (status, text) = if path.starts_with("/aceita/") {
        ("200 OK", r#"{"mensagem":"cadastro incluído"}"#)
    } else {
        ("503 Service Unavailable", r#"{"mensagem":"em manutenção"}"#)
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = reader.get_mut().write_all(reply.as_bytes());
}

/// A porto callback body naming `proposal`, with `motivo` as given, its keys in the order
/// written here (not sorted: the raw body page must show them as they came).
fn porto(proposal: &str, situacao: &str, protocolo: &str, motivo: &str) -> Vec<u8> {
    let s = |v: &str| serde_json::to_string(v).unwrap();
    format!(
        r#"{{"idProposta":{},"situacao":{},"dataHora":"2026-11-20T14:03:11-03:00","motivo":{},"protocolo":{}}}"#,
        s(proposal),
        s(situacao),
        s(motivo),
        s(protocolo)
    )
    .into_bytes()
}

/// Posts a porto callback as the tenant's porto integration; the answer's status.
async fn callback(base: &str, basic: &str, tenant: &str, body: Vec<u8>) -> u16 {
    let http = client();
    let jwt = callback_jwt(&http, base, basic).await;
    let res = http
        .post(format!("{base}/callback/{tenant}/porto"))
        .bearer_auth(jwt)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    read(res).await.0
}

/// Posts a tokio analysis result (`code` 20 pending, 10 approved) for `proposal` as demo-a's
/// tokio integration; the answer's status.
async fn tokio_callback(base: &str, basic: &str, proposal: &str, code: u32, event: &str) -> u16 {
    let http = client();
    let jwt = callback_jwt(&http, base, basic).await;
    let body = serde_json::json!({
        "event_id": event,
        "event": "proposal.analysis_completed",
        "sent_at": 1_763_658_000 + i64::from(code == 10),
        "data": {"proposal": {"id": proposal}, "result": {"code": code}}
    });
    let res = http
        .post(format!("{base}/callback/demo-a/tokio"))
        .bearer_auth(jwt)
        .json(&body)
        .send()
        .await
        .unwrap();
    read(res).await.0
}

async fn one_text(url: &str, sql: &str) -> String {
    let rows = texts(url, sql).await;
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    rows.into_iter().next().unwrap()
}

/// The mailbox of proposal MAIL-1's contact, which the relay refuses once.
const REFUSED_MAILBOX: &str = "recusado.mail-1@demo-a.example.com";

#[tokio::test(flavor = "multi_thread")]
async fn the_integrations_console_and_the_docs_work_in_a_real_browser() {
    let chromium = chromium();
    node_ready();

    let db = TestDb::blank().await;
    let url = db.url();
    let insurer = FakeInsurer::start();
    let accepts = format!("{}/aceita", insurer.base);
    let refuses = format!("{}/recusa", insurer.base);
    // The relay: it refuses the mailbox of proposal MAIL-1's contact once, for good (550), as
    // a real relay refuses an unknown mailbox; the operator's "Reenviar" sends it again.
    let relay = SmtpSink::start().await;
    relay.refuse_rcpt(
        REFUSED_MAILBOX,
        &format!("550 5.1.1 <{REFUSED_MAILBOX}>: Recipient address rejected: User unknown"),
        Some(1),
    );
    let smtp = relay.url();
    let callback_service = Service::start(
        "proposal-callback",
        url,
        &[
            ("SMTP_URL", &smtp),
            (
                "EMAIL_FROM",
                "Propostas Demo A <propostas@demo-a.example.com>",
            ),
            ("EMAIL_POLL_INTERVAL", "200ms"),
            ("INSURER_PORTO_HOMOLOGATION_URL", &accepts),
            ("INSURER_PORTO_CLIENT_ID", "porto-console-test"),
            ("INSURER_PORTO_CLIENT_SECRET", "porto-console-secret"),
            ("INSURER_TOKIO_HOMOLOGATION_URL", &refuses),
            ("INSURER_TOKIO_CLIENT_ID", "tokio-console-test"),
            ("INSURER_TOKIO_CLIENT_SECRET", "tokio-console-secret"),
            // The silence watch looks every second, so the banner is up in moments.
            ("SILENCE_CHECK_INTERVAL", "1s"),
        ],
    );
    let dispatch = Service::start("dispatch-api", url, &[]);
    let basic = support::seed_both(url);
    let cb = callback_service.base();

    // demo-a's too integration called back every 10 minutes for eight days, and not in the
    // last two hours: the silence watch flags it, and the console shows its banner. Stored
    // first, so the callbacks below are the newest of the log.
    exec(
        url,
        "INSERT INTO proposal.callback_receipts \
             (tenant_id, insurer, integration_id, received_at, body, body_sha256, status) \
         SELECT 'demo-a', 'too', i.id, at, convert_to('{}', 'UTF8'), \
                sha256(convert_to('{}', 'UTF8')), 'processed' \
         FROM proposal.integrations i, \
              generate_series(now() - interval '8 days', now() - interval '2 hours', \
                              interval '10 minutes') at \
         WHERE i.tenant_id = 'demo-a' AND i.insurer = 'too'",
    )
    .await;
    // demo-b's data, which demo-a's administrator must never see.
    exec(
        url,
        "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email, in_queue) \
         VALUES ('demo-b', 'B-SIGILO-7', 'under_analysis', 'sigilo@demo-b.example.com', true)",
    )
    .await;
    let status = callback(
        &cb,
        &support::basic_token(&basic, "demo-b/porto"),
        "demo-b",
        porto("B-SIGILO-7", "APROVADA", "console-b-1", "segredo de demo-b"),
    )
    .await;
    assert_eq!(status, 200);

    // demo-a: proposal 99121 moves twice (a story with history and emails); a callback for a
    // proposal that does not exist yet fails, and the proposal is created afterwards, so the
    // browser's replay applies it. Its `motivo` is markup: the pages must show it as text.
    let demo_a_porto = support::basic_token(&basic, "demo-a/porto");
    for (situacao, protocolo) in [("PENDENTE", "console-a-1"), ("APROVADA", "console-a-2")] {
        let body = porto("99121", situacao, protocolo, "documentos conferidos");
        assert_eq!(callback(&cb, &demo_a_porto, "demo-a", body).await, 200);
    }
    let markup = "<img src=x onerror=alert(1)> renda comprovada";
    let status = callback(
        &cb,
        &demo_a_porto,
        "demo-a",
        porto("NOVA-1", "APROVADA", "console-a-3", markup),
    )
    .await;
    assert_eq!(
        status, 404,
        "a callback for a proposal not created yet fails"
    );
    exec(
        url,
        "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email, in_queue) \
         VALUES ('demo-a', 'NOVA-1', 'under_analysis', 'nova.1@demo-a.example.com', true)",
    )
    .await;

    // A second failed callback whose proposal is created afterwards: the bulk replay's.
    let status = callback(
        &cb,
        &demo_a_porto,
        "demo-a",
        porto("NOVA-2", "APROVADA", "console-a-5", "aprovada"),
    )
    .await;
    assert_eq!(status, 404);
    exec(
        url,
        "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email, in_queue) \
         VALUES ('demo-a', 'NOVA-2', 'under_analysis', 'nova.2@demo-a.example.com', true)",
    )
    .await;

    // demo-a's tokio integration is paused, with three callbacks waiting: 548812 pending then
    // approved, 548813 approved. The browser previews the resume and confirms it.
    exec(
        url,
        "UPDATE proposal.integrations SET paused_at = now() \
         WHERE tenant_id = 'demo-a' AND insurer = 'tokio'",
    )
    .await;
    let demo_a_tokio = support::basic_token(&basic, "demo-a/tokio");
    for (proposal, code, event) in [
        ("548812", 20, "console-t-1"),
        ("548812", 10, "console-t-2"),
        ("548813", 10, "console-t-3"),
    ] {
        assert_eq!(
            tokio_callback(&cb, &demo_a_tokio, proposal, code, event).await,
            202,
            "deferred while paused"
        );
    }

    let flagged = "SELECT count(*) AS n FROM proposal.integration_silences s \
                   JOIN proposal.integrations i ON i.id = s.integration_id \
                   WHERE i.tenant_id = 'demo-a' AND i.insurer = 'too' AND s.cleared_at IS NULL";
    let waited = std::time::Instant::now();
    while count(url, flagged).await == 0 {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(20),
            "the silence watch did not flag too within 20 s:\n{}",
            callback_service.logs()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    // MAIL-1: a proposal whose contact's mailbox the relay refuses; its approval's email
    // ends `failed`, waiting for an operator.
    exec(
        url,
        &format!(
            "INSERT INTO proposal.proposals (tenant_id, proposal_id, status, contact_email, in_queue) \
             VALUES ('demo-a', 'MAIL-1', 'under_analysis', '{REFUSED_MAILBOX}', true)"
        ),
    )
    .await;
    let body = porto("MAIL-1", "APROVADA", "console-a-4", "aprovada");
    assert_eq!(callback(&cb, &demo_a_porto, "demo-a", body).await, 200);
    // The worker has handled every email before the browser looks: sent, or refused.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let settled = count(
            url,
            "SELECT count(*) AS n FROM proposal.email_outbox WHERE status = 'queued'",
        )
        .await
            == 0;
        if settled {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the email worker did not handle the emails in 30 s:\n{}",
            callback_service.logs()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        one_text(
            url,
            "SELECT o.status AS t FROM proposal.email_outbox o \
             JOIN proposal.proposals p ON p.id = o.proposal_id WHERE p.proposal_id = 'MAIL-1'"
        )
        .await,
        "failed"
    );

    // 99121's first callback is 100 days old, past demo-a's retention (90 days): the
    // erasure (`erase-bodies`, what `serve` runs every hour) removes its body.
    let erased_receipt = one_text(
        url,
        "SELECT min(id)::text AS t FROM proposal.callback_receipts \
         WHERE tenant_id = 'demo-a' AND proposal_id = '99121'",
    )
    .await;
    exec(
        url,
        &format!(
            "UPDATE proposal.callback_receipts SET received_at = received_at - interval '100 days' \
             WHERE id = {erased_receipt}"
        ),
    )
    .await;
    let erased: serde_json::Value =
        serde_json::from_str(&run_bin("proposal-callback", url, &["erase-bodies"])).unwrap();
    assert_eq!(erased["erased_bodies"], 1, "{erased}");

    let id_of = |sql: &'static str| async move { one_text(url, sql).await };
    let failed_receipt = id_of(
        "SELECT id::text AS t FROM proposal.callback_receipts \
         WHERE tenant_id = 'demo-a' AND status = 'failed' AND proposal_id = 'NOVA-1'",
    )
    .await;
    let other_receipt =
        id_of("SELECT id::text AS t FROM proposal.callback_receipts WHERE tenant_id = 'demo-b'")
            .await;
    let other_integration = id_of(
        "SELECT id::text AS t FROM proposal.integrations \
         WHERE tenant_id = 'demo-b' AND insurer = 'porto'",
    )
    .await;
    let admin_a = run_bin(
        "proposal-callback",
        url,
        &["token", "--tenant", "demo-a", "--admin"],
    )
    .trim()
    .to_owned();
    let admin_b = run_bin(
        "proposal-callback",
        url,
        &["token", "--tenant", "demo-b", "--admin"],
    )
    .trim()
    .to_owned();
    let dispatch_token = support::dispatch_token(url, "admin");

    let mut node = Command::new("node");
    node.arg(browser_dir().join("console.mjs"))
        .current_dir(browser_dir())
        .env("CHROMIUM", &chromium)
        .env("CALLBACK_URL", &cb)
        .env("DISPATCH_URL", dispatch.base())
        .env("ADMIN_TOKEN_A", &admin_a)
        .env("ADMIN_TOKEN_B", &admin_b)
        .env("DISPATCH_TOKEN", &dispatch_token)
        .env("FAILED_RECEIPT_ID", &failed_receipt)
        .env("FAILED_PROPOSAL", "NOVA-1")
        .env("FAILED_MARKUP", markup)
        .env("STORY_PROPOSAL", "99121")
        .env("OTHER_PROPOSAL", "B-SIGILO-7")
        .env("OTHER_SECRET", "segredo de demo-b")
        .env("OTHER_RECEIPT_ID", &other_receipt)
        .env("OTHER_INTEGRATION_ID", &other_integration)
        .env("SILENT_INSURER", "Too Seguros")
        .env("RESUME_PROPOSAL", "548812")
        .env("BULK_PROPOSAL", "NOVA-2")
        .env("RETRY_PROPOSAL", "MAIL-1")
        .env("ERASED_RECEIPT_ID", &erased_receipt);
    if let Some(dir) = std::env::var_os("SCREENSHOTS_DIR") {
        node.env("SCREENSHOTS_DIR", dir);
    }
    let out = node.output().expect("run node tests/browser/console.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the browser script failed ({}):\n{stdout}\n{}\n--- proposal-callback's log ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        callback_service.logs()
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "the browser script ran no checks:\n{stdout}"
    );

    // What the clicks changed, in the database.
    let active = |insurer: &'static str| async move {
        one_text(
            url,
            &format!(
                "SELECT is_callback_active::text AS t FROM proposal.integrations \
                 WHERE tenant_id = 'demo-a' AND insurer = '{insurer}'"
            ),
        )
        .await
    };
    assert_eq!(active("porto").await, "true", "Register on porto (200)");
    assert_eq!(active("tokio").await, "false", "Register on tokio (503)");
    assert_eq!(
        texts(
            url,
            "SELECT i.insurer || ' ' || a.outcome || ' ' || coalesce(a.insurer_status::text, '-') AS t \
             FROM proposal.registration_attempts a JOIN proposal.integrations i ON i.id = a.integration_id \
             ORDER BY a.id"
        )
        .await,
        ["porto registered 200", "tokio insurer_rejected 503"],
        "one attempt per click, each with its outcome"
    );
    let registrations: Vec<_> = insurer
        .received()
        .into_iter()
        .filter(|r| r.path.ends_with("/envio/v1/inclusaoCadastro"))
        .collect();
    assert_eq!(registrations.len(), 2, "{registrations:?}");
    assert!(
        registrations[0]
            .body
            .contains("\"nomeParceiro\":\"demo-a/porto\""),
        "{registrations:?}"
    );
    assert_eq!(
        one_text(
            url,
            "SELECT status AS t FROM proposal.proposals WHERE tenant_id = 'demo-a' AND proposal_id = 'NOVA-1'"
        )
        .await,
        "approved",
        "the replay applied the failed callback"
    );
    assert_eq!(
        count(
            url,
            &format!(
                "SELECT count(*) AS n FROM proposal.callback_receipts WHERE id = {failed_receipt} AND status = 'processed'"
            )
        )
        .await,
        1
    );
    assert_eq!(
        count(
            url,
            "SELECT count(*) AS n FROM proposal.integrations WHERE tenant_id = 'demo-b' AND is_callback_active"
        )
        .await,
        0,
        "demo-b's integrations untouched"
    );
    // The resume the browser confirmed applied what its preview showed, and ended the pause;
    // porto, paused and resumed in the browser, is not paused either.
    assert_eq!(
        texts(
            url,
            "SELECT proposal_id || ' ' || status AS t FROM proposal.proposals \
             WHERE tenant_id = 'demo-a' AND proposal_id IN ('548812', '548813', 'NOVA-2') \
             ORDER BY proposal_id"
        )
        .await,
        ["548812 approved", "548813 approved", "NOVA-2 approved"],
        "the resume and the bulk replay confirmed in the browser"
    );
    assert_eq!(
        count(
            url,
            "SELECT count(*) AS n FROM proposal.integrations \
             WHERE tenant_id = 'demo-a' AND paused_at IS NOT NULL"
        )
        .await,
        0
    );
    assert_eq!(
        count(
            url,
            "SELECT count(*) AS n FROM proposal.callback_receipts \
             WHERE tenant_id = 'demo-a' AND insurer = 'tokio' AND status = 'processed'"
        )
        .await,
        3
    );
    // The silence's one email to demo-a's operator is queued.
    assert_eq!(
        texts(
            url,
            "SELECT recipient || ' | ' || subject AS t FROM proposal.email_outbox \
             WHERE proposal_id IS NULL"
        )
        .await
        .iter()
        .map(|t| t.split(" desde ").next().unwrap().to_owned())
        .collect::<Vec<_>>(),
        ["operacoes@demo-a.example.com | Too Seguros (Homologação) sem callbacks"]
    );
    // "Reenviar" put the refused email back in the queue, and the relay got it once.
    assert_eq!(
        one_text(
            url,
            "SELECT o.status || ' ' || o.attempts AS t FROM proposal.email_outbox o \
             JOIN proposal.proposals p ON p.id = o.proposal_id WHERE p.proposal_id = 'MAIL-1'"
        )
        .await,
        "sent 2"
    );
    assert_eq!(
        relay
            .messages()
            .iter()
            .filter(|m| m.rcpt == [REFUSED_MAILBOX])
            .count(),
        1
    );
    assert_eq!(
        one_text(
            url,
            &format!(
                "SELECT status || ' ' || octet_length(body) || ' ' || (body_erased_at IS NOT NULL) AS t \
                 FROM proposal.callback_receipts WHERE id = {erased_receipt}"
            )
        )
        .await,
        "processed 0 true",
        "the erased receipt keeps its outcome"
    );
    let logs = callback_service.logs();
    for (what, secret) in [("demo-a's", &admin_a), ("demo-b's", &admin_b)] {
        assert!(
            !logs.contains(secret.as_str()),
            "{what} admin token reached the log"
        );
    }
}

/// The centre manager's page (dispatch-api's `/reports`) in a real browser
/// (`tests/browser/reports.mjs`): signed in with an ADMIN token, its numbers compared with
/// the JSON report of the same ranges, its charts, the offload board, the CSV link, sign-out.
#[tokio::test(flavor = "multi_thread")]
async fn the_managers_page_shows_the_reports_numbers_in_a_real_browser() {
    let chromium = chromium();
    node_ready();

    let db = TestDb::blank().await;
    let url = db.url();
    let dispatch = Service::start("dispatch-api", url, &[]);
    support::seed_dispatch(url);
    let admin = support::dispatch_token(url, "admin");
    let fleet = support::dispatch_token(url, "frota");
    // The ranges the page shows, in the centre's time zone (the service's default), as
    // PostgreSQL computes them: today so far, the last 7 days, and yesterday.
    let instant = |sql: &str| {
        let sql = format!(
            "SELECT to_char(({sql}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS t"
        );
        async move { one_text(url, &sql).await }
    };
    let today = "(now() AT TIME ZONE 'America/Sao_Paulo')::date";
    let midnight =
        |days: i32| format!("(({today} + {days})::timestamp AT TIME ZONE 'America/Sao_Paulo')");
    let now = instant("now()").await;
    let today_from = instant(&midnight(0)).await;
    let (week_from, week_to) = (instant(&midnight(-6)).await, instant(&midnight(1)).await);
    let (day_from, day_to) = (instant(&midnight(-1)).await, instant(&midnight(0)).await);
    let day = one_text(url, &format!("SELECT ({today} - 1)::text AS t")).await;

    let mut node = Command::new("node");
    node.arg(browser_dir().join("reports.mjs"))
        .current_dir(browser_dir())
        .env("CHROMIUM", &chromium)
        .env("DISPATCH_URL", dispatch.base())
        .env("ADMIN_TOKEN", &admin)
        .env("FLEET_TOKEN", &fleet)
        .env("NOW", &now)
        .env("TODAY_FROM", &today_from)
        .env("WEEK_FROM", &week_from)
        .env("WEEK_TO", &week_to)
        .env("DAY", &day)
        .env("DAY_FROM", &day_from)
        .env("DAY_TO", &day_to);
    if let Some(dir) = std::env::var_os("SCREENSHOTS_DIR") {
        node.env("SCREENSHOTS_DIR", dir);
    }
    let out = node.output().expect("run node tests/browser/reports.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the browser script failed ({}):\n{stdout}\n{}\n--- dispatch-api's log ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        dispatch.logs()
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "the browser script ran no checks:\n{stdout}"
    );
    // No token reached the log.
    assert!(
        !dispatch.logs().contains(&admin),
        "the admin token was logged"
    );
}
