//! What the log formats write, captured from the subscriber `serve` installs: one event is one
//! line whatever its fields hold, so a line break in an identity or a parameter cannot write
//! a line that reads as another event.

use std::io;
use std::sync::{Arc, Mutex};

use common::config::LogFormat;
use common::telemetry::subscriber;
use serde_json::Value;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// The lines a subscriber writes, kept in memory.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl io::Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Buffer {
    type Writer = Buffer;

    fn make_writer(&'a self) -> Buffer {
        self.clone()
    }
}

/// An error whose text holds a line break, as a driver's might.
#[derive(Debug)]
struct Multiline;

impl std::fmt::Display for Multiline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("disk full\nERROR forged: second line")
    }
}

impl std::error::Error for Multiline {}

/// What an admin's `sub` could hold to forge a line of its own.
const FORGED: &str = "ops\n2026-11-20T17:03:11.000000Z  INFO forged: admin=root signed in";

/// Five events, each with a field holding a line break or another control character.
fn log_hostile_events(format: LogFormat) -> String {
    let buffer = Buffer::default();
    let subscriber = subscriber(format, EnvFilter::new("info"), buffer.clone());
    tracing::subscriber::with_default(subscriber, || {
        let request = tracing::info_span!(
            "request",
            request_id = "r-1",
            path = %"/admin/integrations/7/pause",
        );
        let _in_request = request.enter();
        // How the admin routes log who acted (`admin = %admin.sub`).
        tracing::info!(integration = 7, admin = %FORGED, "integration paused");
        tracing::info!(admin = ?FORGED, tenant = "demo-a\r\nx", "debug and plain strings");
        tracing::warn!(
            "a message\r\nwith\u{0}NUL, \u{1b}[31mcolour\u{1b}[0m, a\u{2028}separator and\ta tab"
        );
        let error: &(dyn std::error::Error + 'static) = &Multiline;
        tracing::error!(error, "it failed");
        let who = tracing::info_span!("who", sub = %"a\nb");
        who.in_scope(|| tracing::info!("inside a span holding one"));
    });
    let bytes = buffer.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

/// `line` without the colour sequences the pretty format adds itself (`ESC [ ... m`).
fn without_colours(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("\u{1b}[") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 2..];
        let end = rest.find('m').map_or(rest.len(), |m| m + 1);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn pretty_logs_write_one_line_per_event_with_control_characters_escaped() {
    let out = log_hostile_events(LogFormat::Pretty);
    let lines: Vec<String> = out.lines().map(without_colours).collect();
    assert_eq!(lines.len(), 5, "one line per event:\n{out}");
    for line in &lines {
        assert!(
            !line.contains(|c: char| c.is_control() || c == '\u{2028}'),
            "a control character reached the line: {line:?}"
        );
        assert!(
            !line.starts_with("2026-11-20T17:03:11"),
            "a forged line: {line}"
        );
        assert!(!line.starts_with("ERROR forged"), "a forged line: {line}");
    }
    assert!(
        lines[0]
            .contains(r"admin=ops\n2026-11-20T17:03:11.000000Z  INFO forged: admin=root signed in"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("integration paused integration=7"),
        "{}",
        lines[0]
    );
    // The request span's fields are on the line, as before.
    assert!(
        lines[0].contains("request{request_id=\"r-1\" path=/admin/integrations/7/pause}"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(
            r#"admin="ops\n2026-11-20T17:03:11.000000Z  INFO forged: admin=root signed in""#
        ) && lines[1].contains(r#"tenant="demo-a\r\nx""#),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(
            r"a message\r\nwith\0NUL, \u{1b}[31mcolour\u{1b}[0m, a\u{2028}separator and\ta tab"
        ),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains(r"error=disk full\nERROR forged: second line"),
        "{}",
        lines[3]
    );
    assert!(lines[4].contains(r"who{sub=a\nb}"), "{}", lines[4]);
}

#[test]
fn json_logs_write_one_line_per_event_with_the_values_intact() {
    let out = log_hostile_events(LogFormat::Json);
    let events: Vec<Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(events.len(), 5, "one line per event:\n{out}");
    assert_eq!(events[0]["admin"], FORGED);
    assert_eq!(events[0]["span"]["request_id"], "r-1");
    assert_eq!(events[1]["tenant"], "demo-a\r\nx");
    assert_eq!(events[3]["error"], "disk full\nERROR forged: second line");
}
