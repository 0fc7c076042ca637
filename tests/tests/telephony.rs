//! The telephone against a real SIP server (docs/dispatch-telephony.md): Debian's Kamailio,
//! started privately with the repository's `deploy/kamailio/kamailio.cfg` on free ports, and
//! SIPp as the softphones and the caller. A softphone registers with the credentials of
//! `GET /phone-credentials` and is refused with expired, forged or another user's; a call to
//! the centre's number rings the registered call taker, Kamailio posts the call's events to
//! dispatch-api with its HTTP client, the `calls` socket tells them, the incident created
//! with the call's id takes its ring time and number; an unanswered call ends abandoned and
//! counts in the report.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use common::test_support::TestDb;
use futures_util::{SinkExt, StreamExt};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio_tungstenite::tungstenite::Message;

use support::{Service, client, dispatch_token, free_port, read, seed_dispatch};

const DOMAIN: &str = "samu.test";
const CENTRE: &str = "192";
const PHONE_SECRET: &str = "telephony-test-phone-secret-0123456789";
const SWITCH_TOKEN: &str = "telephony-test-switch-token-0123456789";
const CALLER: &str = "5511988887777";

/// A process of the test's own (Kamailio, SIPp), its output kept; killed when dropped.
struct Proc {
    name: String,
    child: Child,
    out: Arc<Mutex<String>>,
}

impl Proc {
    fn spawn(name: &str, cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let out = support::drain(&mut child);
        Proc {
            name: name.to_owned(),
            child,
            out,
        }
    }

    fn output(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// Waits for the process to end; its exit code (panics after `within`).
    fn wait(&mut self, within: Duration) -> i32 {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "{} did not end within {within:?}\n{}",
                self.name,
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proc {
    /// SIGTERM first: Kamailio's main process then stops the children it forked (SIGKILL
    /// would leave them running); SIGKILL after 5 s.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Kamailio with the repository's configuration, on `sip_port`, telling dispatch-api at
/// `dispatch` (`host:port`).
fn kamailio(sip_port: u16, dispatch: &str) -> Proc {
    let cfg = repo().join("deploy/kamailio/kamailio.cfg");
    let mut cmd = Command::new("/usr/sbin/kamailio");
    cmd.args(["-DD", "-E", "-f"])
        .arg(&cfg)
        .args(["-l", &format!("udp:127.0.0.1:{sip_port}")])
        .args(["-Y", &std::env::temp_dir().to_string_lossy()])
        .env("SIP_DOMAIN", DOMAIN)
        .env("PHONE_SECRET", PHONE_SECRET)
        .env("CENTRE_NUMBER", CENTRE)
        .env(
            "DISPATCH_EVENTS",
            format!("dispatch=>http://switch:{SWITCH_TOKEN}@{dispatch}/telephony/events"),
        );
    let k = Proc::spawn("kamailio", &mut cmd);
    // Ready when it answers an OPTIONS (SIPp's one-message scenario).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut probe = sipp("options", &options_xml(), sip_port, &[]);
        if probe.wait(Duration::from_secs(10)) == 0 {
            return k;
        }
        assert!(
            Instant::now() < deadline,
            "kamailio did not answer\n{}",
            k.output()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// SIPp running `scenario` (its XML) against Kamailio on `sip_port`, one call, plus `args`.
fn sipp(name: &str, scenario: &str, sip_port: u16, args: &[&str]) -> Proc {
    let dir = std::env::temp_dir().join(format!("telephony-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}-{}.xml", free_port()));
    std::fs::write(&file, scenario).unwrap();
    let mut cmd = Command::new("sipp");
    cmd.arg(format!("127.0.0.1:{sip_port}"))
        .arg("-sf")
        .arg(&file)
        .args(["-m", "1", "-i", "127.0.0.1", "-nostdin", "-timeout", "30s"])
        .args(["-trace_err", "-error_file"])
        .arg(dir.join(format!("{name}-errors.log")))
        .args(args)
        .current_dir(&dir);
    Proc::spawn(name, &mut cmd)
}

fn options_xml() -> String {
    scenario(&format!(
        r#"<send><![CDATA[
OPTIONS sip:{DOMAIN} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:probe@{DOMAIN}>;tag=[pid]probe[call_number]
To: <sip:{DOMAIN}>
Call-ID: [call_id]
CSeq: 1 OPTIONS
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200" timeout="2000"/>"#
    ))
}

fn scenario(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n<scenario name=\"t\">\n{body}\n</scenario>\n"
    )
}

/// A REGISTER of `aor`'s address with `contact_port` as its contact, answered 401, sent again
/// with the credentials (SIPp's `-au`/`-ap`), and the final answer expected: `expect`.
fn register_xml(aor: &str, contact_port: u16, expect: u16) -> String {
    let register = |cseq: u32, auth: &str| {
        format!(
            r#"<send retrans="500"><![CDATA[
REGISTER sip:{DOMAIN} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:{aor}@{DOMAIN}>;tag=[pid]reg[call_number]
To: <sip:{aor}@{DOMAIN}>
Call-ID: [call_id]
CSeq: {cseq} REGISTER
Contact: <sip:{aor}@127.0.0.1:{contact_port}>
{auth}
Max-Forwards: 70
Expires: 3600
Content-Length: 0

]]></send>"#
        )
    };
    scenario(&format!(
        r#"{}
<recv response="401" auth="true"/>
{}
<recv response="{expect}"/>"#,
        register(1, ""),
        register(2, "[authentication]")
    ))
}

const SDP: &str = "v=0
o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000";

/// The call taker's softphone: rings for `ring_ms`, answers, and waits for the caller's BYE;
/// or, `answer` false, rings until the caller gives up (CANCEL).
fn softphone_xml(login: &str, ring_ms: u64, answer: bool) -> String {
    let reply = |code: &str, extra: &str| {
        format!(
            r#"<send><![CDATA[
SIP/2.0 {code}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]uas[call_number]
[last_Call-ID:]
[last_CSeq:]
[last_Record-Route:]
Contact: <sip:{login}@[local_ip]:[local_port]>
{extra}
]]></send>"#
        )
    };
    let body = if answer {
        format!(
            r#"<recv request="INVITE" crlf="true"/>
{}
<pause milliseconds="{ring_ms}"/>
<send retrans="500"><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]uas[call_number]
[last_Call-ID:]
[last_CSeq:]
[last_Record-Route:]
Contact: <sip:{login}@[local_ip]:[local_port]>
Content-Type: application/sdp
Content-Length: [len]

{SDP}
]]></send>
<recv request="ACK" crlf="true"/>
<recv request="BYE"/>
{}"#,
            reply("180 Ringing", "Content-Length: 0\n"),
            reply("200 OK", "Content-Length: 0\n")
        )
    } else {
        format!(
            r#"<recv request="INVITE" crlf="true"/>
{}
<recv request="CANCEL"/>
<send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]uas[call_number]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>
<send><![CDATA[
SIP/2.0 487 Request Terminated
[last_Via:]
[last_From:]
[last_To:];tag=[pid]uas[call_number]
[last_Call-ID:]
CSeq: [cseq] INVITE
Content-Length: 0

]]></send>
<recv request="ACK"/>"#,
            reply("180 Ringing", "Content-Length: 0\n")
        )
    };
    scenario(&body)
}

/// The caller: dials the centre from [`CALLER`]; talks `talk_ms` once answered, then hangs
/// up (BYE); or, `answered` false, hangs up after `talk_ms` of ringing (CANCEL).
fn caller_xml(talk_ms: u64, answered: bool) -> String {
    let invite = format!(
        r#"<send retrans="500"><![CDATA[
INVITE sip:{CENTRE}@{DOMAIN} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:{CALLER}@{DOMAIN}>;tag=[pid]uac[call_number]
To: <sip:{CENTRE}@{DOMAIN}>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:{CALLER}@[local_ip]:[local_port]>
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

{SDP}
]]></send>
<recv response="100" optional="true"/>
<recv response="180"/>"#
    );
    let rest = if answered {
        format!(
            r#"<recv response="200" rrs="true"/>
<send><![CDATA[
ACK [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:{CALLER}@{DOMAIN}>;tag=[pid]uac[call_number]
To: <sip:{CENTRE}@{DOMAIN}>[peer_tag_param]
[routes]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>
<pause milliseconds="{talk_ms}"/>
<send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:{CALLER}@{DOMAIN}>;tag=[pid]uac[call_number]
To: <sip:{CENTRE}@{DOMAIN}>[peer_tag_param]
[routes]
Call-ID: [call_id]
CSeq: 2 BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>"#
        )
    } else {
        format!(
            r#"<pause milliseconds="{talk_ms}"/>
<send><![CDATA[
CANCEL sip:{CENTRE}@{DOMAIN} SIP/2.0
[last_Via:]
From: <sip:{CALLER}@{DOMAIN}>;tag=[pid]uac[call_number]
To: <sip:{CENTRE}@{DOMAIN}>
Call-ID: [call_id]
CSeq: 1 CANCEL
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>
<recv response="487"/>
<send><![CDATA[
ACK sip:{CENTRE}@{DOMAIN} SIP/2.0
[last_Via:]
From: <sip:{CALLER}@{DOMAIN}>;tag=[pid]uac[call_number]
To: <sip:{CENTRE}@{DOMAIN}>[peer_tag_param]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>"#
        )
    };
    scenario(&format!("{invite}\n{rest}"))
}

/// One call to the centre: the call taker's softphone (SIPp on `phone_port`) and the caller.
struct Call {
    phone: Proc,
    caller: Proc,
}

impl Call {
    /// Dials the centre. `ring_ms` of ringing before the softphone answers, then `then_ms` of
    /// talk before the caller hangs up; `ring_ms` 0: nobody answers and the caller gives up
    /// after `then_ms`. The call and its SIP Call-ID (`<name>-1-<caller's pid>`).
    fn dial(
        name: &str,
        sip_port: u16,
        phone_port: u16,
        ring_ms: u64,
        then_ms: u64,
    ) -> (Call, String) {
        let answer = ring_ms > 0;
        let phone = sipp(
            &format!("softphone-{name}"),
            &softphone_xml("tarm", ring_ms, answer),
            sip_port,
            &["-p", &phone_port.to_string()],
        );
        let caller = sipp(
            &format!("caller-{name}"),
            &caller_xml(then_ms, answer),
            sip_port,
            &["-cid_str", &format!("{name}-%u-%p")],
        );
        let call_id = format!("{name}-1-{}", caller.child.id());
        (Call { phone, caller }, call_id)
    }

    /// Both scenarios ran to their end (SIPp exits 0).
    async fn done(self) {
        let Call {
            mut phone,
            mut caller,
        } = self;
        let (c, p) = tokio::task::spawn_blocking(move || {
            let c = caller.wait(Duration::from_secs(20));
            let p = phone.wait(Duration::from_secs(20));
            ((c, caller.output()), (p, phone.output()))
        })
        .await
        .unwrap();
        assert_eq!((c.0, p.0), (0, 0), "the SIPp scenarios: {}\n{}", c.1, p.1);
    }
}

/// `GET url` with `token`: status, content type, JSON body.
async fn get(http: &reqwest::Client, url: String, token: impl AsRef<str>) -> (u16, String, Value) {
    read(
        http.get(url)
            .bearer_auth(token.as_ref())
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The password of `username` under `secret` (the scheme auth_ephemeral checks).
fn password(secret: &str, username: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(username.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// Registers `aor` with `username`/`password`, the softphone at `contact_port`; the exit code
/// of SIPp and its output (0: the final answer was `expect`).
fn register(
    sip_port: u16,
    aor: &str,
    contact_port: u16,
    user: &str,
    pass: &str,
    expect: u16,
) -> (i32, String) {
    let mut p = sipp(
        &format!("register-{aor}-{expect}"),
        &register_xml(aor, contact_port, expect),
        sip_port,
        &["-au", user, "-ap", pass],
    );
    let code = p.wait(Duration::from_secs(20));
    (code, p.output())
}

/// The next text message of the socket (within 10 s), as JSON.
async fn next(ws: &mut support::Socket) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message within 10 s")
            .expect("the socket is open")
            .unwrap();
        if let Message::Text(t) = msg {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_softphone_registers_a_call_rings_is_answered_becomes_an_incident_and_one_is_abandoned() {
    let db = TestDb::blank().await;
    let url = db.url().to_owned();
    tokio::task::spawn_blocking({
        let url = url.clone();
        move || seed_dispatch(&url)
    })
    .await
    .unwrap();
    let dispatch = Service::start(
        "dispatch-api",
        &url,
        &[
            ("PHONE_SECRET", PHONE_SECRET),
            ("SIP_DOMAIN", DOMAIN),
            ("SIP_WS_URL", "wss://sip.samu.test/ws"),
            ("TELEPHONY_TOKEN", SWITCH_TOKEN),
        ],
    );
    let base = dispatch.base();
    let http = client();
    let tarm = dispatch_token(&url, "tarm");
    let regulator = dispatch_token(&url, "regulador");
    let admin = dispatch_token(&url, "admin");
    let frota = dispatch_token(&url, "frota");
    let sip_port = free_port();
    let switch = tokio::task::spawn_blocking({
        let addr = dispatch.addr.clone();
        move || kamailio(sip_port, &addr)
    })
    .await
    .unwrap();

    // The credentials: the token's user's, never the client's; a fleet operator has none.
    let creds = |token: String| get(&http, format!("{base}/phone-credentials"), token);
    let (status, _, mine) = creds(tarm.clone()).await;
    assert_eq!(status, 200, "{mine}");
    let username = mine["username"].as_str().unwrap().to_owned();
    let pass = mine["password"].as_str().unwrap().to_owned();
    assert!(username.ends_with(":tarm"), "{mine}");
    assert_eq!(mine["domain"], DOMAIN);
    assert_eq!(mine["uri"], format!("sip:tarm@{DOMAIN}"));
    assert_eq!(mine["ws_url"], "wss://sip.samu.test/ws");
    assert_eq!(pass, password(PHONE_SECRET, &username), "{mine}");
    let (status, _, refused) = creds(frota).await;
    assert_eq!(status, 403, "{refused}");
    let (_, _, theirs) = creds(regulator.clone()).await;

    // REGISTER: 200 with the credentials; refused expired, forged, or another user's.
    let phone_port = free_port();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expired = format!("{}:tarm", now - 60);
    let forged = format!("{}:tarm", now + 3600);
    let cases = [
        (
            "expired",
            expired.clone(),
            password(PHONE_SECRET, &expired),
            401,
        ),
        (
            "forged",
            forged.clone(),
            password("not-the-secret", &forged),
            401,
        ),
        (
            "another user's",
            theirs["username"].as_str().unwrap().to_owned(),
            theirs["password"].as_str().unwrap().to_owned(),
            403,
        ),
    ];
    for (what, user, pass, expect) in cases {
        let (code, out) = tokio::task::spawn_blocking(move || {
            register(sip_port, "tarm", phone_port, &user, &pass, expect)
        })
        .await
        .unwrap();
        assert_eq!(
            code, 0,
            "{what} credentials were not refused {expect}: {out}"
        );
    }
    let (code, out) = tokio::task::spawn_blocking({
        let (u, p) = (username.clone(), pass.clone());
        move || register(sip_port, "tarm", phone_port, &u, &p, 200)
    })
    .await
    .unwrap();
    assert_eq!(
        code, 0,
        "REGISTER with /phone-credentials' credentials: {out}"
    );

    // The call takers' screen: the `calls` queue, and the call taker's own `mine`.
    let ws_url = format!("ws://{}/ws?access_token={tarm}", dispatch.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
    for queue in ["calls", "mine"] {
        ws.send(Message::text(
            json!({"type": "subscribe", "queue": queue}).to_string(),
        ))
        .await
        .unwrap();
        let answer = next(&mut ws).await;
        assert_eq!(answer["type"], "subscribed", "{answer}");
    }

    // A call: rings 1.5 s, answered, talks 1 s, the caller hangs up.
    let dialled = Instant::now();
    let (answered_call, call_id) = Call::dial("answered", sip_port, phone_port, 1500, 1000);
    let ringing = next(&mut ws).await;
    let to_ringing = dialled.elapsed();
    // From dispatch-api's receipt of the switch's event (the call's `rang_at`, stamped on
    // arrival) to the message read here: the fan-out through NOTIFY and the socket.
    let heard = chrono::Utc::now().timestamp_micros() as f64 / 1e6;
    let event_to_socket = heard - chrono_like(ringing["call"]["rang_at"].as_str().unwrap());
    assert_eq!(ringing["type"], "call.ringing", "{ringing}");
    assert_eq!(ringing["queue"], "calls");
    assert_eq!(ringing["call"]["call_id"], call_id.as_str());
    assert_eq!(ringing["call"]["caller"], CALLER);
    assert_eq!(ringing["call"]["called"], CENTRE);
    assert_eq!(ringing["call"]["prank_calls"], 0);
    let mut answered = Vec::new();
    for _ in 0..2 {
        answered.push(next(&mut ws).await);
    }
    let to_answered = dialled.elapsed();
    let queues: Vec<&str> = answered
        .iter()
        .map(|m| m["queue"].as_str().unwrap())
        .collect();
    assert!(
        queues.contains(&"calls") && queues.contains(&"mine"),
        "{answered:?}"
    );
    for m in &answered {
        assert_eq!(m["type"], "call.answered", "{m}");
        assert_eq!(m["call"]["answered_by"], "tarm");
    }
    let ended = next(&mut ws).await;
    assert_eq!(ended["type"], "call.ended", "{ended}");
    assert_eq!(ended["call"]["outcome"], "answered");
    answered_call.done().await;

    // The call read back, as the switch told it.
    let (status, _, call) = get(&http, format!("{base}/telephony/calls/{call_id}"), &tarm).await;
    assert_eq!(status, 200, "{call}");
    assert_eq!(call, ended["call"]);
    let tarm_id = call["answered_user_id"].as_i64().expect("tarm's id");
    let seconds = |a: &Value, b: &Value| {
        let t = |v: &Value| chrono_like(v.as_str().unwrap());
        t(b) - t(a)
    };
    let ring_to_answer = seconds(&call["rang_at"], &call["answered_at"]);
    assert!(
        (1.4..5.0).contains(&ring_to_answer),
        "rang {} answered {}",
        call["rang_at"],
        call["answered_at"]
    );

    // The incident from the call: its ring time and number, not typed.
    let (status, _, created) = read(
        http.post(format!("{base}/incident"))
            .bearer_auth(&tarm)
            .json(&json!({
                "caller_name": "Maria",
                "address": "Rua A 1",
                "complaint": "dor no peito",
                "call_id": call_id,
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let (status, _, incident) =
        get(&http, format!("{base}/incident/{}", created["id"]), &tarm).await;
    assert_eq!(status, 200, "{incident}");
    let text = incident.to_string();
    assert!(text.contains(CALLER), "{incident}");
    assert!(
        text.contains(&format!("\"call_received_at\":{}", call["rang_at"])),
        "{incident}"
    );

    // An unanswered call: rings 2 s, the caller gives up.
    let (abandoned_call, abandoned_id) = Call::dial("abandoned", sip_port, phone_port, 0, 2000);
    let ringing = next(&mut ws).await;
    assert_eq!(ringing["type"], "call.ringing", "{ringing}");
    let ended = next(&mut ws).await;
    assert_eq!(ended["type"], "call.ended", "{ended}");
    assert_eq!(ended["call"]["call_id"], abandoned_id.as_str());
    assert_eq!(ended["call"]["outcome"], "abandoned");
    abandoned_call.done().await;

    // The report: two calls, one abandoned, the answered one's ring-to-answer time.
    let (status, _, report) = get(&http, format!("{base}/reports/response-times"), &admin).await;
    assert_eq!(status, 200, "{report}");
    let phone = &report["telephone"]["all"];
    assert_eq!(phone["calls"], 2, "{phone}");
    assert_eq!(phone["abandoned"], 1, "{phone}");
    assert_eq!(phone["abandoned_share"], 0.5, "{phone}");
    let p50 = phone["ring_to_answer"]["p50_seconds"].as_f64().unwrap();
    assert!(
        (p50 - ring_to_answer).abs() < 0.001,
        "{p50} {ring_to_answer}"
    );
    assert_eq!(phone["ring_to_answer"]["within_target"], 1, "{phone}");
    let _ = (regulator, tarm_id);
    drop(switch);

    // The closing note's figures.
    eprintln!(
        "telephony: dial -> call.ringing on the socket {to_ringing:?} (of which the event's \
         arrival at dispatch-api -> the socket {:.1} ms); dial -> call.answered {to_answered:?} \
         (1.5 s of ringing)",
        event_to_socket * 1000.0
    );
}

/// Seconds since the epoch of an RFC 3339 time.
fn chrono_like(s: &str) -> f64 {
    let t: chrono::DateTime<chrono::Utc> = s.parse().unwrap();
    t.timestamp_micros() as f64 / 1e6
}
