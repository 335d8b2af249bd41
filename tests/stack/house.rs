//! The house, read from its sources: no file of the product's code — every crate under
//! `shared/` and `functions/` — passes 900 lines, its tests apart (a file's `#[cfg(test)]` part
//! at its end, a `tests.rs`, a crate's `tests/` folder; the test crate itself is tests); and
//! the README's pictures were taken from the pages as they are.

use std::path::{Path, PathBuf};

/// The most lines of code a file holds, its tests apart.
const MAX_LINES: usize = 900;

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "tests" | "target" | "fixtures") {
                rust_files(&path, into);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            into.push(path);
        }
    }
}

#[test]
fn no_file_of_the_products_code_passes_900_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    let mut files = Vec::new();
    for top in ["shared", "functions"] {
        rust_files(&root.join(top), &mut files);
    }
    assert!(files.len() > 200, "read {} files: is this the workspace?", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).expect("readable source");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default().lines().count();
            (code > MAX_LINES).then(|| format!("{} ({code} lines)", file.strip_prefix(root).unwrap_or(file).display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines of code: {long:?}");
}

#[test]
fn the_readme_pictures_were_taken_from_the_current_pages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    let now = openloop_tests::pictures::fingerprint(root).expect("the dashboard's templates");
    let taken = openloop_tests::pictures::recorded(root);
    assert_eq!(
        taken.as_deref(),
        Some(now.as_str()),
        "the dashboard's templates or stylesheet changed since the README's pictures were taken: run `make pictures` and commit docs/"
    );
}
