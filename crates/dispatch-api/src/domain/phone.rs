//! The one phone rule, for the caller's phone in a body and a phone in a path.

use std::fmt;

/// A phone as a client may send it: digits and `+ - ( ) . space`, 8 to 15 digits, at most
/// 32 characters. Holds the text as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phone(String);

/// Why a text is not a [`Phone`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be a phone number: 8 to 15 digits, optionally with + - ( ) . or spaces")]
pub struct NotAPhone;

/// Longest phone accepted, in characters.
pub const MAX_CHARS: usize = 32;

impl Phone {
    pub fn parse(raw: &str) -> Result<Phone, NotAPhone> {
        let allowed = raw
            .chars()
            .all(|c| c.is_ascii_digit() || " +-().".contains(c));
        let digits = raw.chars().filter(char::is_ascii_digit).count();
        if allowed && (8..=15).contains(&digits) && raw.chars().count() <= MAX_CHARS {
            Ok(Phone(raw.to_owned()))
        } else {
            Err(NotAPhone)
        }
    }

    /// The digits alone: how prank calls are matched, whatever the formatting.
    pub fn digits(&self) -> String {
        digits_of(&self.0)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// The digits of any stored phone (stored phones were checked when written).
pub fn digits_of(raw: &str) -> String {
    raw.chars().filter(char::is_ascii_digit).collect()
}

impl fmt::Display for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_of_body_and_path() {
        assert_eq!(
            Phone::parse("+55 (11) 9876-5432").unwrap().digits(),
            "551198765432"
        );
        for bad in ["1234567", "1234567890123456", "12345678a", &"1".repeat(33)] {
            assert_eq!(Phone::parse(bad), Err(NotAPhone), "{bad}");
        }
    }
}
