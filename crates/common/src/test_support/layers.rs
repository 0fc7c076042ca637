//! The layer rule of docs/architecture.md, as a test can check it: each service lists its
//! layers from the top down, and no module may name one in a higher layer (`use crate::...`,
//! `super::...` or a `crate::` path in code), nor take part in an import circle.
//!
//! The source is read with `syn`, so comments, strings and `#[cfg(test)]` items are not
//! imports; a module may use its own children (a folder's `mod.rs` re-exports them).
//!
//! A layer may also shun paths outright, whatever layer they are in ([`Shun`]): the store
//! names no view and no HTTP type (`actix_web`, `http`, a problem+json), in both services.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// One layer: a name for messages and the module paths it holds (`"store"` holds
/// `store::receipts` and everything else below `store`; `"routes::extract"` holds just that
/// file and its children). The most specific path wins.
pub struct Layer {
    pub name: &'static str,
    pub modules: &'static [&'static str],
}

/// Paths the modules of a layer may not name at all, crates included: `"actix_web"` (the
/// crate and everything in it), `"common::Problem"`, `"crate::views"`.
pub struct Shun {
    /// Module paths, as in [`Layer::modules`] (`"store"` holds everything below it).
    pub modules: &'static [&'static str],
    pub paths: &'static [&'static str],
    /// Why, for the message.
    pub why: &'static str,
}

/// Every use of a shunned path, as `module uses path (why)`; empty when none.
pub fn shunned(src: &Path, shuns: &[Shun]) -> Vec<String> {
    let modules = read_modules(src);
    let mut found = Vec::new();
    for shun in shuns {
        let held = |module: &[String]| shun.modules.iter().any(|m| holds(m, module));
        for (module, names) in modules.iter().filter(|(m, _)| held(m)) {
            for shunned in shun.paths {
                let (within, words): (_, Vec<&str>) = match shunned.strip_prefix("crate::") {
                    Some(rest) => (&names.internal, rest.split("::").collect()),
                    None => (&names.external, shunned.split("::").collect()),
                };
                for path in within.iter().filter(|p| {
                    p.len() >= words.len() && words.iter().zip(p.iter()).all(|(w, s)| w == s)
                }) {
                    found.push(format!(
                        "{} uses {} ({})",
                        module.join("::"),
                        path.join("::"),
                        shun.why
                    ));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Panics with every use of a shunned path.
pub fn assert_shuns(src: &Path, shuns: &[Shun]) {
    let findings = Findings {
        shunned: shunned(src, shuns),
        ..Findings::default()
    };
    assert_clean(src, &findings);
}

/// What [`check`] found wrong: every import pointing up, every circle.
#[derive(Debug, Default)]
pub struct Findings {
    pub upward: Vec<String>,
    pub circles: Vec<String>,
    pub unplaced: Vec<String>,
    /// Found by [`shunned`] (only [`assert_shuns`] fills it).
    pub shunned: Vec<String>,
}

impl Findings {
    pub fn is_clean(&self) -> bool {
        self.upward.is_empty()
            && self.circles.is_empty()
            && self.unplaced.is_empty()
            && self.shunned.is_empty()
    }
}

impl std::fmt::Display for Findings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (title, list) in [
            ("imports pointing up", &self.upward),
            ("import circles", &self.circles),
            ("modules in no layer", &self.unplaced),
            ("paths a layer shuns", &self.shunned),
        ] {
            if !list.is_empty() {
                writeln!(f, "{title}:")?;
                for line in list {
                    writeln!(f, "  {line}")?;
                }
            }
        }
        Ok(())
    }
}

/// Reads every `.rs` file under `src` (a crate's `src/`, holding `lib.rs`) and holds its
/// imports against `layers`, listed from the top down. `lib.rs`, `main.rs` and files named
/// `tests.rs` are not modules of a layer.
pub fn check(src: &Path, layers: &[Layer]) -> Findings {
    let modules = read_modules(src);
    let known: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
    let mut findings = Findings::default();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, names) in &modules {
        let refs = &names.internal;
        let Some(from) = layer_of(module, layers) else {
            findings.unplaced.push(module.join("::"));
            continue;
        };
        for target in refs {
            let Some(to_module) = owning_module(target, &known) else {
                continue;
            };
            if to_module == *module || to_module.starts_with(module) {
                continue; // itself, or its own children
            }
            edges
                .entry(module.clone())
                .or_default()
                .insert(to_module.clone());
            if let Some(to) = layer_of(&to_module, layers)
                && to < from
            {
                findings.upward.push(format!(
                    "{} ({}) uses {} ({})",
                    module.join("::"),
                    layers[from].name,
                    target.join("::"),
                    layers[to].name
                ));
            }
        }
    }
    findings.upward.sort();
    findings.upward.dedup();
    findings.circles = circles(&edges);
    findings
}

/// Panics with every finding unless the crate keeps its layers.
pub fn assert_layers(src: &Path, layers: &[Layer]) {
    assert_clean(src, &check(src, layers));
}

fn assert_clean(src: &Path, findings: &Findings) {
    assert!(
        findings.is_clean(),
        "the layers of docs/architecture.md are broken in {}:\n{findings}",
        src.display()
    );
}

/// The index of the layer holding `module` (the most specific listed path that is a prefix).
fn layer_of(module: &[String], layers: &[Layer]) -> Option<usize> {
    layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.modules.iter().map(move |m| (i, *m)))
        .filter(|(_, m)| holds(m, module))
        .max_by_key(|(_, m)| m.split("::").count())
        .map(|(i, _)| i)
}

/// Whether the listed module path `listed` (`"store"`, `"routes::extract"`) holds `module`:
/// it is the module or one of its ancestors.
fn holds(listed: &str, module: &[String]) -> bool {
    let prefix: Vec<&str> = listed.split("::").collect();
    prefix.len() <= module.len() && prefix.iter().zip(module).all(|(p, s)| p == s)
}

/// The longest prefix of `path` that is a module of the crate (`store::receipts::insert` ->
/// `store::receipts`).
fn owning_module(path: &[String], known: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| known.contains(p))
}

/// The paths one module names: those of its own crate (from the crate root, without
/// `crate`) and those of other crates (from the crate's name).
#[derive(Default)]
struct Named {
    internal: BTreeSet<Vec<String>>,
    external: BTreeSet<Vec<String>>,
}

/// Every module file under `src` with the paths it names.
fn read_modules(src: &Path) -> BTreeMap<Vec<String>, Named> {
    let mut files = Vec::new();
    collect_files(src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let Some(module) = module_path(rel) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("readable source");
        let syntax = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
        let mut names = Names {
            module: &module,
            found: Named::default(),
        };
        names.visit_file(&syntax);
        let found = names.found;
        modules.insert(module, found);
    }
    modules
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable src")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `realtime/hub.rs` -> `realtime::hub`; `store/mod.rs` -> `store`; none for the crate root
/// and test files.
fn module_path(rel: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let file = parts.pop()?;
    let stem = file.strip_suffix(".rs")?;
    match stem {
        "lib" | "main" if parts.is_empty() => None,
        "tests" => None,
        "mod" => (!parts.is_empty()).then_some(parts),
        _ => {
            parts.push(stem.to_owned());
            Some(parts)
        }
    }
}

/// Collects the paths a file names, outside `#[cfg(test)]` items.
struct Names<'a> {
    module: &'a [String],
    found: Named,
}

impl Names<'_> {
    /// `crate::a::b`, `super::b` or `self::b` as a path from the crate root.
    fn resolve(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        // `store/mod.rs` and `store.rs` are both the module `store`: `super` is its parent.
        let here: Vec<String> = self.module.to_vec();
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => here,
            "super" => {
                let mut base = here;
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return (!base.is_empty()).then_some(base);
            }
            _ => return None,
        };
        base.extend(segments[1..].iter().cloned());
        (!base.is_empty()).then_some(base)
    }

    fn note(&mut self, segments: Vec<String>) {
        if let Some(path) = self.resolve(&segments) {
            self.found.internal.insert(path);
        } else if segments
            .first()
            .is_some_and(|s| !matches!(s.as_str(), "crate" | "self" | "super" | "Self"))
        {
            self.found.external.insert(segments);
        }
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().contains("test"))
    })
}

impl<'ast> Visit<'ast> for Names<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        flatten(&item.tree, Vec::new(), &mut paths);
        for p in paths {
            self.note(p);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.note(segments);
        }
        syn::visit::visit_path(self, path);
    }
}

/// Every whole path of a `use` tree (`crate::{a::b, c}` -> `crate::a::b`, `crate::c`).
fn flatten(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            flatten(&p.tree, next, out);
        }
        syn::UseTree::Name(n) => {
            let mut whole = prefix;
            if n.ident != "self" {
                whole.push(n.ident.to_string());
            }
            out.push(whole);
        }
        syn::UseTree::Rename(r) => {
            let mut whole = prefix;
            whole.push(r.ident.to_string());
            out.push(whole);
        }
        syn::UseTree::Glob(_) => out.push(prefix),
        syn::UseTree::Group(g) => {
            for item in &g.items {
                flatten(item, prefix.clone(), out);
            }
        }
    }
}

/// Each import circle once, as `a -> b -> a`.
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<String> {
    let mut found = BTreeSet::new();
    for start in edges.keys() {
        // Depth-first search for paths that return to `start` through larger nodes only,
        // so each circle is reported from its smallest module.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((node, path)) = stack.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                if next == start {
                    let names: Vec<String> = path.iter().map(|m| m.join("::")).collect();
                    found.insert(format!("{} -> {}", names.join(" -> "), start.join("::")));
                } else if next > start && !path.contains(next) && path.len() < 8 {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const LAYERS: &[Layer] = &[
        Layer {
            name: "http",
            modules: &["routes"],
        },
        Layer {
            name: "store",
            modules: &["store"],
        },
        Layer {
            name: "domain",
            modules: &["domain"],
        },
    ];

    fn crate_with(files: &[(&str, &str)]) -> tempdir::Dir {
        let dir = tempdir::Dir::new();
        write(
            &dir.0,
            "lib.rs",
            "pub mod routes; pub mod store; pub mod domain;",
        );
        for (rel, text) in files {
            write(&dir.0, rel, text);
        }
        dir
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Self {
                let path =
                    std::env::temp_dir().join(format!("layers-{}", uuid::Uuid::new_v4().simple()));
                std::fs::create_dir_all(&path).unwrap();
                Self(path)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn imports_pointing_down_are_clean() {
        let dir = crate_with(&[
            (
                "routes.rs",
                "use crate::store::find; fn f() { crate::domain::rule(); }",
            ),
            ("store.rs", "use crate::domain::{Rule, other::Thing};"),
            ("domain.rs", "pub fn rule() {}"),
        ]);
        let findings = check(&dir.0, LAYERS);
        assert!(findings.is_clean(), "{findings}");
    }

    #[test]
    fn a_use_pointing_up_is_named_with_both_layers() {
        let dir = crate_with(&[
            ("routes.rs", ""),
            ("store.rs", ""),
            ("domain.rs", "use crate::{store::find};"),
        ]);
        let findings = check(&dir.0, LAYERS);
        assert_eq!(
            findings.upward,
            vec!["domain (domain) uses store::find (store)".to_owned()]
        );
    }

    #[test]
    fn a_path_in_code_and_super_count_as_imports() {
        let dir = crate_with(&[
            ("routes.rs", ""),
            ("store/mod.rs", "mod rows;"),
            (
                "store/rows.rs",
                "fn f() { super::super::routes::answer(); }",
            ),
            ("domain.rs", "fn f() { crate::routes::answer(); }"),
        ]);
        let findings = check(&dir.0, LAYERS);
        assert_eq!(findings.upward.len(), 2, "{findings}");
    }

    #[test]
    fn test_items_and_comments_are_not_imports() {
        let dir = crate_with(&[
            ("routes.rs", ""),
            ("store.rs", ""),
            (
                "domain.rs",
                "// use crate::routes::x;\n#[cfg(test)]\nmod tests { use crate::store::x; }",
            ),
        ]);
        assert!(check(&dir.0, LAYERS).is_clean());
    }

    #[test]
    fn two_modules_of_one_layer_using_each_other_are_a_circle() {
        let dir = crate_with(&[
            ("routes/mod.rs", "mod a; mod b;"),
            ("routes/a.rs", "use super::b::B;"),
            ("routes/b.rs", "use crate::routes::a::A;"),
            ("store.rs", ""),
            ("domain.rs", ""),
        ]);
        let findings = check(&dir.0, LAYERS);
        assert_eq!(
            findings.circles,
            vec!["routes::a -> routes::b -> routes::a"]
        );
    }

    #[test]
    fn a_shunned_crate_or_path_is_named_in_its_layer_only() {
        let dir = crate_with(&[
            (
                "routes.rs",
                "use actix_web::http::StatusCode; fn f() { crate::views::x(); }",
            ),
            ("store/mod.rs", "mod rows; use actix_web::http::StatusCode;"),
            (
                "store/rows.rs",
                "fn f() { let _ = http::StatusCode::OK; crate::views::x(); }",
            ),
            ("domain.rs", ""),
        ]);
        let shuns = [Shun {
            modules: &["store"],
            paths: &["actix_web", "http", "crate::views"],
            why: "no HTTP below the routes",
        }];
        assert_eq!(
            shunned(&dir.0, &shuns),
            vec![
                "store uses actix_web::http::StatusCode (no HTTP below the routes)",
                "store::rows uses http::StatusCode::OK (no HTTP below the routes)",
                "store::rows uses views::x (no HTTP below the routes)",
            ]
        );
    }

    #[test]
    fn a_module_in_no_layer_is_named() {
        let dir = crate_with(&[("routes.rs", ""), ("stray.rs", "")]);
        assert_eq!(check(&dir.0, LAYERS).unplaced, vec!["stray"]);
    }
}
