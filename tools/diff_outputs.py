"""Show what a reader would see change: the text outputs of chapter notebooks against a git revision.

    python tools/diff_outputs.py [--base REV] [chapters/NN_x.ipynb ...]

For each notebook, the plain text of every code cell's outputs (glued values as ``name = value``, and the text
inside HTML with tags stripped) is joined in cell order, and the two texts are diffed line by line; the differing
lines are printed. Used to list every printed number a change moved (closing notes), and to
check that a refactor moved none.
"""
from __future__ import annotations

import argparse
import difflib
import html
import json
import re
import subprocess
import sys
from pathlib import Path

TAG = re.compile(r"<[^>]+>")


def _texts(nb: dict) -> list[str]:
    out = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        parts = []
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                parts.append("".join(o.get("text", "")))
            data = o.get("data", {})
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            for mime, value in data.items():
                if mime.endswith("text/plain") or mime.endswith("text/markdown"):
                    text = "".join(value)
                    parts.append(f"{name} = {text}" if name else text)
            for mime in [m for m in data if m.endswith("text/html")]:
                text = html.unescape(TAG.sub(" ", "".join(data[mime])))
                parts.append(re.sub(r"[ \t]+", " ", text))
        out.append("\n".join(parts))
    return out


def diff(path: Path, base: str) -> list[str]:
    try:
        old = json.loads(subprocess.run(["git", "show", f"{base}:{path.as_posix()}"], capture_output=True,
                                        text=True, check=True).stdout)
    except subprocess.CalledProcessError:
        return [f"(new notebook: {path})"]
    new = json.loads(path.read_text(encoding="utf-8"))
    a = "\n".join(_texts(old)).splitlines()
    b = "\n".join(_texts(new)).splitlines()
    return [line for line in difflib.unified_diff(a, b, lineterm="", n=0) if not line.startswith(("---", "+++"))]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="HEAD")
    p.add_argument("notebooks", nargs="*", type=Path)
    args = p.parse_args(argv)
    paths = args.notebooks or sorted(Path("chapters").glob("*.ipynb"))
    changed = 0
    for path in paths:
        lines = diff(path, args.base)
        if lines:
            changed += 1
            print(f"== {path}")
            print("\n".join(lines))
    print(f"{changed} of {len(paths)} notebooks show different output against {args.base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
