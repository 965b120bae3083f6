"""Draw the map of the chain (figures/chain_map.svg): the book's chapters placed on the chip-to-nation chain.

Five links — chip, node, cluster, datacenter, nation — run down the left; each chapter sits beside the link it is
about, and the running example (chapter 13) spans them all. Every chapter box is a link to its page: the script writes
the drawing (``chain_map.svg``, a labelled image) and ``chain_map.html``, the same SVG inline with an ordinary HTML
link laid over each box, which ``book/chain_map.md`` includes with a ``raw`` directive. HTML anchors (rather than SVG
``<a>`` elements) are what keyboards, screen readers and link checkers handle best.

Chapters that are not yet listed in ``_toc.yml`` are drawn dashed and without a link, so the site never holds a
broken link; re-run this script when chapters are added:  python figures/chain_map.py
"""
from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "lib"))
from chipchain.plotting import PALETTE  # noqa: E402  (the book's colour-blind-safe palette)

OUT = ROOT / "figures" / "chain_map.svg"
EMBED = ROOT / "figures" / "chain_map.html"   #: what book/chain_map.md includes: the SVG plus its links

#: the links of the chain, top (smallest) to bottom (largest), with what each link's scale is
TIERS = [
    ("Chip", "one accelerator"),
    ("Node", "8 GPUs, one fabric"),
    ("Cluster", "thousands of nodes"),
    ("Datacenter", "hundreds of MW"),
    ("Nation", "who may buy what"),
]

#: chapter file stem -> (tier index, fallback title if the notebook does not exist yet)
CHAPTERS = {
    "01_h100": (0, "One chip: the H100"),
    "02_chip_landscape": (0, "The chip landscape"),
    "05_flashattention": (0, "FlashAttention"),
    "03_interconnect": (1, "Interconnect"),
    "06_memory": (1, "Memory"),
    "04_parallelism": (2, "Parallelism"),
    "07_failures": (2, "Failures"),
    "08_platform": (2, "The training platform"),
    "09_power": (3, "Power"),
    "12_inference_and_future": (3, "Inference and the future"),
    "10_export_controls": (4, "Export controls"),
    "11_deepseek": (4, "DeepSeek"),
}
WALKTHROUGH = ("13_walkthrough", "The walkthrough")

W, ROW_H, TOP = 760, 128, 84
CHAIN_X, BOX_X0, BOX_X1 = 24, 196, 600
SPAN_X0, SPAN_X1 = 616, 744
BOX_H = 92
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"


def in_toc(stem: str) -> bool:
    """True when ``chapters/<stem>`` is listed (not commented out) in _toc.yml and its notebook exists."""
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    listed = re.search(rf"^\s*- file: chapters/{re.escape(stem)}\s*$", toc, re.M) is not None
    return listed and (ROOT / "chapters" / f"{stem}.ipynb").exists()


def title(stem: str, fallback: str) -> tuple[str, str]:
    """(number, title) from the notebook's first heading ``# N. Title``, else from the fallback."""
    number = str(int(stem[:2]))
    path = ROOT / "chapters" / f"{stem}.ipynb"
    if path.exists():
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                m = re.match(r"#\s+(\d+)\.\s+(.+)", "".join(cell["source"]).strip())
                if m:
                    return m.group(1), m.group(2).strip()
                break
    return number, fallback


def wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap to lines of at most ``width`` characters (at most three lines, the last one shortened)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    if len(lines) > 3:
        lines = lines[:2] + [lines[2][: width - 1] + "…"]
    return lines


def box(x, y, w, h, stem, fallback, colour, hotspots) -> str:
    """One chapter box, solid when the chapter is in the book (and recorded in ``hotspots`` to become a link), dashed
    when it is not yet."""
    number, name = title(stem, fallback)
    esc = html.escape
    linked = in_toc(stem)
    text_lines = wrap(name, max(10, int((w - 14) / 8.4)))
    ty = y + 26
    dash = "" if linked else ' stroke-dasharray="6 4"'
    parts = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="9" fill="{colour if linked else "#ffffff"}"'
             f' fill-opacity="{0.12 if linked else 1}" stroke="{colour if linked else "#888888"}" stroke-width="2"'
             f'{dash}/>',
             f'<text x="{x + 10}" y="{ty}" font-size="12" font-weight="700" fill="{colour if linked else "#666666"}">'
             f'CHAPTER {esc(number)}</text>']
    ink = "#111111" if linked else "#666666"
    for i, line in enumerate(text_lines):
        parts.append(f'<text x="{x + 10}" y="{ty + 18 + 16 * i}" font-size="14" fill="{ink}">{esc(line)}</text>')
    if linked:
        hotspots.append((x, y, w, h, stem, f"Chapter {number}: {name}"))
    return "  " + "\n  ".join(parts)


def chain_link(cx, cy, label, sub, colour) -> str:
    """One link of the chain: an elongated ring with the scale's name and what it holds."""
    esc = html.escape
    return (f'  <rect x="{cx}" y="{cy}" width="150" height="{BOX_H}" rx="{BOX_H / 2}" fill="none" stroke="{colour}" '
            f'stroke-width="7"/>\n'
            f'  <text x="{cx + 75}" y="{cy + BOX_H / 2 - 4}" font-size="16" font-weight="700" text-anchor="middle" '
            f'fill="#111111">{esc(label)}</text>\n'
            f'  <text x="{cx + 75}" y="{cy + BOX_H / 2 + 15}" font-size="11.5" text-anchor="middle" fill="#333333">'
            f'{esc(sub)}</text>')


def height() -> int:
    return TOP + ROW_H * len(TIERS) + 10


def svg(hotspots=None) -> str:
    """The figure as a standalone SVG (a picture: the links are laid over it by :func:`embed`)."""
    hotspots = [] if hotspots is None else hotspots
    desc = ("The chain of scale runs down the left: chip, node, cluster, datacenter, nation. Beside each link are the "
            "chapters about it. Chip: chapters 1 (the H100), 2 (the chip landscape) and 5 (FlashAttention). Node: "
            "chapters 3 (interconnect) and 6 (memory). Cluster: chapters 4 (parallelism), 7 (failures) and 8 (the "
            "training platform). Datacenter: chapters 9 (power) and 12 (inference and the future). Nation: chapters "
            "10 (export controls) and 11 (DeepSeek). Chapter 13, the walkthrough, spans every link.")
    label = "The map of the chain: the chapters of Steel and Silicon from chip to nation. " + desc
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height()}" width="100%" role="img" '
           f'aria-label="{html.escape(label)}" style="display:block;width:100%;height:auto;font-family:{FONT}">',
           '  <title id="chain-map-title">The map of the chain: the chapters of Steel and Silicon from chip to '
           'nation</title>',
           f'  <desc id="chain-map-desc">{html.escape(desc)}</desc>',
           f'  <text x="{CHAIN_X}" y="30" font-size="13" fill="#333333">THE CHAIN OF SCALE</text>',
           f'  <text x="{BOX_X0}" y="30" font-size="13" fill="#333333">THE CHAPTERS ABOUT EACH LINK</text>',
           f'  <text x="{BOX_X0}" y="50" font-size="12" fill="#555555">Can it compute? Can it feed the compute? '
           'Can it talk? Can it be supplied?</text>']
    rows = {i: [] for i in range(len(TIERS))}
    for stem, (tier, fallback) in CHAPTERS.items():
        rows[tier].append((stem, fallback))
    for i, (name, sub) in enumerate(TIERS):
        y = TOP + i * ROW_H
        colour = PALETTE[i % len(PALETTE)]
        if i:  # the interlock between this link and the one above
            out.append(f'  <rect x="{CHAIN_X + 55}" y="{y - ROW_H + BOX_H - 14}" width="40" '
                       f'height="{ROW_H - BOX_H + 28}" rx="20" fill="none" stroke="#555555" stroke-width="6"/>')
        out.append(chain_link(CHAIN_X, y, name, sub, colour))
        out.append(f'  <line x1="{CHAIN_X + 150}" y1="{y + BOX_H / 2}" x2="{BOX_X0 - 6}" y2="{y + BOX_H / 2}" '
                   f'stroke="{colour}" stroke-width="2" stroke-dasharray="3 3"/>')
        n = len(rows[i])
        gap = 10
        w = (BOX_X1 - BOX_X0 - gap * (n - 1)) / n
        for j, (stem, fallback) in enumerate(rows[i]):
            out.append(box(round(BOX_X0 + j * (w + gap), 1), y, round(w, 1), BOX_H, stem, fallback, colour,
                           hotspots))
    span_h = ROW_H * (len(TIERS) - 1) + BOX_H
    out.append(box(SPAN_X0, TOP, SPAN_X1 - SPAN_X0, span_h, WALKTHROUGH[0], WALKTHROUGH[1], PALETTE[7], hotspots))
    for k, line in enumerate(("running example:", "175B parameters,", "2T tokens,", "1,024 A100 GPUs")):
        out.append(f'  <text x="{(SPAN_X0 + SPAN_X1) / 2}" y="{TOP + span_h - 72 + 16 * k}" font-size="11.5" '
                   f'text-anchor="middle" fill="#333333">{line}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def embed() -> str:
    """The HTML the page includes: the SVG, with one ordinary link laid over each chapter box.

    The links are HTML anchors positioned in percentages of the figure, so they scale with it, take keyboard focus,
    and are what a crawler or screen reader finds; the drawing underneath stays a plain labelled image.
    """
    hotspots = []
    picture = svg(hotspots)
    H = height()
    links = []
    for x, y, w, h, stem, label in hotspots:
        style = (f"position:absolute;left:{100 * x / W:.3f}%;top:{100 * y / H:.3f}%;"
                 f"width:{100 * w / W:.3f}%;height:{100 * h / H:.3f}%;border-radius:9px")
        links.append(f'  <a class="chain-map-link" href="../chapters/{stem}.html" title="{html.escape(label)}" '
                     f'style="{style}"><span class="visually-hidden">{html.escape(label)}</span></a>')
    hover = ("<style>.chain-map-link:hover,.chain-map-link:focus-visible"
             "{outline:3px solid #0072B2;outline-offset:2px}</style>")
    return (f'<div class="chain-map" style="position:relative;max-width:{W}px;margin:0 auto">\n{hover}\n{picture}'
            + "\n".join(links) + "\n</div>\n")


def main() -> int:
    OUT.write_text(svg(), encoding="utf-8")
    EMBED.write_text(embed(), encoding="utf-8")
    linked = sum(in_toc(s) for s in [*CHAPTERS, WALKTHROUGH[0]])
    print(f"chain_map: wrote {OUT.relative_to(ROOT)} and {EMBED.relative_to(ROOT)} "
          f"({linked} of {len(CHAPTERS) + 1} chapters linked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
