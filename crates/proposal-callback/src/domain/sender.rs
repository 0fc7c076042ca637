//! Who a tenant's emails come from (docs/proposal-callback.md, "Email"): the From name and
//! address of its customers' (and operator's) emails, and a Reply-To only when the tenant sets
//! one. A tenant without an address of its own sends from the process's `EMAIL_FROM`.
//!
//! Only [`Sender::new`] makes one, so every sender that reaches a message was validated.

use lettre::Address;
use lettre::message::Mailbox;

/// The longest address kept (RFC 5321's path limit).
pub const MAX_ADDRESS_CHARS: usize = 254;
/// The longest display name kept.
pub const MAX_NAME_CHARS: usize = 100;

/// A tenant's sender, validated: an address (with a name, or none) and a Reply-To, or none.
/// All none: the process's `EMAIL_FROM`, no Reply-To.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sender {
    from_name: Option<String>,
    from_address: Option<String>,
    reply_to: Option<String>,
}

/// A refused value: the field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSender {
    pub field: &'static str,
    pub why: String,
}

impl BadSender {
    fn new(field: &'static str, why: impl Into<String>) -> Self {
        Self {
            field,
            why: why.into(),
        }
    }
}

/// An address as a sender's may be: `local@domain.tld`, ASCII (a relay without SMTPUTF8
/// would refuse every email of the tenant), the domain fully qualified (receiving systems
/// score a domain without a dot as spam, or refuse it), at most 254 characters.
fn address(field: &'static str, raw: &str) -> Result<String, BadSender> {
    let raw = raw.trim();
    if raw.chars().count() > MAX_ADDRESS_CHARS {
        return Err(BadSender::new(field, "is longer than 254 characters"));
    }
    let parsed: Address = raw.parse().map_err(|_| {
        BadSender::new(
            field,
            "is not an email address (propostas@imobiliaria.com.br; the name goes in from_name)",
        )
    })?;
    if !raw.is_ascii() {
        return Err(BadSender::new(
            field,
            "must be ASCII (a relay without SMTPUTF8 refuses any other)",
        ));
    }
    let domain = parsed.domain();
    if !domain.contains('.') || domain.starts_with('.') || domain.ends_with('.') {
        return Err(BadSender::new(
            field,
            format!("{domain:?} is not a fully qualified domain name (imobiliaria.com.br)"),
        ));
    }
    Ok(parsed.to_string())
}

impl Sender {
    /// Validates a sender as an admin sets it: a name needs an address; each value trimmed.
    pub fn new(
        from_name: Option<&str>,
        from_address: Option<&str>,
        reply_to: Option<&str>,
    ) -> Result<Self, BadSender> {
        let from_address = from_address
            .map(|a| address("from_address", a))
            .transpose()?;
        let from_name = match from_name.map(str::trim) {
            None => None,
            Some("") => return Err(BadSender::new("from_name", "is empty (null: no name)")),
            Some(n) if n.chars().count() > MAX_NAME_CHARS => {
                return Err(BadSender::new(
                    "from_name",
                    format!("is longer than {MAX_NAME_CHARS} characters"),
                ));
            }
            Some(n) if n.chars().any(char::is_control) => {
                return Err(BadSender::new(
                    "from_name",
                    "has a control character (a line break, a tab)",
                ));
            }
            Some(n) => Some(n.to_owned()),
        };
        if from_name.is_some() && from_address.is_none() {
            return Err(BadSender::new(
                "from_address",
                "is required with from_name (whose address would the name be?)",
            ));
        }
        let reply_to = reply_to.map(|a| address("reply_to", a)).transpose()?;
        Ok(Self {
            from_name,
            from_address,
            reply_to,
        })
    }

    /// As stored (columns validated when they were written); None for values that no longer
    /// pass, which then fall back like none.
    pub fn stored(
        from_name: Option<&str>,
        from_address: Option<&str>,
        reply_to: Option<&str>,
    ) -> Self {
        Self::new(from_name, from_address, reply_to).unwrap_or_default()
    }

    pub fn from_name(&self) -> Option<&str> {
        self.from_name.as_deref()
    }

    pub fn from_address(&self) -> Option<&str> {
        self.from_address.as_deref()
    }

    pub fn reply_to(&self) -> Option<&str> {
        self.reply_to.as_deref()
    }

    /// The tenant's own `From`, if it set one.
    pub fn own_from(&self) -> Option<Mailbox> {
        let address = self.from_address.as_deref()?.parse::<Address>().ok()?;
        Some(Mailbox::new(self.from_name.clone(), address))
    }

    /// The `From` of the tenant's emails: its own, or `fallback` (`EMAIL_FROM`).
    pub fn from(&self, fallback: &Mailbox) -> Mailbox {
        self.own_from().unwrap_or_else(|| fallback.clone())
    }

    /// The `Reply-To`, only when the tenant set one.
    pub fn reply_to_mailbox(&self) -> Option<Mailbox> {
        let address = self.reply_to.as_deref()?.parse::<Address>().ok()?;
        Some(Mailbox::new(None, address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fallback() -> Mailbox {
        "Propostas <propostas@fallback.example.com>"
            .parse()
            .unwrap()
    }

    #[test]
    fn a_tenants_own_sender_or_the_fallback() {
        let s = Sender::new(
            Some(" Imobiliária Demo B "),
            Some(" propostas@demo-b.example.com"),
            Some("atendimento@demo-b.example.com"),
        )
        .unwrap();
        assert_eq!(
            s.from(&fallback()).to_string(),
            "Imobiliária Demo B <propostas@demo-b.example.com>"
        );
        assert_eq!(
            s.reply_to_mailbox().unwrap().to_string(),
            "atendimento@demo-b.example.com"
        );
        let none = Sender::new(None, None, None).unwrap();
        assert_eq!(none.from(&fallback()), fallback());
        assert_eq!(none.reply_to_mailbox(), None);
        let bare = Sender::new(None, Some("p@a.example.com"), None).unwrap();
        assert_eq!(bare.from(&fallback()).to_string(), "p@a.example.com");
    }

    #[test]
    fn bad_values_name_their_field() {
        let field = |n: Option<&str>, a: Option<&str>, r: Option<&str>| {
            Sender::new(n, a, r).unwrap_err().field
        };
        let long = format!("{}@example.com", "a".repeat(250));
        for bad in [
            "",
            "propostas",
            "propostas@",
            "Nome <p@example.com>",
            "p@localhost",
            "p@example.com\r\nBcc: x@y.z",
            "pé@example.com",
            long.as_str(),
        ] {
            assert_eq!(field(None, Some(bad), None), "from_address", "{bad:?}");
            assert_eq!(
                field(None, Some("p@example.com"), Some(bad)),
                "reply_to",
                "{bad:?}"
            );
        }
        let long_name = "n".repeat(101);
        for bad in ["", "  ", "A\r\nBcc: x@y.z", "A\tB", long_name.as_str()] {
            assert_eq!(
                field(Some(bad), Some("p@example.com"), None),
                "from_name",
                "{bad:?}"
            );
        }
        assert_eq!(field(Some("Nome"), None, None), "from_address");
    }
}
