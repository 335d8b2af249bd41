#!/usr/bin/env python3
"""`make test` (lint): every relative link between README.md, ARCHITECTURE.md and the docs/
pages leads somewhere — each `](path)` names a file that exists, and each `](path#anchor)` or
`](#anchor)` a heading of that page (GitHub's anchors: lower case, punctuation dropped, spaces
as dashes). Links to other sites (http, https, mailto) are not followed.

And everything a reader needs is in the repository: no page refers to a file outside it
(`../shared/…`, `CONTRACT.md`, `PUSHPRESS.md`, `FIELD-NOTES`) or to a numbered section of the
specification (`spec §23`, a bare `§7.4`, `spec 003`) — in prose or in code, since a reader
cannot open either. The fact goes on the page, or a link to the page in docs/ that holds it.

The same holds for the OpenAPI document the api serves and for the data files people edit
(rules/, words/, messages/, skills/).

And every error code the code can answer with is named in docs/api.md.

Prints every broken link, every outside reference and every undocumented code. Drafts under docs/notes/ are not read."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^()\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# What a reader of this repository cannot open: files beside it, and the specification's
# numbered sections. Case matters: `docs/pushpress.md` is ours, `PUSHPRESS.md` is not.
OUTSIDE = [
    (re.compile(r"\.\./shared/"), "a path outside the repository (../shared/)"),
    (re.compile(r"CONTRACT\.md"), "CONTRACT.md, which is not in the repository"),
    (re.compile(r"PUSHPRESS\.md"), "PUSHPRESS.md, which is not in the repository"),
    (re.compile(r"FIELD-NOTES"), "FIELD-NOTES, which is not in the repository"),
    (re.compile(r"spec\s*§"), "a numbered section of the specification (spec §)"),
    (re.compile(r"§\s*\d"), "a numbered section of the specification (§)"),
    (re.compile(r"\bspec\s+00\d\b"), "a document of the specification (spec 00N)"),
]


def prose(path):
    """The page's lines outside fenced code blocks."""
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield number, line


def outside_references(path):
    """Every line of the page, code included, that sends the reader outside the repository."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for pattern, what in OUTSIDE:
            match = pattern.search(line)
            if match:
                found.append((number, match.group(0), what))
                break
    return found


# Where the code names an error code it answers with: a domain refusal, an HTTP one, or a
# field rule's (`kernel::bounded`).
ERROR_CODE = re.compile(
    r'(?:InvalidInput::new|bad_request|ApiError::new\([^,()]+,|TextRule::(?:text|line)\([^,()]+,)\s*\(?\s*"([a-z][a-z_]+)"'
)


def undocumented_codes():
    """Every error code the code can answer with (tests left out) that docs/api.md does not name."""
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    codes = set()
    for source in [*(ROOT / "shared").rglob("*.rs"), *(ROOT / "functions").rglob("*.rs")]:
        if "tests" in source.parts:
            continue
        codes.update(ERROR_CODE.findall(source.read_text(encoding="utf-8").split("#[cfg(test)]")[0]))
    return len(codes), sorted(c for c in codes if f"`{c}`" not in api)


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
    pages = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *docs]
    broken = []
    outside = []
    checked = 0
    # Read for outside references too: the OpenAPI document the api serves (its descriptions
    # are the interface's), and the data files people edit (rules, words, messages, skills).
    served = [ROOT / "functions" / "api" / "openapi.json"]
    edited = sorted(p for d in ("rules", "words", "messages", "skills") for p in (ROOT / d).rglob("*") if p.is_file())
    for page in [*served, *edited]:
        for number, text, what in outside_references(page):
            outside.append(f"{page.relative_to(ROOT)}:{number}: `{text}`: {what}")
    for page in pages:
        for number, text, what in outside_references(page):
            outside.append(f"{page.relative_to(ROOT)}:{number}: `{text}`: {what}")
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
    counted, undocumented = undocumented_codes()
    for code in undocumented:
        print(f"docs/api.md: the error code `{code}` is answered by the code and named nowhere on the page")
    for line in broken:
        print(line)
    for line in outside:
        print(line)
    print(f"doc links: {checked} relative links in {len(pages)} pages, {len(broken)} broken")
    print(f"doc references: {len(outside)} to files outside the repository or to numbered spec sections"
          f" (also read: the OpenAPI document and {len(edited)} data files)")
    print(f"error codes: {counted} in the code, {len(undocumented)} missing from docs/api.md")
    return 1 if broken or outside or undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
