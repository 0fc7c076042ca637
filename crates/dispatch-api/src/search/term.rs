//! What a mask term asks for, decided by its shape: an incident number, a phone (the rule of
//! `domain::phone`), the start of one, or words; and the LIKE patterns of a folded term.

use crate::domain::phone::{HOME_COUNTRY_CODE, digits_of, is_phone_like};

/// What a mask term asks for, decided by its shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaskTerm {
    /// A complete incident number (`<year>-<six digits or more>`): that incident, any age.
    Number(String),
    /// A complete phone (10 digits or more, a leading home country code dropped): every
    /// incident called from it, any age.
    Phone(String),
    /// Fewer digits: incidents in the scope whose phone starts with them.
    PhonePrefix(String),
    /// Anything else: words of the number, names, phone and address, in the scope; the
    /// LIKE patterns of the folded term.
    Text(TextPatterns),
}

/// LIKE patterns of a folded term, wildcards escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextPatterns {
    /// The term anywhere.
    pub infix: String,
    /// The text starts with the term.
    pub prefix: String,
    /// A word (after a space) starts with the term.
    pub word_prefix: String,
}

impl MaskTerm {
    /// The shape of a folded, trimmed, non-empty term.
    pub fn of(term: &str) -> MaskTerm {
        match number_digits(term) {
            // Incident numbers are `<year>-<sequence>`, the sequence at least six digits.
            Some(n) if n >= 6 => return MaskTerm::Number(term.to_owned()),
            // The start of a number (`2026-`, `2026-0001`): the number is a word of the text.
            Some(_) => return MaskTerm::Text(TextPatterns::of(term)),
            None => {}
        }
        let phone_like = is_phone_like(term);
        let mut digits = digits_of(term);
        if !phone_like || digits.is_empty() {
            return MaskTerm::Text(TextPatterns::of(term));
        }
        // The home country's calling code (`domain::phone`), typed with its `+` or before a
        // complete national number (10 or 11 digits), is not part of the number.
        let home = HOME_COUNTRY_CODE.to_string();
        let national_after_code = (10..=11).contains(&(digits.len().saturating_sub(home.len())));
        if term.starts_with(&format!("+{home}"))
            || (national_after_code && digits.starts_with(&home))
        {
            digits.drain(..home.len());
        }
        match digits.len() {
            0 => MaskTerm::Text(TextPatterns::of(term)),
            1..10 => MaskTerm::PhonePrefix(digits),
            _ => MaskTerm::Phone(digits),
        }
    }
}

/// `Some(digits after the dash)` when the term is shaped as an incident number or its
/// start: a year (19xx or 20xx), a dash, digits.
fn number_digits(term: &str) -> Option<usize> {
    let (year, sequence) = term.split_once('-')?;
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    (year.len() == 4 && (year.starts_with("19") || year.starts_with("20")))
        .then_some(())
        .filter(|()| digits(year) && digits(sequence))
        .map(|()| sequence.len())
}

/// A folded term as LIKE matches it literally: its wildcards (`%`, `_`) and the escape
/// character itself escaped with `\`.
pub fn like_escape(folded: &str) -> String {
    folded
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

impl TextPatterns {
    pub fn of(folded: &str) -> TextPatterns {
        let escaped = like_escape(folded);
        TextPatterns {
            infix: format!("%{escaped}%"),
            prefix: format!("{escaped}%"),
            word_prefix: format!("% {escaped}%"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_terms_by_shape() {
        use MaskTerm::*;
        let phone = |d: &str| Phone(d.to_owned());
        for (term, expected) in [
            ("2026-000123", Number("2026-000123".into())),
            ("2026-1193375", Number("2026-1193375".into())),
            ("(12) 99100-4321", phone("12991004321")),
            ("+55 12 99100-4321", phone("12991004321")),
            ("5512991004321", phone("12991004321")),
            ("551299100432", phone("1299100432")),
            ("1299100432", phone("1299100432")),
            ("4897419", PhonePrefix("4897419".into())),
            ("+55 (12", PhonePrefix("12".into())),
            ("55", PhonePrefix("55".into())),
        ] {
            assert_eq!(MaskTerm::of(term), expected, "{term}");
        }
        for text in [
            "2026-0001",
            "2026-",
            "rua 10",
            "+",
            "+55",
            "silva",
            "9910-4321a",
        ] {
            assert!(matches!(MaskTerm::of(text), Text(_)), "{text}");
        }
    }
}
