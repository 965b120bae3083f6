"""Link each chapter's first use of every glossary term to book/glossary.md (MyST ``{term}`` role) — only where the
phrase means the term.

Rules (``judge`` applies them; ``tests/test_glossary_links.py`` checks every link in the book with it):

* **Case.** An acronym or a name with inner capitals (ZeRO, HBM, SM, MoE, NVLink, FP8, bfloat16) matches only as
  written, so "rounds to zero" never reaches ZeRO. A common-word term (Die, Node, Dense) matches with its first
  letter in either case ("Node" / "node"), the rest as written in the glossary or in lower case.
* **Words.** Whole words only, with an optional plural "s"/"es" ("warps" → Warp); never inside a longer glossary
  term ("gradient" in "gradient accumulation", "node" in "process node").
* **Senses and idioms.** ``SENSES`` says, for the terms whose word has an everyday meaning, which contexts mean the
  term and which do not: "a training run dies" is not the silicon die, "a dense model" is not a dense (non-sparse)
  throughput figure, "slipped an exponent" is not a floating-point exponent field, "5 → 3 nm node names" is not a
  server node.

Idempotent: a term already linked in a chapter is left alone. Only prose is touched — never headings, code, math,
roles, links, HTML, directive options or admonition titles.

Run from the project root:
    python tools/link_glossary.py [--fix | --unlink-only] [--dry-run] [chapters/*.ipynb]
``--fix`` first turns every wrong link back into plain text (``{term}`zeros <ZeRO>``` → ``zeros``), then links
first uses; ``--unlink-only`` only removes the wrong links. ``--dry-run`` prints what would change (a diff) and writes nothing. Only markdown cells change:
stored outputs stay valid, so no re-execution is needed.
"""
from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MASK = re.compile(r"(\{[\w:-]+\}`[^`]*`|``[^`]*``|`[^`]*`|\$\$.*?\$\$|\$[^$\n]+\$|\[[^\]]*\]\([^)]*\)|<[^>]+>|"
                  r"https?://\S+)")
#: a glossary role: {term}`Term` or {term}`phrase <Term>`
ROLE = re.compile(r"\{term\}`([^`<]*?)(?:\s*<([^>`]+)>)?`")
ANY_ROLE = re.compile(r"\{[\w:-]+\}`([^`<]*?)(?:\s*<[^>`]+>)?`")

#: contexts for terms whose word has an everyday meaning, as regexes over plain text (roles unwrapped):
#: "not_before" matches the text just before the phrase (ends with $), "not_after" the text just after it (starts
#: with ^) — the stop list of idioms and other senses; "require": the phrase means the term only if this matches the
#: 40 characters on either side.
_PRECISIONS = (r"(BF16|FP\d+|TF32|INT\d|\d+-bit|TFLOP|TOPS|FLOP|peak|figure|rate|throughput|compute|tensor|Tensor|"
               r"sparse|dense|Dense|Sparse|MacTOPS|datasheet)")
SENSES: dict[str, dict[str, str]] = {
    "Die": {"require": r"\b(the|a|one|two|three|four|each|per|its|their|large|small|single|compute|logic|GPU|B200|"
                       r"reticle-sized|\d+)\s+dies?\b|\bdies?\s*(area|size|shot|count)|-to-die",
            "not_before": r"\b(run|runs|job|jobs|process|training|it|they|that|which|who|cell|kernel|to|will|would|"
                          r"may|might|can|could|must|should|never)\s+$",
            "not_after": r"^\s*(before|when|after|mid|in the|of|out|down|hard)\b"},
    "Node": {"not_near": r"\bnm\b|density|foundr|TSMC|\bprocess\b|lithograph|transistor",
             "not_before": r"(\bprocess(ing)?|\bmanufacturing|\bnm|\bN\d|\bleaf|\bgraph|\btree|\bTSMC)\s*$",
             "not_after": r"^\s*(names?|shrinks?|generations?|labels?)\b"},
    "Dense": {"require": _PRECISIONS,
              "not_after": r"^\s*(\d|model|models|run|runs|transformer|network|LLM|layer|architecture|→)",
              "not_before": r"\b(large|largest)\s+$"},
    "Sparse": {"require": _PRECISIONS,
               "not_after": r"^\s*(or \w+ )?(attention|model|models|expert|experts|MoE|activations?|matri(x|ces))"},
    "Exponent": {"require": r"\b(bits?|mantissa|range|FP\d+|BF16|TF32|E\dM\d|format|sign)\b",
                 "not_before": r"\b(slip|slipped|slips|an|the wrong)\s+$", "not_after": r"^\s*of (ten|10)\b"},
    "Precision": {"not_before": r"\b(relative|false|numerical|decimal|two-digit|three-digit|with|full)\s+$",
                  "not_after": r"^\s*(and recall)\b"},
    "Attention": {"not_before": r"\b(pay|pays|paid|paying|draw|draws|drew|deserves?|needs?|little|more|less|much|"
                                r"close|the reader's|your)\s+$",
                  "not_after": r"^\s*to\b"},
    "Cluster": {"not_after": r"^\s*(around|together|near)\b"},
    "Rack": {"not_after": r"^\s*up\b"},
    "Recipe": {"not_near": r"precision|bytes per|mixed-adam|master weights|FP32|BF16",
               "require": r"(?i)experiment|learning rate|warm-up|schedule|mixture|config|version|hyperparam|tier",
               "not_after": r"^\s*for (disaster|success)"},
    "Token": {"not_after": r"^\s*(gesture|effort|amount)"},
    "Checkpoint": {"not_before": r"\b(security|border|police)\s+$"},
    "Interconnect": {"not_before": r"\b(to|will|that|which|they)\s+$", "not_after": r"^\s*(with|to)\b"},
    "Warp": {"not_before": r"\b(time|space)\s+$", "not_after": r"^\s*(speed|drive)"},
    "Decode": {"not_before": r"\b(to|can|cannot|must|could|will)\s+$"},
    "Parameter": {"not_after": r"^\s*(sweep|space)\b"},
}


#: other spellings that name the term itself (a vendor's own capitalisation)
VARIANTS: dict[str, tuple[str, ...]] = {"SuperPOD": ("SuperPoD",)}


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


def _acronym(word: str) -> bool:
    return any(ch.isdigit() for ch in word) or any(c.isupper() for c in word[1:])


def case_sensitive(term: str) -> bool:
    """Does ``term`` contain an acronym or a name with inner capitals or digits (ZeRO, HBM, MoE, NVLink, FP8)?

    Such words match only as written; the other words of a term match with either case of their first letter.

    >>> [case_sensitive(t) for t in ("ZeRO", "SM", "NVLink", "bfloat16", "Die", "Tensor Core", "Moore's law")]
    [True, True, True, True, False, False, False]
    """
    return any(_acronym(w) for w in re.split(r"[\s/-]+", term))


def term_pattern(term: str, forms: bool = True) -> re.Pattern:
    """Whole-word pattern for ``term`` (with ``forms``: an optional plural and VARIANTS); case rule as in the
    module docstring.

    >>> bool(term_pattern("ZeRO").search("rounds to zero")), bool(term_pattern("ZeRO").search("ZeRO stage 1"))
    (False, True)
    >>> term_pattern("Die").search("two dies on one package").group(0)
    'dies'
    >>> term_pattern("Model FLOPs utilisation").search("the model FLOPs utilisation (MFU)").group(0)
    'model FLOPs utilisation'
    """
    def word(w: str) -> str:
        if _acronym(w) or not w:
            return re.escape(w)
        return f"[{re.escape(w[0].upper())}{re.escape(w[0].lower())}]" + "".join(
            f"[{re.escape(c)}{re.escape(c.lower())}]" if c.isupper() else re.escape(c) for c in w[1:])

    def spelled(t: str) -> str:
        return "".join(word(w) if i % 2 == 0 else re.escape(w) for i, w in enumerate(re.split(r"([\s/-]+)", t)))

    body = "|".join(spelled(t) for t in (term, *(VARIANTS.get(term, ()) if forms else ())))
    return re.compile(rf"(?<![\w-])(?:{body}){'(?:e?s)?' if forms else ''}(?![\w-])")


def is_name(phrase: str, term: str) -> bool:
    """Is ``phrase`` the term's own name (no plural, no other spelling; first letters of ordinary words in any case)?

    >>> is_name("model FLOPs utilisation", "Model FLOPs utilisation"), is_name("GPUs", "GPU"), is_name("zero", "ZeRO")
    (True, False, False)
    """
    return bool(term_pattern(term, forms=False).fullmatch(phrase))


def strip_roles(text: str) -> str:
    """Plain text of markdown: every ``{role}`phrase <target>``` becomes ``phrase``, emphasis markers dropped."""
    return ANY_ROLE.sub(lambda m: m.group(1), text).replace("**", "").replace("*", "")


def _inside_longer(term: str, phrase: str, before: str, after: str, terms: list[str]) -> bool:
    window_before = before[-60:]
    window = window_before + phrase + after[:60]
    start, end = len(window_before), len(window_before) + len(phrase)
    for other in terms:
        if len(other) <= len(term) or term.lower() not in other.lower():
            continue
        for m in term_pattern(other).finditer(window):
            if m.start() <= start and m.end() >= end:
                return True
    return False


def judge(term: str, phrase: str, before: str, after: str, terms: list[str] | None = None) -> str | None:
    """Why ``phrase`` (between plain texts ``before`` and ``after``) does not mean glossary ``term``; None if it does.

    >>> judge("ZeRO", "zero", "anything below 6e-8 rounds to ", ".")
    'case: "zero" is not the name ZeRO'
    >>> judge("Die", "dies", "the most common way a training run ", " before it starts")
    'sense: "dies" here is not the term Die (stop list)'
    >>> judge("Die", "die", "HBM3 stacked beside the ", ", read at") is None
    True
    """
    m = term_pattern(term).fullmatch(phrase)
    if not m:
        return f'case: "{phrase}" is not the name {term}'
    rule = SENSES.get(term, {})
    near_before, near_after = before[-40:], after[:40]
    if "not_before" in rule and re.search(rule["not_before"], near_before) or \
            "not_after" in rule and re.search(rule["not_after"], near_after):
        return f'sense: "{phrase}" here is not the term {term} (stop list)'
    if "not_near" in rule and re.search(rule["not_near"], f"{before[-120:]} {phrase} {after[:80]}"):
        return f'sense: "{phrase}" here is not the term {term} (its neighbourhood speaks of another sense)'
    if "require" in rule and not re.search(rule["require"], f"{near_before} {phrase} {near_after}"):
        return f'sense: nothing around "{phrase}" says it means the term {term}'
    if terms and _inside_longer(term, phrase, before, after, terms):
        return f'word: "{phrase}" is part of a longer glossary term'
    return None


def _prose_lines(text: str):
    """Yield (index, line) of the lines of a markdown cell the linker may touch."""
    fence, in_math = False, False
    for j, line in enumerate(text.split("\n")):
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith(":::"):
            fence = not fence if stripped.strip() in ("```", ":::") else True
            continue
        if stripped.startswith("$$"):
            in_math = not in_math or stripped.rstrip().endswith("$$") and len(stripped.strip()) > 2
            continue
        if in_math or stripped.startswith(("#", ":", "|--", "<")) or not stripped:
            continue
        yield j, line


def _context(text: str) -> str:
    """Plain text on one line (roles unwrapped, newlines as spaces), for ``judge``'s windows."""
    return strip_roles(text).replace("\n", " ")


def _link_in_line(line: str, pattern: re.Pattern, term: str, terms: list[str] | None = None, pre: str = "",
                  post: str = ""):
    """Replace the first unmasked match in ``line`` that means ``term``; return (new_line, done).

    ``pre`` and ``post`` are the cell's text before and after the line (context only; never changed).
    """
    pos = 0
    for m in list(MASK.finditer(line)) + [None]:
        end = m.start() if m else len(line)
        segment = line[pos:end]
        for hit in pattern.finditer(segment):
            word = hit.group(0)
            a, b = pos + hit.start(), pos + hit.end()
            if judge(term, word, _context(pre[-300:] + "\n" + line[:a]), _context(line[b:] + "\n" + post[:200]), terms):
                continue
            role = f"{{term}}`{word}`" if word == term else f"{{term}}`{word} <{term}>`"
            return line[:a] + role + line[b:], True
        if m is None:
            break
        pos = m.end()
    return line, False


def unlink_wrong(text: str, terms: list[str], log: list[str] | None = None) -> str:
    """``text`` with every glossary role that does not mean its term turned back into its plain phrase."""
    known = set(terms)
    out, pos = [], 0
    for m in ROLE.finditer(text):
        phrase, term = m.group(1).strip(), (m.group(2) or m.group(1)).strip()
        why = judge(term, phrase, _context(text[max(0, m.start() - 300):m.start()]),
                    _context(text[m.end():m.end() + 200]), terms) if term in known else None
        out.append(text[pos:m.start()])
        out.append(phrase if why else m.group(0))
        if why and log is not None:
            log.append(f"unlinked {phrase!r} → {term}: {why}")
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def link_audit(text: str, terms: list[str]) -> list[tuple[str, str, str | None]]:
    """(phrase, term, why-wrong-or-None) for every glossary role in ``text``."""
    known = set(terms)
    out = []
    for m in ROLE.finditer(text):
        phrase, term = m.group(1).strip(), (m.group(2) or m.group(1)).strip()
        why = judge(term, phrase, _context(text[max(0, m.start() - 300):m.start()]),
                    _context(text[m.end():m.end() + 200]), terms) if term in known else "unknown glossary term"
        out.append((phrase, term, why))
    return out


def link_texts(texts: list[str], terms: list[str], fix: bool = False, log: list[str] | None = None,
               link: bool = True) -> list[str]:
    """Markdown cell texts with wrong links removed (``fix``) and first uses linked (``link``)."""
    texts = [unlink_wrong(t, terms, log) for t in texts] if fix else list(texts)
    if not link:
        return texts
    whole = "\n".join(texts)
    for term in sorted(terms, key=len, reverse=True):
        if re.search(rf"\{{term\}}`({re.escape(term)}|[^`<]*<{re.escape(term)}>)`", whole):
            continue
        pattern = term_pattern(term)
        done = False
        for i, text in enumerate(texts):
            lines = text.split("\n")
            for j, line in _prose_lines(text):
                new, done = _link_in_line(line, pattern, term, terms, "\n".join(lines[:j]), "\n".join(lines[j + 1:]))
                if done:
                    lines[j] = new
                    texts[i] = "\n".join(lines)
                    if log is not None:
                        log.append(f"linked {term}")
                    break
            if done:
                break
        whole = "\n".join(texts)
    return texts


def link_notebook(path: Path, terms: list[str], fix: bool = False, dry_run: bool = False,
                  link: bool = True) -> tuple[int, str]:
    """Link (and with ``fix`` unlink) ``path`` in place; return (number of changes, unified diff of the prose)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
    texts = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    log: list[str] = []
    new = link_texts(texts, terms, fix=fix, log=log, link=link)
    diff = "".join(difflib.unified_diff("\n".join(texts).splitlines(True), "\n".join(new).splitlines(True),
                                        f"a/{path.name}", f"b/{path.name}", n=0))
    if not dry_run and new != texts:
        for c, old, text in zip(cells, texts, new):
            if text != old:   # touch only changed cells, in the notebook's own line-list form
                c["source"] = text.splitlines(keepends=True) if isinstance(c["source"], list) else text
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(log), diff


def main(argv):
    unlink_only = "--unlink-only" in argv
    fix, dry = "--fix" in argv or unlink_only, "--dry-run" in argv
    terms = glossary_terms()
    paths = [Path(a) for a in argv if not a.startswith("--")] or sorted(
        (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    for p in paths:
        n, diff = link_notebook(p, terms, fix=fix, dry_run=dry, link=not unlink_only)
        print(f"{p.name}: {n} change(s){' (dry run)' if dry else ''}")
        if dry and diff:
            print(diff)


if __name__ == "__main__":
    main(sys.argv[1:])
