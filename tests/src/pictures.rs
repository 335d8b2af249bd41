//! Whether the README's pictures show the current pages: `make pictures` records, beside the
//! pictures, a fingerprint of what shapes every page — the dashboard's templates and its
//! stylesheet — and a test fails when the pages have changed since (`tests/stack/house.rs`),
//! naming the command that makes them again.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Where the fingerprint is kept, beside the pictures (under the repository's root).
pub const RECORDED: &str = "docs/pictures.sha256";

/// The folders whose files shape the pages, under the repository's root.
const PAGES: [&str; 2] = ["functions/dashboard/templates", "functions/dashboard/assets"];

fn files(dir: &Path, into: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files(&path, into)?;
        } else {
            into.push(path);
        }
    }
    Ok(())
}

/// The SHA-256 of every file that shapes the pages, by its path under `root` and its bytes, in
/// path order.
pub fn fingerprint(root: &Path) -> std::io::Result<String> {
    let mut found = Vec::new();
    for dir in PAGES {
        files(&root.join(dir), &mut found)?;
    }
    found.sort();
    let mut hash = Sha256::new();
    for file in &found {
        let name = file.strip_prefix(root).unwrap_or(file).to_string_lossy().replace('\\', "/");
        hash.update(name.as_bytes());
        hash.update([0]);
        hash.update(std::fs::read(file)?);
        hash.update([0]);
    }
    Ok(format!("{:x}", hash.finalize()))
}

/// The line `make pictures` writes: the fingerprint and what it is of.
pub fn record(fingerprint: &str) -> String {
    format!("{fingerprint}  the dashboard's templates and stylesheet the README's pictures were taken from (make pictures)\n")
}

/// The fingerprint recorded when the pictures were last made, if any.
pub fn recorded(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join(RECORDED)).ok()?;
    text.split_whitespace().next().map(str::to_owned)
}
