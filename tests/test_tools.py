"""The build's helper scripts: MyST Markdown export and glossary linking."""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import export_markdown  # noqa: E402
import link_glossary  # noqa: E402


def test_markdown_export_keeps_every_cell():
    for path in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = export_markdown.to_myst(nb)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert text.count("```{code-cell} ipython3") == len(code), path.name
        for c in code:
            src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            assert src.rstrip() in text, f"{path.name}: a code cell is missing from the export"
        assert text.startswith("---\njupytext:")


def test_glossary_terms_are_parsed_and_every_chapter_link_is_to_a_term():
    terms = set(link_glossary.glossary_terms())
    assert len(terms) >= 80
    for path in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        text = path.read_text(encoding="utf-8")
        for role in re.findall(r"\{term\}`([^`]*)`", text):
            target = role.split("<")[-1].rstrip(">").strip() if "<" in role else role
            assert target in terms, f"{path.name}: {{term}} link to unknown term {target!r}"


def test_link_in_line_skips_code_math_and_roles():
    pattern = re.compile(r"(?<![\w-])HBM(e?s)?(?![\w-])", flags=re.I)
    line = "`HBM` and $HBM$ and {glue:}`HBM` then HBM here"
    new, done = link_glossary._link_in_line(line, pattern, "HBM")
    assert done and new.endswith("then {term}`HBM` here")
    assert new.startswith("`HBM` and $HBM$ and {glue:}`HBM`")
