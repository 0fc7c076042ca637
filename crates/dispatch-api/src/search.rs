//! Search terms: how a typed term is checked, folded and matched, the same way in memory and
//! in SQL (`search_key()` in the migration), so "sao jose" finds "São José" everywhere.

use std::collections::HashMap;

use common::Problem;
use serde::Deserialize;
use utoipa::IntoParams;

/// Longest accepted search term, in characters. Longer is 400: no name is that long, and
/// the cap bounds the work of one request.
pub const MAX_TERM_CHARS: usize = 100;
/// A search returns at most 20 items (docs/dispatch-routes.md, "Routes").
pub const MAX_LIMIT: i64 = 20;
/// Deepest `offset` accepted; lazy-loading lists never scroll that far.
pub const MAX_OFFSET: i64 = 10_000;

/// Folds to the comparison key: lower case, Portuguese (Latin-1) accents removed.
pub fn fold(s: &str) -> String {
    s.chars()
        .flat_map(char::to_lowercase)
        .map(strip_accent)
        .collect()
}

fn strip_accent(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'é' | 'è' | 'ê' | 'ë' => 'e',
        'í' | 'ì' | 'î' | 'ï' => 'i',
        'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
        'ú' | 'ù' | 'û' | 'ü' => 'u',
        'ç' => 'c',
        'ñ' => 'n',
        'ý' | 'ÿ' => 'y',
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

/// An in-memory list searchable by name, the way pg_trgm indexes it: entries kept in
/// (folded name, name) order, plus a posting list of entry positions for every byte
/// trigram of the folded names. A term of three bytes or more only checks the entries of
/// its rarest trigram (a few dozen, not 7,458); shorter terms scan.
pub struct NameIndex<T> {
    entries: Vec<(String, T)>,
    trigrams: HashMap<[u8; 3], Vec<u32>>,
}

fn trigrams(key: &str) -> impl Iterator<Item = [u8; 3]> + '_ {
    key.as_bytes().windows(3).map(|w| [w[0], w[1], w[2]])
}

impl<T> NameIndex<T> {
    pub fn new(items: Vec<T>, name: impl Fn(&T) -> &str) -> Self {
        let mut entries: Vec<(String, T)> =
            items.into_iter().map(|i| (fold(name(&i)), i)).collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| name(&a.1).cmp(name(&b.1))));
        let mut index: HashMap<[u8; 3], Vec<u32>> = HashMap::new();
        for (pos, (key, _)) in entries.iter().enumerate() {
            for t in trigrams(key) {
                let list = index.entry(t).or_default();
                // Positions ascend, so a repeat can only be the last one pushed.
                if list.last() != Some(&(pos as u32)) {
                    list.push(pos as u32);
                }
            }
        }
        Self {
            entries,
            trigrams: index,
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
        let mut prefix = Vec::new();
        let mut infix = Vec::new();
        for pos in self.candidates(term) {
            let (key, item) = &self.entries[pos];
            if key.starts_with(term) {
                prefix.push(item);
                // Enough prefix matches fill the page; infix ones would come after anyway.
                if prefix.len() >= wanted {
                    break;
                }
            } else if infix.len() < wanted && key.contains(term) {
                infix.push(item);
            }
        }
        prefix
            .into_iter()
            .chain(infix)
            .skip(offset)
            .take(limit)
            .collect()
    }

    /// Positions that may contain `term`, ascending (so in name order).
    fn candidates(&self, term: &str) -> Box<dyn Iterator<Item = usize> + '_> {
        let rarest = trigrams(term)
            .map(|t| self.trigrams.get(&t).map_or(&[][..], Vec::as_slice))
            .min_by_key(|list| list.len());
        match rarest {
            Some(list) => Box::new(list.iter().map(|p| *p as usize)),
            None => Box::new(0..self.entries.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(q: &str) -> Search {
        Search::new("q", Some(q.into()), None, None).unwrap()
    }

    #[test]
    fn folding_drops_case_and_accents() {
        assert_eq!(fold("São José dos Campos"), "sao jose dos campos");
        assert_eq!(fold("AÇÚCAR Ômega"), "acucar omega");
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
        ] {
            let s = Search::new("q", Some(q.into()), Some(20), Some(3)).unwrap();
            let mut expected: Vec<&String> =
                names.iter().filter(|n| fold(n).starts_with(q)).collect();
            expected.sort_by_key(|n| (fold(n), (*n).clone()));
            let mut infix: Vec<&String> = names
                .iter()
                .filter(|n| !fold(n).starts_with(q) && fold(n).contains(q))
                .collect();
            infix.sort_by_key(|n| (fold(n), (*n).clone()));
            expected.extend(infix);
            let expected: Vec<&String> = expected.into_iter().skip(3).take(20).collect();
            assert_eq!(idx.search(&s), expected, "{q}");
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
