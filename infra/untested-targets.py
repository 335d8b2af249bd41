#!/usr/bin/env python3
"""make test's guard for `test = false`: make test builds and runs only the test harnesses of
targets that hold tests (`cargo test --tests`), so a test written in a library or binary
marked `test = false` would never run. This fails on any such test: a library's whole src/
(its binaries' files aside) and a binary's own file are read for #[test] and #[tokio::test]."""
import json, pathlib, re, subprocess, sys

meta = json.loads(subprocess.run(
    ["cargo", "metadata", "--format-version", "1", "--no-deps"],
    check=True, capture_output=True, text=True).stdout)
test_attr = re.compile(r"^\s*#\[(tokio::)?test\b", re.M)
found = []
for package in meta["packages"]:
    bins = {pathlib.Path(t["src_path"]) for t in package["targets"] if "bin" in t["kind"]}
    for target in package["targets"]:
        if target.get("test", True) or not {"lib", "bin"} & set(target["kind"]):
            continue
        src = pathlib.Path(target["src_path"])
        files = [src] if "bin" in target["kind"] else [
            f for f in src.parent.rglob("*.rs") if f not in bins and "bin" not in f.relative_to(src.parent).parts]
        found += [f"{f} (in {package['name']}'s {target['name']}, marked test = false)"
                  for f in files if test_attr.search(f.read_text())]
if found:
    sys.exit("tests that make test would never run — remove `test = false` from their target:\n  " + "\n  ".join(found))
print("test = false: no test in any such target")
