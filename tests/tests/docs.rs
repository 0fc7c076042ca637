//! The repository's Markdown as a reader meets it on GitHub: every relative link resolves (the
//! file or folder exists; an `#anchor` names a heading of the linked file, or an `id` of its
//! HTML), and every table is one table (no paragraph splitting it, which leaves its last rows
//! as plain text, and no row with more or fewer cells than its header). No service, no
//! database: it reads the files. `./dev test` (and so `.ci/run`) runs it.
//!
//! Parsed with pulldown-cmark (CommonMark with GitHub's tables), anchors made as GitHub makes
//! them from a heading's text (lower case, punctuation dropped, spaces as `-`, `-1`, `-2`...
//! for repeats).

use std::collections::{BTreeMap, HashSet};
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The repository's root (this crate is `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Folders that hold no documentation of the project's own: build output, installed
/// packages, local state.
const SKIPPED: &[&str] = &["target", "node_modules", ".git", ".local"];

/// Every `*.md` under `dir`, but in [`SKIPPED`] folders.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !SKIPPED.contains(&name.as_str()) {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
}

/// GitHub's anchor of a heading whose text is `text`.
fn slug(text: &str) -> String {
    text.trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().collect::<String>())
            } else if c == ' ' {
                Some("-".to_owned())
            } else {
                None
            }
        })
        .collect()
}

/// What one file offers and asks: its anchors, its links (with their line), its table
/// problems.
#[derive(Default)]
struct Scan {
    anchors: HashSet<String>,
    links: Vec<(usize, String)>,
    problems: Vec<String>,
}

/// A source line without the block quote markers (`> `) and the indentation before it.
fn unquoted(line: &str) -> &str {
    line.trim_start_matches(|c: char| c == '>' || c.is_whitespace())
}

/// The cells of one source row of a table: `|` not escaped by `\` separates them (GitHub
/// splits on it even inside a code span); the leading and trailing `|` are borders.
fn cells(row: &str) -> usize {
    let row = unquoted(row).trim();
    let mut count = 1;
    let mut escaped = false;
    let body = row.strip_prefix('|').unwrap_or(row);
    let body = match body.strip_suffix('|') {
        Some(b) if !b.ends_with('\\') => b,
        _ => body,
    };
    for c in body.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
    }
    count
}

/// `id="..."` and `name="..."` values in a piece of HTML.
fn html_ids(html: &str, out: &mut HashSet<String>) {
    for attr in ["id=\"", "name=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            if let Some(end) = rest.find('"') {
                out.insert(rest[..end].to_owned());
            }
        }
    }
}

fn scan(text: &str) -> Scan {
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut s = Scan::default();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => {
                heading = Some(String::new());
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(base.clone()).or_insert(0);
                let anchor = if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                };
                *n += 1;
                s.anchors.insert(anchor);
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                html_ids(&h, &mut s.anchors);
                for attr in ["href=\"", "src=\""] {
                    let mut rest: &str = &h;
                    while let Some(at) = rest.find(attr) {
                        rest = &rest[at + attr.len()..];
                        if let Some(end) = rest.find('"') {
                            s.links.push((line_of(range.start), rest[..end].to_owned()));
                        }
                    }
                }
            }
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                s.links.push((line_of(range.start), dest_url.into_string()));
            }
            Event::Start(Tag::Paragraph) => {
                // A line of a paragraph that begins with `|` is a table row that no table
                // took: a paragraph (or a blank line) split its table.
                let source = &text[range.clone()];
                let mut offset = range.start;
                for line in source.split_inclusive('\n') {
                    if unquoted(line).starts_with('|') && line.trim_end().ends_with('|') {
                        s.problems.push(format!(
                            "line {}: a table row outside any table (a paragraph or a blank \
                             line splits its table): {}",
                            line_of(offset),
                            line.trim()
                        ));
                    }
                    offset += line.len();
                }
            }
            Event::Start(Tag::Table(_)) => {
                let source = &text[range.clone()];
                let mut lines = source.lines().filter(|l| !unquoted(l).is_empty());
                let Some(header) = lines.next() else { continue };
                let want = cells(header);
                for (i, line) in source.lines().enumerate().skip(1) {
                    if unquoted(line).is_empty() {
                        continue;
                    }
                    let got = cells(line);
                    if got != want {
                        s.problems.push(format!(
                            "line {}: a table row of {got} cells under a header of {want}: {}",
                            line_of(range.start) + i,
                            line.trim()
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    s
}

/// The path `target` names from the folder `dir`, without `.` and `..`.
fn resolve(dir: &Path, target: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in dir.join(target).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// `%20` and the like, as a browser decodes a link's path.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `target` leaves the repository's files: a scheme (`https:`, `mailto:`), a
/// protocol-relative or absolute URL path (the services' routes, `/docs`).
fn external(target: &str) -> bool {
    let scheme = target.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    scheme || target.starts_with('/')
}

/// Every problem of the Markdown under `root`, as `file: line N: what`.
fn problems(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    markdown_files(root, &mut files);
    assert!(!files.is_empty(), "no Markdown under {}", root.display());
    let scans: BTreeMap<PathBuf, Scan> = files
        .iter()
        .map(|f| (f.clone(), scan(&std::fs::read_to_string(f).unwrap())))
        .collect();
    let mut out = Vec::new();
    for (file, s) in &scans {
        let name = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for p in &s.problems {
            out.push(format!("{name}: {p}"));
        }
        let dir = file.parent().unwrap();
        for (line, target) in &s.links {
            if target.is_empty() || external(target) {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let path = path.split('?').next().unwrap_or_default();
            let linked = if path.is_empty() {
                file.clone()
            } else {
                resolve(dir, &percent_decoded(path))
            };
            if !linked.exists() {
                out.push(format!(
                    "{name}: line {line}: `{target}`: no file or folder {}",
                    linked.strip_prefix(root).unwrap_or(&linked).display()
                ));
                continue;
            }
            let Some(anchor) = anchor.filter(|a| !a.is_empty()) else {
                continue;
            };
            // GitHub's line anchors of a source file (`#L10`) and anchors into files that
            // are not Markdown are not checked.
            let Some(target_scan) = scans.get(&linked) else {
                continue;
            };
            let anchor = percent_decoded(anchor);
            if !target_scan.anchors.contains(&anchor) {
                out.push(format!(
                    "{name}: line {line}: `{target}`: {} has no heading or id `{anchor}`",
                    linked.strip_prefix(root).unwrap_or(&linked).display()
                ));
            }
        }
    }
    out
}

#[test]
fn every_relative_link_resolves_and_every_table_is_one_table() {
    let found = problems(&root());
    assert!(
        found.is_empty(),
        "{} problems in the Markdown:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The checker itself, on a small tree: what it must find, and what it must let pass.
#[test]
fn the_checker_finds_a_split_table_a_short_row_a_missing_file_and_a_missing_anchor() {
    let dir = std::env::temp_dir().join(format!("docs-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("a.md"),
        "# Título com `código` e ação\n\n## Repeated\n\n## Repeated\n\n<a id=\"own\"></a>\n\n\
         | a | b |\n|---|---|\n| 1 | 2 |\n\nA paragraph in between.\n| 3 | 4 |\n\n\
         | x | y |\n|---|---|\n| only one \\| cell |\n\n\
         [ok](sub/b.md#b-heading) [ok](#título-com-código-e-ação) [ok](#repeated-1) [ok](#own)\n\
         [ok](sub/) [ok](https://example.com/x) [ok](/docs)\n\
         [missing file](nowhere.md) [missing anchor](sub/b.md#nothing-here)\n\n\
         ```\n| not | a table, code |\n[not a link](nowhere-either.md)\n```\n\n\
         > | quoted | table |\n> |---|---|\n> | `a` | [b](sub/b.md) |\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sub/b.md"),
        "## B heading\n\n[up](../a.md#repeated)\n",
    )
    .unwrap();
    let found = problems(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let expected = [
        "a.md: line 14: a table row outside any table (a paragraph or a blank line splits its table): | 3 | 4 |",
        "a.md: line 18: a table row of 1 cells under a header of 2: | only one \\| cell |",
        "a.md: line 22: `nowhere.md`: no file or folder nowhere.md",
        "a.md: line 22: `sub/b.md#nothing-here`: sub/b.md has no heading or id `nothing-here`",
    ];
    assert_eq!(found, expected, "{found:#?}");
}
