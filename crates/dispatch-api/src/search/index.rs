//! The in-memory name index of the reference lists (health units and the other small
//! lists served from `catalog`): prefix matches, then infix matches, the way pg_trgm finds
//! them in SQL.

use super::fold::fold;
use super::params::{MAX_LIMIT, Search};

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

    /// One page of the entries matching `search`'s term, best first, each group in name
    /// order: the names that start with the term, then those that contain it, then (a term
    /// of several words) those that contain every word in any order ("hosp sao" finds
    /// "Hospital Municipal São José"). Only the entries `keep` accepts count.
    pub fn search(&self, search: &Search, keep: impl Fn(&T) -> bool) -> Vec<&T> {
        let (offset, limit) = (search.offset as usize, search.limit as usize);
        let Some(term) = search.term.as_deref() else {
            return self
                .entries
                .iter()
                .filter(|e| keep(&e.1))
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
                .take_while(|(key, _)| key.starts_with(term))
                .filter(|e| keep(&e.1))
                .take(wanted)
                .map(|e| &e.1),
        );
        let whole = term.as_bytes();
        // Fewer than `wanted`: that was the whole run, and the other matches follow, as many
        // as the page still needs: the term inside a name, then every word, apart. Each
        // group's needles are tested once per candidate (`fits` adds only what tells the
        // group from the earlier ones), and the words are split only when their group is
        // reached.
        let term_alone = [whole];
        let mut words: Vec<&[u8]> = Vec::new();
        for n in 0..2 {
            if page.len() >= wanted {
                break;
            }
            let (needles, fits): Group<'_> = if n == 0 {
                (&term_alone, |key, term| !key.starts_with(term))
            } else {
                words.extend(term.split_whitespace().map(str::as_bytes));
                if words.len() < 2 {
                    break;
                }
                (&words, |key, term| !contains(key, term))
            };
            let rarest = needles
                .iter()
                .filter_map(|w| self.rarest_trigram(w))
                .min_by_key(|list| list.len());
            // On the stack: no allocation per group.
            let (mut listed, mut every);
            let candidates: &mut dyn Iterator<Item = usize> = match rarest {
                Some(list) => {
                    listed = list.iter().map(|pos| *pos as usize);
                    &mut listed
                }
                // Words of one or two bytes: every entry may hold them.
                None => {
                    every = 0..self.entries.len();
                    &mut every
                }
            };
            for pos in candidates {
                let (key, item) = &self.entries[pos];
                let key = key.as_bytes();
                if fits(key, whole) && needles.iter().all(|w| contains(key, w)) && keep(item) {
                    page.push(item);
                    if page.len() >= wanted {
                        break;
                    }
                }
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

/// A group of matches after the prefix run: the needles every name of it contains, and what
/// else a name must be (`fits(name, whole term)`) to belong to it rather than to an earlier one.
type Group<'a> = (&'a [&'a [u8]], fn(&[u8], &[u8]) -> bool);

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
    fn every_word_matches_in_any_order_after_the_whole_term() {
        let idx = NameIndex::new(
            vec![
                "Hospital Municipal São José",
                "UBS São José Hospitalar",
                "Hospital Santa Casa",
                "São José Hospital",
                "UPA Hospício",
            ],
            |s| s,
        );
        let got = |q: &str| -> Vec<&str> {
            idx.search(&search(q), |_| true)
                .into_iter()
                .copied()
                .collect()
        };
        assert_eq!(
            got("hosp sao"),
            [
                "Hospital Municipal São José",
                "São José Hospital",
                "UBS São José Hospitalar"
            ]
        );
        // The whole term as one piece ranks first: prefix, then inside a name.
        assert_eq!(
            got("sao jose h"),
            [
                "São José Hospital",
                "UBS São José Hospitalar",
                "Hospital Municipal São José"
            ]
        );
        assert_eq!(got("SÃO   hospício"), Vec::<&str>::new());
        assert_eq!(got("hospicio upa"), ["UPA Hospício"]);
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
            .search(&search("sao jose"), |_| true)
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
            "4 lima",
            "jose hosp",
            "lima 1 ai",
            "a o",
            "a 1",
            "9",
        ] {
            // The three groups, each in name order: prefix, infix, every word apart.
            let group = |fits: &dyn Fn(&str) -> bool| {
                let mut g: Vec<&String> = names.iter().filter(|n| fits(&fold(n))).collect();
                g.sort_by_key(|n| (fold(n), (*n).clone()));
                g
            };
            let words: Vec<&str> = q.split_whitespace().collect();
            let mut expected = group(&|n| n.starts_with(q));
            expected.extend(group(&|n| !n.starts_with(q) && n.contains(q)));
            if words.len() > 1 {
                expected.extend(group(&|n| {
                    !n.contains(q) && words.iter().all(|w| n.contains(w))
                }));
            }
            // Pages within the prefix matches, across into the others, and past all; then
            // only the entries a filter keeps (those ending in an even digit).
            let even = |n: &String| n.ends_with(['0', '2', '4', '6', '8']);
            for (offset, limit) in [(0, 20), (3, 20), (0, 1), (10, 5), (160, 20), (500, 20)] {
                let s = Search::new("q", Some(q.into()), Some(limit), Some(offset)).unwrap();
                let page = |keep: &dyn Fn(&String) -> bool| -> Vec<&String> {
                    expected
                        .iter()
                        .copied()
                        .filter(|n| keep(n))
                        .skip(offset as usize)
                        .take(limit as usize)
                        .collect()
                };
                assert_eq!(
                    idx.search(&s, |_| true),
                    page(&|_| true),
                    "{q} {offset} {limit}"
                );
                assert_eq!(
                    idx.search(&s, |n| even(n)),
                    page(&even),
                    "{q} {offset} {limit}"
                );
            }
        }
    }
}
