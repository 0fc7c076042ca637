//! The pieces of the outbox worker's SMTP conversation (`flow::email_worker`): the message
//! of an outbox row and its headers, the message as DATA carries it, one timed step, and
//! whose trouble a refusal is (the email's or the relay's).

use std::time::Duration;

use lettre::Message;
use lettre::message::header::{ContentType, Header, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::client::AsyncSmtpConnection;
use lettre::transport::smtp::commands::{Data, Mail, Rcpt};
use lettre::transport::smtp::extension::{Extension, MailBodyParameter, MailParameter};

use crate::store::outbox::OutboxRow;

/// The message of an outbox row: text and HTML alternatives (text only for rows queued
/// before emails had an HTML part). lettre encodes the subject (RFC 2047) and the bodies
/// (quoted-printable or base64) so that any UTF-8 text travels intact. `From` is the
/// tenant's sender as it was when the email was queued (`EMAIL_FROM` when it had none);
/// `Reply-To` only when the tenant set one (docs/proposal-callback.md, "The message").
pub(super) fn message(row: &OutboxRow, fallback: &Mailbox) -> Result<Message, String> {
    let to: Mailbox = row
        .recipient
        .parse()
        .map_err(|e| format!("bad recipient address {:?}: {e}", row.recipient))?;
    let sender = row.sender();
    let mut builder = Message::builder().from(sender.from(fallback));
    if let Some(reply_to) = sender.reply_to_mailbox() {
        builder = builder.reply_to(reply_to);
    }
    let builder = builder
        .to(to)
        .subject(&row.subject)
        .message_id(Some(row.message_id.clone()))
        .header(AutoSubmitted)
        .header(AutoResponseSuppress);
    match &row.html_body {
        Some(html) => builder.multipart(MultiPart::alternative_plain_html(
            row.body.clone(),
            html.clone(),
        )),
        None => builder
            .header(ContentType::TEXT_PLAIN)
            .body(row.body.clone()),
    }
    .map_err(|e| format!("cannot build the message: {e}"))
}

/// Declares a header that always carries one value.
macro_rules! fixed_header {
    ($(#[$doc:meta])* $name:ident: $header:literal = $value:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;

        impl Header for $name {
            fn name() -> HeaderName {
                HeaderName::new_from_ascii_str($header)
            }

            fn parse(_: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
                Ok(Self)
            }

            fn display(&self) -> HeaderValue {
                HeaderValue::new(Self::name(), $value.to_owned())
            }
        }
    };
}

fixed_header! {
    /// `Auto-Submitted: auto-generated` (RFC 3834): a machine wrote this message, so an
    /// out-of-office or other automatic reply must not be sent to it (no mail loop).
    AutoSubmitted: "Auto-Submitted" = "auto-generated"
}

fixed_header! {
    /// `X-Auto-Response-Suppress: OOF, AutoReply`: what Microsoft Exchange and Outlook read
    /// instead of `Auto-Submitted` before they send an out-of-office or rule-based reply.
    AutoResponseSuppress: "X-Auto-Response-Suppress" = "OOF, AutoReply"
}

/// How an attempt that did not end sent ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Failure {
    /// The relay, or the way to it, is in trouble (connect, TLS, EHLO, AUTH, the sender
    /// refused, no answer, a broken connection): the email is retried with its backoff, the
    /// session is dropped and the worker waits out the relay's backoff before connecting
    /// again.
    Relay(String),
    /// A 4xx answer about this email (RCPT, DATA, its content): retried with its backoff;
    /// the session goes on with the next email.
    Transient(String),
    /// A 5xx answer about this email, or a message that cannot be built: `failed` for good,
    /// with the relay's text; the session goes on with the next email.
    Permanent(String),
    /// A 5xx answer to RCPT that does not name the sender: the recipient's (`Permanent`),
    /// unless the next email of the session is refused with the same `reply`, which then is
    /// the relay's refusal of the sender (`Relay`).
    RcptRefused { text: String, reply: String },
}

/// How `last_error` (and the console) begins when the relay refuses the sender: at MAIL
/// FROM, or at RCPT (as Postfix's `smtpd_sender_restrictions` do by default).
pub const SENDER_REFUSED: &str = "the relay refuses the sender";

/// A message as DATA carries it, written in one piece: its lines dot-stuffed (RFC 5321
/// 4.5.2: a line starting with `.` gets another) and the end of data (`<CRLF>.<CRLF>`).
/// lettre's `message` writes the end of data apart from the message, and without
/// `TCP_NODELAY` that small write waits for the relay to acknowledge the message, which a
/// relay delays (about 40 ms on Linux) since it has nothing to say before the end: every
/// message paid that wait (bench/mail/README.md).
pub(super) struct Content<'a>(pub(super) &'a str);

impl std::fmt::Display for Content<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for line in self.0.split_inclusive("\r\n") {
            if line.starts_with('.') {
                f.write_str(".")?;
            }
            f.write_str(line)?;
        }
        if !self.0.is_empty() && !self.0.ends_with("\r\n") {
            f.write_str("\r\n")?;
        }
        f.write_str(".\r\n")
    }
}

/// One email over an open session: MAIL, RCPT, DATA and the message, bounded together
/// by `limit` (`SMTP_TIMEOUT`). Ok once the relay has accepted it.
pub(super) async fn transmit(
    conn: &mut AsyncSmtpConnection,
    message: &Message,
    limit: Duration,
) -> Result<(), Failure> {
    let envelope = message.envelope();
    let body = message.formatted();
    let exchange = async {
        let mut options = Vec::new();
        let international = envelope
            .to()
            .iter()
            .any(|a| !AsRef::<str>::as_ref(a).is_ascii())
            || envelope
                .from()
                .is_some_and(|a| !AsRef::<str>::as_ref(a).is_ascii());
        if international {
            if !conn.server_info().supports_feature(Extension::SmtpUtfEight) {
                return Err(Failure::Permanent(
                    "the recipient's address is not ASCII and the relay does not offer \
                     SMTPUTF8"
                        .into(),
                ));
            }
            options.push(MailParameter::SmtpUtfEight);
        }
        if !body.is_ascii() {
            options.push(MailParameter::Body(MailBodyParameter::EightBitMime));
        }
        let sender = envelope.from().map(|a| a.to_string()).unwrap_or_default();
        conn.command(Mail::new(envelope.from().cloned(), options))
            .await
            .map_err(|e| match classify("MAIL FROM", false, e) {
                Failure::Relay(why) if why.contains("permanent error") => {
                    Failure::Relay(format!("{SENDER_REFUSED}: {why}"))
                }
                other => other,
            })?;
        for to in envelope.to() {
            conn.command(Rcpt::new(to.clone(), vec![]))
                .await
                .map_err(|e| classify_rcpt(e, &sender))?;
        }
        conn.command(Data)
            .await
            .map_err(|e| classify("DATA", true, e))?;
        match std::str::from_utf8(&body) {
            Ok(text) => conn.command(Content(text)).await,
            _ => conn.message(&body).await,
        }
        .map_err(|e| classify("message", true, e))?;
        Ok(())
    };
    match tokio::time::timeout(limit, exchange).await {
        Ok(done) => done,
        Err(_) => Err(Failure::Relay(format!(
            "SMTP message (MAIL, RCPT, DATA): no answer within {limit:?}"
        ))),
    }
}

/// Runs `fut`, one step of the conversation, within `limit`; its error says which step.
pub(super) async fn step<T>(
    what: &str,
    limit: Duration,
    fut: impl Future<Output = Result<T, lettre::transport::smtp::Error>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("SMTP {what}: {}", describe(&e))),
        Err(_) => Err(format!("SMTP {what}: no answer within {limit:?}")),
    }
}

/// What an SMTP error says, once: lettre's error for a connection that failed reads
/// "Connection error: <why>", and its cause often says "Connection error" again.
fn describe(e: &lettre::transport::smtp::Error) -> String {
    let text = e.to_string();
    match text.split_once(": ") {
        Some((kind, rest)) if rest.eq_ignore_ascii_case(kind) => kind.to_owned(),
        Some((kind, rest)) if rest.starts_with(&format!("{kind}: ")) => rest.to_owned(),
        _ => text,
    }
}

/// The relay's reply text of a refusal (`5.7.1 <p@x>: Sender address rejected`), without
/// lettre's words around it.
fn reply_text(e: &lettre::transport::smtp::Error) -> String {
    std::error::Error::source(e)
        .map(|s| s.to_string())
        .unwrap_or_default()
}

/// Whether a 5xx reply to RCPT refuses the sender, not the recipient: the enhanced codes
/// 5.1.7 (bad sender's mailbox syntax) and 5.1.8 (bad sender's system address), or 5.7.1
/// (delivery not authorised) whose text names the sender ("Sender address rejected", or the
/// sender's address itself).
fn refuses_the_sender(reply: &str, sender: &str) -> bool {
    let enhanced = reply.split_whitespace().next().unwrap_or("");
    let lower = reply.to_ascii_lowercase();
    match enhanced {
        "5.1.7" | "5.1.8" => true,
        "5.7.1" => {
            lower.contains("sender")
                || (!sender.is_empty() && lower.contains(&sender.to_ascii_lowercase()))
        }
        _ => false,
    }
}

/// A refused RCPT: the sender's refusal is the relay's trouble ([`SENDER_REFUSED`]), a 5xx
/// otherwise the recipient's (unless the session shows otherwise), a 4xx retried.
fn classify_rcpt(e: lettre::transport::smtp::Error, sender: &str) -> Failure {
    let reply = reply_text(&e);
    if e.is_permanent() && refuses_the_sender(&reply, sender) {
        return Failure::Relay(format!("{SENDER_REFUSED}: SMTP RCPT TO: {}", describe(&e)));
    }
    match classify("RCPT TO", true, e) {
        Failure::Permanent(text) => Failure::RcptRefused { text, reply },
        other => other,
    }
}

/// Whose trouble a refused command is: the email's (a 4xx or 5xx reply to its recipient or
/// content) or the relay's (anything else, and 421, "closing the connection", anywhere).
fn classify(what: &str, about_the_email: bool, e: lettre::transport::smtp::Error) -> Failure {
    let text = format!("SMTP {what}: {}", describe(&e));
    let closing = e.status().is_some_and(|c| c.to_string() == "421");
    match (
        about_the_email && !closing,
        e.is_permanent(),
        e.is_transient(),
    ) {
        (true, true, _) => Failure::Permanent(text),
        (true, _, true) => Failure::Transient(text),
        _ => Failure::Relay(text),
    }
}

#[cfg(test)]
mod tests {
    use super::Content;

    #[test]
    fn a_message_is_dot_stuffed_and_ends_with_the_end_of_data() {
        assert_eq!(
            Content("Subject: x\r\n\r\n.a leading dot\r\nplain\r\n..two\r\n").to_string(),
            "Subject: x\r\n\r\n..a leading dot\r\nplain\r\n...two\r\n.\r\n"
        );
        assert_eq!(Content(".\r\nno end").to_string(), "..\r\nno end\r\n.\r\n");
        assert_eq!(Content("").to_string(), ".\r\n");
    }
}
