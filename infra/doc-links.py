#!/usr/bin/env python3
"""`make test` (lint): every relative link between README.md and the docs/ pages leads
somewhere — each `](path)` names a file that exists, and each `](path#anchor)` or `](#anchor)`
a heading of that page (GitHub's anchors: lower case, punctuation dropped, spaces as dashes).
Links to other sites (http, https, mailto) are not followed. Prints every broken link.
Drafts under docs/notes/ are not read."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^()\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(path):
    """The page's lines outside fenced code blocks."""
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield number, line


def slug(heading):
    text = re.sub(r"`|\*\*|__", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    found = set()
    for _, line in prose(path):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def main():
    # docs/notes/ holds drafts waiting to be folded into these pages: not read.
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "notes" not in p.relative_to(ROOT / "docs").parts)
    pages = [ROOT / "README.md", *docs]
    broken = []
    checked = 0
    for page in pages:
        for number, line in prose(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                checked += 1
                path, _, anchor = target.partition("#")
                file = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(ROOT)}:{number}: ({target})"
                if not file.exists():
                    broken.append(f"{where}: no file {path}")
                elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                    broken.append(f"{where}: no heading #{anchor} in {file.relative_to(ROOT)}")
    for line in broken:
        print(line)
    print(f"doc links: {checked} relative links in {len(pages)} pages, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
