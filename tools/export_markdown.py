"""Write every chapter as a MyST Markdown notebook (``NN_topic.md``) beside its page in the built site.

The site's download button offers each chapter's ``.ipynb``; this adds a plain-text version that diffs well, opens in
any editor, and that Jupyter (with jupytext) or Jupyter Book can run as a notebook. Outputs are not included: the
text is the chapter's source. Format: jupytext's "myst" notebook format (``{code-cell}`` blocks, ``+++`` between
Markdown cells).

Run from the project root after the build:  python tools/export_markdown.py _build/html/chapters
The zh-CN edition's, from its translated copy:  python tools/export_markdown.py _build/html/zh-CN/chapters _build/zh-CN-src/chapters
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def to_myst(nb: dict) -> str:
    """The notebook's cells as MyST Markdown text."""
    parts = [HEADER]
    previous = None
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            if previous == "markdown":
                parts.append("+++\n")
            parts.append(src.rstrip() + "\n")
        elif cell["cell_type"] == "code":
            tags = cell.get("metadata", {}).get("tags", [])
            opts = f":tags: [{', '.join(tags)}]\n" if tags else ""
            parts.append(f"```{{code-cell}} ipython3\n{opts}{src.rstrip()}\n```\n")
        previous = cell["cell_type"]
    return "\n".join(parts)


def main(out_dir: str, src_dir: str | None = None) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    chapters = sorted(Path(src_dir or ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    for path in chapters:
        nb = json.loads(path.read_text(encoding="utf-8"))
        (out / f"{path.stem}.md").write_text(to_myst(nb), encoding="utf-8")
    print(f"export_markdown: {len(chapters)} chapters written to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "_build/html/chapters", sys.argv[2] if len(sys.argv) > 2 else None)
