//! Folding: how a name and a typed term become one comparison key, the same way in memory
//! and in SQL (`search_key()` in the migrations), so "sao jose" finds "São José" everywhere
//! (docs/dispatch-routes.md, "Search").

use unicode_normalization::UnicodeNormalization;

/// The combining marks folding removes (after NFKD they carry every accent): Combining
/// Diacritical Marks, their Extended and Supplement blocks, those for Symbols, and Half
/// Marks. The SQL fold (`search_key()`) removes the same ranges.
pub const COMBINING_MARKS: [(char, char); 5] = [
    ('\u{0300}', '\u{036F}'),
    ('\u{1AB0}', '\u{1AFF}'),
    ('\u{1DC0}', '\u{1DFF}'),
    ('\u{20D0}', '\u{20FF}'),
    ('\u{FE20}', '\u{FE2F}'),
];

/// Folds to the comparison key, exactly as `search_key()` does in SQL: compatibility
/// decomposition (NFKD: "ﬁ" -> "fi", fullwidth "Ｓ" -> "S", "ã" -> "a" + U+0303), the combining
/// marks above removed, lower case, then the letters that have no decomposition spelt out
/// ("ß" -> "ss", "æ" -> "ae", "ø" -> "o"...; docs/dispatch-routes.md, "Search").
pub fn fold(s: &str) -> String {
    // ASCII decomposes to itself and has no marks: only the case changes.
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.nfkd().filter(|c| !is_combining_mark(*c)) {
        for lower in c.to_lowercase() {
            match lower {
                'ß' => out.push_str("ss"),
                'æ' => out.push_str("ae"),
                'œ' => out.push_str("oe"),
                'þ' => out.push_str("th"),
                other => out.push(spelt_out(other)),
            }
        }
    }
    out
}

fn is_combining_mark(c: char) -> bool {
    COMBINING_MARKS
        .iter()
        .any(|(first, last)| (*first..=*last).contains(&c))
}

/// One letter for another, as the SQL fold's `translate()`: letters with a stroke or other
/// mark that Unicode does not decompose, and the final sigma (PostgreSQL's lower case of
/// "Σ" at the end of a word is "ς", Rust's is "σ").
fn spelt_out(c: char) -> char {
    match c {
        'ø' => 'o',
        'ł' => 'l',
        'đ' | 'ð' => 'd',
        'ħ' => 'h',
        'ı' => 'i',
        'ŧ' => 't',
        'ς' => 'σ',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_folds_to_its_lower_case() {
        let ascii: String = (0..=127u8).map(char::from).collect();
        let mut slow = String::new();
        for c in ascii.nfkd().filter(|c| !is_combining_mark(*c)) {
            slow.extend(c.to_lowercase().map(spelt_out));
        }
        assert_eq!(fold(&ascii), slow);
        assert_eq!(fold(&ascii), ascii.to_ascii_lowercase());
    }

    #[test]
    fn folding_drops_case_and_accents() {
        assert_eq!(fold("São José dos Campos"), "sao jose dos campos");
        assert_eq!(fold("AÇÚCAR Ômega"), "acucar omega");
        // Decomposed accents, compatibility forms, letters without a decomposition.
        assert_eq!(fold("Sa\u{0303}o JOSE\u{0301}"), "sao jose");
        assert_eq!(fold("Ｓãｏ ﬁm"), "sao fim");
        assert_eq!(fold("Straße Œuvre Łódź ΟΔΟΣ"), "strasse oeuvre lodz οδοσ");
    }
}
