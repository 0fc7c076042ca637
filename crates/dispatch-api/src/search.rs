//! Search terms: how a typed term is checked, folded and matched, the same way in memory and
//! in SQL (`search_key()` in the migrations), so "sao jose" finds "São José" everywhere, and
//! how the incident search (`/incident/mask`) reads its term and bounds its scope.

use chrono::{DateTime, Duration, Utc};
use common::Problem;
use common::problem::FieldError;
use serde::Deserialize;
use unicode_normalization::UnicodeNormalization;
use utoipa::IntoParams;

use crate::domain::incident::State;

/// Longest accepted search term, in characters. Longer is 400: no name is that long, and
/// the cap bounds the work of one request.
pub const MAX_TERM_CHARS: usize = 100;
/// A search returns at most 20 items (docs/dispatch-routes.md, "Routes").
pub const MAX_LIMIT: i64 = 20;
/// Deepest `offset` accepted; lazy-loading lists never scroll that far.
pub const MAX_OFFSET: i64 = 10_000;

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

/// `?q=&limit=&offset=` of every search route except `/employee/search`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    /// Part of the name, any case, accents optional; at most 100 characters.
    pub q: Option<String>,
    /// 1..20, default 20.
    pub limit: Option<i64>,
    /// >= 0, default 0.
    pub offset: Option<i64>,
}

/// A checked search: `term` is folded and trimmed, `None` lists everything in name order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    pub term: Option<String>,
    pub limit: i64,
    pub offset: i64,
}

impl SearchParams {
    pub fn check(self) -> Result<Search, Problem> {
        Search::new("q", self.q, self.limit, self.offset)
    }
}

impl Search {
    pub fn new(
        term_name: &str,
        term: Option<String>,
        limit: Option<i64>,
        offset: Option<i64>,
    ) -> Result<Self, Problem> {
        let term = match term {
            Some(t) if t.chars().count() > MAX_TERM_CHARS => {
                return Err(Problem::invalid_parameter(
                    term_name,
                    format!("must be at most {MAX_TERM_CHARS} characters"),
                ));
            }
            // A NUL cannot reach PostgreSQL's text at all, and no name has control characters.
            Some(t) if t.chars().any(char::is_control) => {
                return Err(Problem::invalid_parameter(
                    term_name,
                    "must not contain control characters",
                ));
            }
            Some(t) => Some(fold(t.trim())).filter(|t| !t.is_empty()),
            None => None,
        };
        let limit = limit.unwrap_or(MAX_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(Problem::invalid_parameter(
                "limit",
                format!("must be between 1 and {MAX_LIMIT}"),
            ));
        }
        let offset = offset.unwrap_or(0);
        if !(0..=MAX_OFFSET).contains(&offset) {
            return Err(Problem::invalid_parameter(
                "offset",
                format!("must be between 0 and {MAX_OFFSET}"),
            ));
        }
        Ok(Self {
            term,
            limit,
            offset,
        })
    }

    /// LIKE patterns of the term (infix, prefix), wildcards in the term escaped.
    pub fn like_patterns(&self) -> Option<(String, String)> {
        self.term.as_ref().map(|t| {
            let escaped = t
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            (format!("%{escaped}%"), format!("{escaped}%"))
        })
    }
}

/// How far back `/incident/mask` looks by default: open incidents of any age, and the others
/// created in the last 7 days (docs/dispatch-routes.md, "Incident search").
pub const RECENT_DAYS: i64 = 7;
/// The longest `since`..`until` window one request may ask for.
pub const MAX_WINDOW_DAYS: i64 = 31;

/// `GET /incident/mask`'s parameters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MaskParams {
    /// Part of the number, caller's or patient's name, phone or address, any case, accents
    /// optional; at most 100 characters. A complete incident number (`2026-000123`) or phone
    /// (10 or 11 digits, `+55` optional) finds its incidents of any age.
    pub q: Option<String>,
    /// 1..20, default 20.
    pub limit: Option<i64>,
    /// >= 0, default 0.
    pub offset: Option<i64>,
    /// Only incidents in these states: repeated (`state=a&state=b`) or comma-separated.
    #[param(value_type = Option<Vec<State>>, style = Form, explode = true)]
    pub state: Option<String>,
    /// `true`: only incidents assigned to the caller (its regulator or the person it was
    /// transferred to). The caller is the token's user.
    pub mine: Option<bool>,
    /// Created at or after this moment (RFC 3339). With `since` or `until` the search covers
    /// exactly that window, any state, instead of the default scope. Default: `until` minus
    /// 7 days.
    pub since: Option<DateTime<Utc>>,
    /// Created before this moment (RFC 3339). Default: now. `until - since` is at most 31
    /// days (400 naming both beyond).
    pub until: Option<DateTime<Utc>>,
}

/// Which incidents a mask search looks at (identifiers excepted: they reach any age).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The default: open incidents of any age, and every incident created since `since`.
    Recent { since: DateTime<Utc> },
    /// Incidents created in `[since, until)`, whatever their state.
    Between {
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    },
}

/// What a mask term asks for, decided by its shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaskTerm {
    /// A complete incident number (`<year>-<six digits or more>`): that incident, any age.
    Number(String),
    /// A complete phone (10 digits or more, a leading 55 country code dropped): every
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

/// A checked mask search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    pub term: Option<MaskTerm>,
    /// `None`: every state.
    pub states: Option<Vec<State>>,
    pub mine: bool,
    pub scope: Scope,
    pub limit: i64,
    pub offset: i64,
}

impl MaskParams {
    /// Checks every parameter (400 naming it); `now` anchors the default scope.
    pub fn check(self, now: DateTime<Utc>) -> Result<Mask, Problem> {
        let page = Search::new("q", self.q, self.limit, self.offset)?;
        let states = self.state.as_deref().map(parse_states).transpose()?;
        let scope = match (self.since, self.until) {
            (None, None) => Scope::Recent {
                since: now - Duration::days(RECENT_DAYS),
            },
            (since, until) => {
                let until = until.unwrap_or(now);
                let since = since.unwrap_or(until - Duration::days(RECENT_DAYS));
                if since >= until {
                    return Err(window_problem("`since` must be before `until`"));
                }
                if until - since > Duration::days(MAX_WINDOW_DAYS) {
                    return Err(window_problem(&format!(
                        "the window from `since` to `until` (default: now) must be at most \
                         {MAX_WINDOW_DAYS} days"
                    )));
                }
                Scope::Between { since, until }
            }
        };
        Ok(Mask {
            term: page.term.as_deref().map(MaskTerm::of),
            states,
            mine: self.mine.unwrap_or(false),
            scope,
            limit: page.limit,
            offset: page.offset,
        })
    }
}

/// 400 naming both ends of the window.
fn window_problem(message: &str) -> Problem {
    Problem::new(
        actix_web::http::StatusCode::BAD_REQUEST,
        "invalid_parameter",
        format!("parameters `since`, `until`: {message}"),
    )
    .with_errors(
        ["since", "until"]
            .into_iter()
            .map(|field| FieldError {
                field: field.into(),
                message: message.into(),
            })
            .collect(),
    )
}

/// `registering,awaiting_regulation`: each a known state (400 naming the unknown one).
fn parse_states(list: &str) -> Result<Vec<State>, Problem> {
    let mut states = Vec::new();
    for name in list.split(',').map(str::trim) {
        let state = State::parse(name).ok_or_else(|| {
            let known: Vec<&str> = State::ALL.iter().map(|s| s.as_str()).collect();
            Problem::invalid_parameter(
                "state",
                format!("`{name}` is not a state (one of: {})", known.join(", ")),
            )
        })?;
        if !states.contains(&state) {
            states.push(state);
        }
    }
    Ok(states)
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
        let phone_like = term
            .chars()
            .all(|c| c.is_ascii_digit() || " +-().".contains(c));
        let mut digits: String = term.chars().filter(char::is_ascii_digit).collect();
        if !phone_like || digits.is_empty() {
            return MaskTerm::Text(TextPatterns::of(term));
        }
        if term.starts_with("+55")
            || ((12..=13).contains(&digits.len()) && digits.starts_with("55"))
        {
            digits.drain(..2);
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

impl TextPatterns {
    pub fn of(folded: &str) -> TextPatterns {
        let escaped = folded
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        TextPatterns {
            infix: format!("%{escaped}%"),
            prefix: format!("{escaped}%"),
            word_prefix: format!("% {escaped}%"),
        }
    }
}

/// An in-memory list searchable by name, the way pg_trgm indexes it: entries kept in
/// (folded name, name) order, plus a posting list of entry positions for every byte
/// trigram of the folded names. The names starting with a term are one run of that order,
/// found by binary search; for the names containing it, a term of three bytes or more only
/// checks the entries of its rarest trigram (a few dozen, not 7,458), shorter terms scan.
pub struct NameIndex<T> {
    entries: Vec<(String, T)>,
    /// Every trigram of the folded names, ascending, each once.
    trigrams: Vec<u32>,
    /// The positions of the entries holding `trigrams[i]`, ascending, are
    /// `positions[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    positions: Vec<u32>,
}

/// The byte trigrams of a folded name, each as a number.
fn trigrams(key: &[u8]) -> impl Iterator<Item = u32> + '_ {
    key.windows(3)
        .map(|w| u32::from_be_bytes([0, w[0], w[1], w[2]]))
}

impl<T> NameIndex<T> {
    pub fn new(items: Vec<T>, name: impl Fn(&T) -> &str) -> Self {
        let mut entries: Vec<(String, T)> =
            items.into_iter().map(|i| (fold(name(&i)), i)).collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| name(&a.1).cmp(name(&b.1))));
        // (trigram, position) of every entry, sorted and without repeats: the posting lists
        // one after the other, each in position order.
        let mut pairs: Vec<(u32, u32)> = entries
            .iter()
            .enumerate()
            .flat_map(|(pos, (key, _))| trigrams(key.as_bytes()).map(move |t| (t, pos as u32)))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut trigrams = Vec::new();
        let mut starts = Vec::new();
        let mut positions = Vec::with_capacity(pairs.len());
        for (t, pos) in pairs {
            if trigrams.last() != Some(&t) {
                trigrams.push(t);
                starts.push(positions.len() as u32);
            }
            positions.push(pos);
        }
        starts.push(positions.len() as u32);
        Self {
            entries,
            trigrams,
            starts,
            positions,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Prefix matches first, then infix matches, each in name order; one page of them.
    pub fn search(&self, search: &Search) -> Vec<&T> {
        let (offset, limit) = (search.offset as usize, search.limit as usize);
        let Some(term) = search.term.as_deref() else {
            return self
                .entries
                .iter()
                .skip(offset)
                .take(limit)
                .map(|e| &e.1)
                .collect();
        };
        let wanted = offset + limit;
        // The entries are in folded-name order, so those starting with the term are one run;
        // the page needs at most `wanted` of them.
        let first = self.entries.partition_point(|(key, _)| key.as_str() < term);
        let mut page: Vec<&T> = Vec::with_capacity(wanted.min(2 * MAX_LIMIT as usize));
        page.extend(
            self.entries[first..]
                .iter()
                .take(wanted)
                .take_while(|(key, _)| key.starts_with(term))
                .map(|e| &e.1),
        );
        // Fewer than `wanted`: that was the whole run, and infix matches follow, as many as
        // the page still needs.
        if page.len() < wanted {
            let prefixed = first..first + page.len();
            let term = term.as_bytes();
            let mut fill = |candidates: &mut dyn Iterator<Item = usize>| {
                for pos in candidates {
                    let (key, item) = &self.entries[pos];
                    if !prefixed.contains(&pos) && contains(key.as_bytes(), term) {
                        page.push(item);
                        if page.len() >= wanted {
                            break;
                        }
                    }
                }
            };
            match self.rarest_trigram(term) {
                Some(list) => fill(&mut list.iter().map(|pos| *pos as usize)),
                // A term of one or two bytes: every entry may hold it.
                None => fill(&mut (0..self.entries.len())),
            }
        }
        page.drain(..offset.min(page.len()));
        page
    }

    /// The positions of the entries holding `trigram`, ascending.
    fn postings(&self, trigram: u32) -> &[u32] {
        match self.trigrams.binary_search(&trigram) {
            Ok(i) => &self.positions[self.starts[i] as usize..self.starts[i + 1] as usize],
            Err(_) => &[],
        }
    }

    /// The positions of the entries holding the rarest trigram of `term`, ascending (so in
    /// name order): every entry containing `term` is among them. `None` for a term shorter
    /// than a trigram.
    fn rarest_trigram(&self, term: &[u8]) -> Option<&[u32]> {
        trigrams(term)
            .map(|t| self.postings(t))
            .min_by_key(|list| list.len())
    }
}

/// Whether `name` contains `term`: compared wherever the term's first byte occurs. Names and
/// terms are short, so this beats building a substring searcher per request.
fn contains(name: &[u8], term: &[u8]) -> bool {
    let Some((first, rest)) = term.split_first() else {
        return true;
    };
    name.iter()
        .enumerate()
        .any(|(i, b)| b == first && name[i + 1..].starts_with(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(q: &str) -> Search {
        Search::new("q", Some(q.into()), None, None).unwrap()
    }

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

    #[test]
    fn the_mask_window_is_bounded() {
        let now = DateTime::parse_from_rfc3339("2026-11-24T12:00:00Z")
            .unwrap()
            .to_utc();
        let check = |since: Option<i64>, until: Option<i64>| {
            MaskParams {
                since: since.map(|d| now - Duration::days(d)),
                until: until.map(|d| now - Duration::days(d)),
                ..MaskParams::default()
            }
            .check(now)
            .map(|m| m.scope)
            .map_err(|p| p.errors.into_iter().map(|e| e.field).collect::<Vec<_>>())
        };
        let days = |d: i64| now - Duration::days(d);
        assert_eq!(check(None, None), Ok(Scope::Recent { since: days(7) }));
        assert_eq!(
            check(Some(40), Some(9)),
            Ok(Scope::Between {
                since: days(40),
                until: days(9)
            })
        );
        assert_eq!(
            check(None, Some(100)),
            Ok(Scope::Between {
                since: days(107),
                until: days(100)
            })
        );
        assert_eq!(
            check(Some(3), None),
            Ok(Scope::Between {
                since: days(3),
                until: now
            })
        );
        for (since, until) in [
            (Some(40), Some(8)),
            (Some(32), None),
            (Some(1), Some(2)),
            (Some(1), Some(1)),
        ] {
            assert_eq!(
                check(since, until),
                Err(vec!["since".into(), "until".into()])
            );
        }
    }

    #[test]
    fn states_are_named_when_unknown() {
        let check = |state: &str| {
            MaskParams {
                state: Some(state.into()),
                ..MaskParams::default()
            }
            .check(Utc::now())
        };
        assert_eq!(
            check("closed, awaiting_regulation,closed").unwrap().states,
            Some(vec![State::Closed, State::AwaitingRegulation])
        );
        let refused = check("closed,open").unwrap_err();
        assert_eq!(refused.errors[0].field, "state");
        assert!(refused.detail.contains("`open`"), "{}", refused.detail);
    }

    #[test]
    fn prefix_matches_come_first_then_name_order() {
        let idx = NameIndex::new(
            vec![
                "Hospital São José",
                "São José UBS",
                "Santa Luzia",
                "UPA São Joséfa",
                "Sao Jose B",
            ],
            |s| s,
        );
        let got: Vec<&str> = idx
            .search(&search("sao jose"))
            .into_iter()
            .copied()
            .collect();
        assert_eq!(
            got,
            [
                "Sao Jose B",
                "São José UBS",
                "Hospital São José",
                "UPA São Joséfa"
            ]
        );
    }

    #[test]
    fn the_trigram_index_finds_what_a_scan_finds() {
        let names: Vec<String> = (0..500)
            .map(|i| {
                format!(
                    "{} {} {i}",
                    ["São José", "Hospital", "UPA Jardim"][i % 3],
                    ["Açaí", "Lima", "Conceição"][i % 7 % 3]
                )
            })
            .collect();
        let idx = NameIndex::new(names.clone(), |s| s.as_str());
        for q in [
            "sao jose",
            "ai",
            "conceicao 1",
            "l",
            "pa jard",
            "zzz",
            "o 49",
            "hospital lima 4",
            "lima 4",
            "a 1",
            "9",
        ] {
            let mut expected: Vec<&String> =
                names.iter().filter(|n| fold(n).starts_with(q)).collect();
            expected.sort_by_key(|n| (fold(n), (*n).clone()));
            let mut infix: Vec<&String> = names
                .iter()
                .filter(|n| !fold(n).starts_with(q) && fold(n).contains(q))
                .collect();
            infix.sort_by_key(|n| (fold(n), (*n).clone()));
            expected.extend(infix);
            // Pages within the prefix matches, across into the infix ones, and past both.
            for (offset, limit) in [(0, 20), (3, 20), (0, 1), (10, 5), (160, 20), (500, 20)] {
                let s = Search::new("q", Some(q.into()), Some(limit), Some(offset)).unwrap();
                let page: Vec<&String> = expected
                    .iter()
                    .copied()
                    .skip(offset as usize)
                    .take(limit as usize)
                    .collect();
                assert_eq!(idx.search(&s), page, "{q} {offset} {limit}");
            }
        }
    }

    #[test]
    fn bounds_are_checked() {
        let p = |q: Option<&str>, l: Option<i64>, o: Option<i64>| {
            Search::new("q", q.map(Into::into), l, o).map_err(|e| e.errors[0].field.clone())
        };
        assert_eq!(p(None, Some(0), None).unwrap_err(), "limit");
        assert_eq!(p(None, Some(21), None).unwrap_err(), "limit");
        assert_eq!(p(None, None, Some(-1)).unwrap_err(), "offset");
        assert_eq!(p(Some(&"x".repeat(101)), None, None).unwrap_err(), "q");
        assert!(p(Some(&"é".repeat(100)), Some(20), Some(0)).is_ok());
        for control in ["a\u{0}b", "\u{7}", "x\ny"] {
            assert_eq!(
                p(Some(control), None, None).unwrap_err(),
                "q",
                "{control:?}"
            );
        }
        assert_eq!(p(Some("  "), None, None).unwrap().term, None);
    }

    #[test]
    fn like_wildcards_are_escaped() {
        assert_eq!(
            search("50%_a").like_patterns().unwrap(),
            ("%50\\%\\_a%".to_owned(), "50\\%\\_a%".to_owned())
        );
    }
}
