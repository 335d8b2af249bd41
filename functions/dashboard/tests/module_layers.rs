//! The dashboard's layout, checked from its source: the modules name one another one way
//! only — the resources (`overview`, `review`, `tasks`, …) use what sits below them, never the
//! crate root and never each other in a circle; the low modules, what every page shares, use
//! no resource; and a module below another (`overview/charts.rs`) never names the one above
//! it. (That no file's code passes 900 lines is `tests/stack/house.rs`'s, for every crate.)
//!
//! A module "names" another when its non-test code says `crate::<other>`; comments and the
//! `#[cfg(test)]` part at a file's end are left out, since tests may reach for anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What every page shares, lowest first: each may name only the ones before it.
const LOW: [&str; 6] = ["session", "state", "assets", "page", "notice", "respond"];

#[test]
fn modules_depend_one_way() {
    let files: Vec<(PathBuf, String)> = sources().into_iter().map(|(file, text)| (file, code_of(&text))).collect();
    let uses = names_by_top_module(&files);
    let mut wrong = Vec::new();
    for (module, named) in &uses {
        for other in named {
            if !uses.contains_key(other) {
                wrong.push(format!("{module} names crate::{other}, which is the crate root's, not a module's"));
            }
        }
        if let Some(rank) = LOW.iter().position(|low| low == module) {
            for other in named.iter().filter(|other| !LOW[..rank].contains(&other.as_str())) {
                wrong.push(format!("{module} names {other}, which is not below it"));
            }
        }
    }
    assert!(wrong.is_empty(), "modules out of order:\n{}", wrong.join("\n"));
    assert_eq!(cycle(&uses), None, "an import circle between the dashboard's modules");
}

#[test]
fn no_module_reaches_up_with_super() {
    let up: Vec<String> = sources()
        .iter()
        .filter(|(_, text)| code_of(text).contains("super::"))
        .map(|(file, _)| file.display().to_string())
        .collect();
    assert!(up.is_empty(), "`super::` outside tests names the module above: {up:?}");
}

/// Every source file of the library but `lib.rs` (the root, which assembles the rest), by its
/// path under `src`, with its text.
fn sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    rust_files(&src)
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).expect("readable source");
            (file.strip_prefix(&src).expect("under src").to_path_buf(), text)
        })
        .filter(|(file, _)| file != Path::new("lib.rs") && file != Path::new("main.rs"))
        .collect()
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "tests.rs") {
            files.push(path);
        }
    }
    files
}

/// A file up to its `#[cfg(test)]` part: this crate keeps a file's tests at its end (or in a
/// `tests.rs` of their own).
fn before_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or_default()
}

/// A file's code, its tests apart, without its comment lines and its end-of-line comments.
fn code_of(text: &str) -> String {
    before_tests(text)
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| match line.find(" // ") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// For each top-level module (a file of `src`, with the folder of its children), the other
/// top-level modules its code names.
fn names_by_top_module(files: &[(PathBuf, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, code) in files {
        let top = file
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a path")
            .trim_end_matches(".rs")
            .to_owned();
        let named = uses.entry(top.clone()).or_default();
        named.extend(crate_paths(code).into_iter().filter(|module| *module != top));
    }
    uses
}

/// The first segment after each `crate::` (empty for `crate::{…}`, which names the root).
fn crate_paths(code: &str) -> BTreeSet<String> {
    code.match_indices("crate::")
        .filter(|(at, _)| !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(at, m)| {
            code[at + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .collect()
}

/// A circle of modules, if there is one.
fn cycle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut circle = path[at..].to_vec();
            circle.push(module.to_owned());
            return Some(circle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in uses.get(module).into_iter().flatten() {
            if let Some(circle) = visit(next, uses, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    uses.keys().find_map(|module| visit(module, uses, &mut Vec::new(), &mut done))
}
