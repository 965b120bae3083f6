"""Link each chapter's first use of every glossary term to book/glossary.md (MyST ``{term}`` role).

Idempotent: a term already linked in a chapter is left alone. Only prose is touched — never headings, code, math,
roles, links, HTML, directive options or admonition titles. Plural forms ("warps") link to the singular entry.

Run from the project root:  python tools/link_glossary.py [chapters/*.ipynb]   (then `make execute`)
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MASK = re.compile(r"(\{[\w:-]+\}`[^`]*`|``[^`]*``|`[^`]*`|\$\$.*?\$\$|\$[^$\n]+\$|\[[^\]]*\]\([^)]*\)|<[^>]+>|"
                  r"https?://\S+)")


def glossary_terms(path: Path = ROOT / "book" / "glossary.md") -> list[str]:
    """Every term of the ``{glossary}`` directive (entries may have several term lines)."""
    text = path.read_text(encoding="utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S)
    if not block:
        raise SystemExit("link_glossary: no {glossary} directive in book/glossary.md")
    terms = []
    for line in block.group(1).splitlines():
        if line and not line[0].isspace() and not line.startswith(":"):
            terms.append(line.strip())
    return terms


def _link_in_line(line: str, pattern: re.Pattern, term: str):
    """Replace the first unmasked match in ``line``; return (new_line, done)."""
    pos = 0
    for m in list(MASK.finditer(line)) + [None]:
        end = m.start() if m else len(line)
        segment = line[pos:end]
        hit = pattern.search(segment)
        if hit:
            word = hit.group(0)
            role = f"{{term}}`{word}`" if word == term else f"{{term}}`{word} <{term}>`"
            new = line[:pos] + segment[:hit.start()] + role + segment[hit.end():] + line[end:]
            return new, True
        if m is None:
            break
        pos = m.end()
    return line, False


def link_notebook(path: Path, terms: list[str]) -> int:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
    texts = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    whole = "\n".join(texts)
    added = 0
    for term in sorted(terms, key=len, reverse=True):
        if re.search(rf"\{{term\}}`({re.escape(term)}|[^`<]*<{re.escape(term)}>)`", whole):
            continue
        pattern = re.compile(rf"(?<![\w-]){re.escape(term)}(e?s)?(?![\w-])", flags=re.I)
        done = False
        for i, text in enumerate(texts):
            lines, fence, in_math = text.split("\n"), False, False
            for j, line in enumerate(lines):
                stripped = line.lstrip()
                if stripped.startswith("```") or stripped.startswith(":::"):
                    fence = not fence if stripped.strip() in ("```", ":::") else True
                    continue
                if stripped.startswith("$$"):
                    in_math = not in_math or stripped.rstrip().endswith("$$") and len(stripped.strip()) > 2
                    continue
                if in_math or stripped.startswith(("#", ":", "|--", "<")) or not stripped:
                    continue
                new, done = _link_in_line(line, pattern, term)
                if done:
                    lines[j] = new
                    texts[i] = "\n".join(lines)
                    added += 1
                    break
            if done:
                break
        whole = "\n".join(texts)
    for c, text in zip(cells, texts):
        c["source"] = text
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return added


def main(argv):
    terms = glossary_terms()
    paths = [Path(a) for a in argv] or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    for p in paths:
        print(f"{p.name}: {link_notebook(p, terms)} terms linked")


if __name__ == "__main__":
    main(sys.argv[1:])
