//! The crate's layout, checked: the domain folders use one another one way only, and none of
//! them uses the engine, the ports, the stores, the contract's shapes or the test kit.
//!
//! Read from the source, so a new `use` that closes a cycle fails here rather than knotting the
//! crate again. A folder "uses" another when its non-test code names `crate::<other>` (in a
//! `use` or a path); comments and `#[cfg(test)]` items are left out, since tests may use the
//! test kit, which builds on the ports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The domain folders, lowest first: each may use only folders before it in this list.
const DOMAIN: [&str; 7] = ["kernel", "members", "task", "owner", "conversation", "rails", "learning"];

/// What sits above the domain; no domain folder may use any of these.
const OUTER: [&str; 6] = ["engine", "ports", "memory", "conformance", "contract", "testing"];

#[test]
fn folders_depend_one_way() {
    let uses = uses_by_top_module();
    let known: BTreeSet<&str> = DOMAIN.iter().chain(OUTER.iter()).copied().collect();
    let unknown: Vec<&String> = uses.keys().filter(|m| !known.contains(m.as_str())).collect();
    assert!(unknown.is_empty(), "top-level modules not placed in DOMAIN or OUTER: {unknown:?}");

    let mut wrong = Vec::new();
    for (rank, folder) in DOMAIN.iter().enumerate() {
        for used in uses.get(*folder).into_iter().flatten() {
            match DOMAIN.iter().position(|d| d == used) {
                Some(r) if r < rank => {}
                Some(_) => wrong.push(format!("{folder} uses {used}, which is not below it")),
                None => wrong.push(format!("{folder} uses {used}, which is outside the domain")),
            }
        }
    }
    assert!(wrong.is_empty(), "folder dependencies out of order:\n{}", wrong.join("\n"));
    assert_eq!(cycle(&uses), None, "an import cycle between core's top-level modules");
}

#[test]
fn the_task_model_does_not_import_the_engine() {
    let uses = uses_by_top_module();
    assert!(!uses["task"].contains("engine"), "task uses the engine");
}

/// For each top-level module of `src` (a folder or a file), the other top-level modules its
/// non-test code names.
fn uses_by_top_module() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src) {
        let relative = file.strip_prefix(&src).expect("under src");
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a path")
            .trim_end_matches(".rs")
            .to_owned();
        if top == "lib" || top == "folder_dependencies" || is_test_file(relative) {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        let named = uses.entry(top.clone()).or_default();
        for module in crate_paths(&without_tests(&without_comments(&text))) {
            if module != top {
                named.insert(module);
            }
        }
    }
    uses
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// A module of tests in a file of its own (`foo/tests.rs`, `engine/tests/…`).
fn is_test_file(relative: &Path) -> bool {
    relative
        .components()
        .any(|c| c.as_os_str() == "tests" || c.as_os_str() == "tests.rs")
}

/// The first segment after each `crate::`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    code.match_indices("crate::")
        .filter(|(at, _)| !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(at, m)| {
            code[at + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|segment| !segment.is_empty())
        .collect()
}

/// `code` without `//` comments (doc comments too) and without `/* */` blocks; string
/// literals are kept as they are.
fn without_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('\'', Some(_)) => {
                // A character literal ('"', '\'', '{') is kept whole; a lifetime is one quote.
                out.push(c);
                let ahead: String = chars.clone().take(3).collect();
                let literal = if ahead.starts_with('\\') {
                    ahead.chars().nth(2) == Some('\'')
                } else {
                    ahead.chars().nth(1) == Some('\'')
                };
                if literal {
                    let len = if ahead.starts_with('\\') { 3 } else { 2 };
                    out.extend(chars.by_ref().take(len));
                }
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// `code` without the items marked `#[cfg(test)]`: a `mod tests;` line, or an item up to its
/// matching closing brace (braces inside string and character literals do not count).
fn without_tests(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        rest = &rest[at + MARK.len()..];
        let mut depth = 0usize;
        let mut end = rest.len();
        let mut in_string = false;
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if in_string {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '\'' if rest[i..].len() >= 3 && rest[i + 2..].starts_with('\'') => {
                    chars.next();
                    chars.next();
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A cycle in `uses`, as the modules along it, if there is one.
fn cycle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == module) {
            let mut found = path[start..].to_vec();
            found.push(module.to_owned());
            return Some(found);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in uses.get(module).into_iter().flatten() {
            if let Some(found) = visit(next, uses, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    uses.keys().find_map(|m| visit(m, uses, &mut Vec::new(), &mut done))
}

#[test]
fn the_check_sees_a_cycle_and_skips_tests_and_comments() {
    let uses = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert!(cycle(&uses).is_some());
    let code = "use crate::task::Task; // crate::engine\n/// [`crate::ports`]\nfn f() { let s = \"}\"; }\n#[cfg(test)]\nmod tests {\n    fn g() { let c = '{'; crate::testing::at(\"x\"); }\n}\nuse crate::kernel::ids;\n";
    let named = crate_paths(&without_tests(&without_comments(code)));
    assert_eq!(named, BTreeSet::from(["task".to_owned(), "kernel".to_owned()]));
}
