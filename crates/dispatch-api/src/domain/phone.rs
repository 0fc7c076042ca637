//! The one phone rule, for the caller's phone in a body and a phone in a path: a phone is
//! read once, with libphonenumber's rules (the `phonenumber` crate, default region Brazil),
//! so `+55 12 99100-4321`, `(12) 99100-4321`, `012 99100-4321` and `12991004321` are one
//! caller (docs/dispatch-routes.md, "Phone numbers").

use std::fmt;

use phonenumber::country;

/// A phone as a client may send it: digits and `+ - ( ) . space`, 8 to 15 digits, at most
/// 32 characters, that libphonenumber reads as a number (a `+` must be followed by a known
/// country code). Keeps the text as sent and the number it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phone {
    raw: String,
    /// The country calling code (55 for Brazil).
    country_code: u16,
    /// The national significant number, leading zeros included: area code and number.
    national: String,
}

/// Why a text is not a [`Phone`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be a phone number: 8 to 15 digits, optionally with + - ( ) . or spaces")]
pub struct NotAPhone;

/// Longest phone accepted, in characters.
pub const MAX_CHARS: usize = 32;

/// Brazil's country calling code: numbers without a `+` are read as Brazilian.
pub const HOME_COUNTRY_CODE: u16 = 55;

/// Whether `raw` is written only as a phone is: digits and the punctuation people type
/// around them (` +-().`). The search reads a term written so as a phone number.
pub fn is_phone_like(raw: &str) -> bool {
    raw.chars()
        .all(|c| c.is_ascii_digit() || " +-().".contains(c))
}

impl Phone {
    pub fn parse(raw: &str) -> Result<Phone, NotAPhone> {
        let allowed = is_phone_like(raw);
        let digits = raw.chars().filter(char::is_ascii_digit).count();
        if !(allowed && (8..=15).contains(&digits) && raw.chars().count() <= MAX_CHARS) {
            return Err(NotAPhone);
        }
        let number = phonenumber::parse(Some(country::Id::BR), raw).map_err(|_| NotAPhone)?;
        let national = number.national();
        let zeros = "0".repeat(usize::from(national.zeros()));
        Ok(Phone {
            raw: raw.to_owned(),
            country_code: number.code().value(),
            national: format!("{zeros}{}", national.value()),
        })
    }

    /// The national significant number's digits (area code and number, no country code, no
    /// trunk prefix): `12991004321` for every spelling of `(12) 99100-4321`. What a person
    /// types to find a phone, so a search can match phone terms on it.
    pub fn national_digits(&self) -> &str {
        &self.national
    }

    /// The stored identity of the phone, the same for every spelling of one number: the
    /// national digits for a Brazilian number, `+<country code><national digits>` for any
    /// other (so a foreign number never equals a Brazilian one).
    pub fn key(&self) -> String {
        if self.country_code == HOME_COUNTRY_CODE {
            self.national.clone()
        } else {
            format!("+{}{}", self.country_code, self.national)
        }
    }

    /// The text as it was sent.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    pub fn into_string(self) -> String {
        self.raw
    }
}

/// The key of a stored phone (see [`Phone::key`]). Stored phones passed [`Phone::parse`]
/// when written; one written under an older rule that no longer reads as a number keys by
/// its digits.
pub fn key_of(raw: &str) -> String {
    Phone::parse(raw).map_or_else(|_| digits_of(raw), |p| p.key())
}

/// The digits of a text, in order.
pub fn digits_of(raw: &str) -> String {
    raw.chars().filter(char::is_ascii_digit).collect()
}

impl fmt::Display for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_of_body_and_path() {
        let p = Phone::parse("+55 (11) 9876-5432").unwrap();
        assert_eq!(p.national_digits(), "1198765432");
        assert_eq!(p.as_str(), "+55 (11) 9876-5432");
        for bad in [
            "1234567",
            "1234567890123456",
            "12345678a",
            &"1".repeat(33),
            // A `+` needs a country code that exists.
            "+999 1234 5678",
        ] {
            assert_eq!(Phone::parse(bad), Err(NotAPhone), "{bad}");
        }
    }

    #[test]
    fn every_spelling_of_one_caller_is_one_key() {
        let spellings = [
            "+55 12 99100-4321",
            "(12) 99100-4321",
            "12991004321",
            "+55 (12) 99100-4321",
            "12 99100 4321",
            // The trunk prefix of a long-distance call, and the country code without `+`.
            "012 99100-4321",
            "55 12 99100-4321",
        ];
        for s in spellings {
            let p = Phone::parse(s).unwrap_or_else(|_| panic!("{s}"));
            assert_eq!(p.key(), "12991004321", "{s}");
            assert_eq!(p.national_digits(), "12991004321", "{s}");
            assert_eq!(key_of(s), "12991004321", "{s}");
        }
    }

    #[test]
    fn a_foreign_number_keeps_its_country() {
        let p = Phone::parse("+1 617 542 3789").unwrap();
        assert_eq!(p.national_digits(), "6175423789");
        assert_eq!(p.key(), "+16175423789");
        // The same digits read as a Brazilian number are another caller.
        assert_ne!(Phone::parse("(61) 7542-3789").unwrap().key(), p.key());
    }

    #[test]
    fn a_landline_and_a_number_without_area_code() {
        assert_eq!(Phone::parse("12 3456-7890").unwrap().key(), "1234567890");
        assert_eq!(Phone::parse("3456-7890").unwrap().key(), "34567890");
    }
}
