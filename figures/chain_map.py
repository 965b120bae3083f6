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

#: what sits across the chain rather than on one link: the calibration chapter and the labs (file under the root)
ACROSS = [("chapters/14_calibration", "Checking the model against reality")] + [
    (f"labs/{stem}", fallback) for stem, fallback in (("L1_collectives", "Collectives"), ("L2_sharding", "Sharding memory"),
                                                      ("L3_activations", "Activations"), ("L4_resume", "Exact resume"))]

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
MAX_LINES = 4            # a title is wrapped, never cut: a longer one is an error (the reader's pass, finding 32)


class Layout:
    """One drawing of the map: ``wide`` (760 units, for a desktop column) or narrow (360 units, for a phone, where it
    is drawn at about its own size so its 12–15-unit text stays at 11 px or more)."""

    def __init__(self, wide: bool):
        self.wide = wide
        self.W = 760 if wide else 360
        # the wide drawing is shown at about 690 px in a desktop column (0.91 px a unit): its smallest text is 13.5
        # units so that it stays at 12 px or more; the narrow one at about 342 px (0.95 px a unit): 12 units
        self.title_px, self.char_w, self.line_h = (15, 8.5, 18) if wide else (13.5, 7.4, 16.5)
        self.small = 13.5 if wide else 12


def in_toc(path: str) -> bool:
    """True when ``path`` (``chapters/07_failures`` or a bare chapter stem) is listed in _toc.yml and exists."""
    path = path if "/" in path else f"chapters/{path}"
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    listed = re.search(rf"^\s*- file: {re.escape(path)}\s*$", toc, re.M) is not None
    return listed and (ROOT / f"{path}.ipynb").exists()


def title(path: str, fallback: str) -> tuple[str, str]:
    """(label, title) from the notebook's first heading: ``# N. Title`` → ("CHAPTER N", title); ``# Lab N. Title on a
    real engine`` → ("LAB N", title without "on a real engine")."""
    path = path if "/" in path else f"chapters/{path}"
    stem = path.split("/")[-1]
    lab = path.startswith("labs/")
    label = f"LAB {stem[1]}" if lab else f"CHAPTER {int(stem[:2])}"
    nb = ROOT / f"{path}.ipynb"
    if nb.exists():
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                m = re.match(r"#\s+(Lab\s+)?(\d+)\.\s+(.+)", "".join(cell["source"]).strip())
                if m:
                    name = m.group(3).strip()
                    return label, re.sub(r"\s+on a real engine$", "", name) if lab else name
                break
    return label, fallback


def wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap to lines of at most ``width`` characters; more than :data:`MAX_LINES` lines is refused (the
    box would cut the title)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    if len(lines) > MAX_LINES:
        raise ValueError(f"title {text!r} needs {len(lines)} lines of {width} characters; at most {MAX_LINES} fit")
    return lines


def box_lines(lay: Layout, path, fallback, w) -> tuple[str, list[str]]:
    label, name = title(path, fallback)
    return label, wrap(name, max(10, int((w - 16) / lay.char_w)))


def box_height(lay: Layout, n_lines: int) -> float:
    return 30 + lay.line_h * n_lines


def box(lay: Layout, x, y, w, h, path, fallback, colour, hotspots, note=()) -> str:
    """One chapter or lab box, solid when it is in the book (and recorded in ``hotspots`` to become a link), dashed
    when it is not yet."""
    label, text_lines = box_lines(lay, path, fallback, w)
    esc = html.escape
    linked = in_toc(path)
    ty = y + 21
    dash = "" if linked else ' stroke-dasharray="6 4"'
    parts = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="9" fill="{colour if linked else "#ffffff"}"'
             f' fill-opacity="{0.12 if linked else 1}" stroke="{colour if linked else "#888888"}" stroke-width="2"'
             f'{dash}/>',
             f'<text x="{x + 9}" y="{ty}" font-size="{lay.small}" font-weight="700" fill="#111111">{esc(label)}</text>']
    ink = "#111111" if linked else "#666666"
    for i, line in enumerate(text_lines):
        parts.append(f'<text x="{x + 9}" y="{ty + lay.line_h * (i + 1)}" font-size="{lay.title_px}" '
                     f'fill="{ink}">{esc(line)}</text>')
    for k, line in enumerate(note):
        parts.append(f'<text x="{x + w / 2}" y="{y + h - 14 - 16 * (len(note) - 1 - k)}" font-size="{lay.small}" '
                     f'text-anchor="middle" fill="#333333">{esc(line)}</text>')
    if linked:
        name = " ".join(text_lines)
        hotspots.append((x, y, w, h, path if "/" in path else f"chapters/{path}", f"{label.capitalize()}: {name}"))
    return "  " + "\n  ".join(parts)


def _row(lay: Layout, items, x0, x1, y, colour, hotspots, out, per_row=None, gap=10) -> float:
    """Boxes for ``items`` side by side between x0 and x1 (``per_row`` a row, wrapping), one height per row;
    returns the y under the last row."""
    per_row = per_row or len(items)
    for r in range(0, len(items), per_row):
        chunk = items[r:r + per_row]
        w = (x1 - x0 - gap * (per_row - 1)) / per_row
        h = max(box_height(lay, len(box_lines(lay, p, f, w)[1])) for p, f in chunk)
        for j, (p, f) in enumerate(chunk):
            out.append(box(lay, round(x0 + j * (w + gap), 1), round(y, 1), round(w, 1), round(h, 1), p, f, colour,
                           hotspots))
        y += h + gap
    return y - gap


DESC = ("The chain of scale runs from chip to nation: chip, node, cluster, datacenter, nation. Beside each link are the "
        "chapters about it. Chip: chapters 1 (the H100), 2 (the chip landscape) and 5 (FlashAttention). Node: "
        "chapters 3 (interconnect) and 6 (memory). Cluster: chapters 4 (parallelism), 7 (failures) and 8 (the "
        "training platform). Datacenter: chapters 9 (power) and 12 (inference and the future). Nation: chapters "
        "10 (export controls) and 11 (DeepSeek). Chapter 13, the walkthrough, spans every link. Across the chain: "
        "chapter 14 checks the models against published runs, and labs 1 to 4 run the mechanisms on a real engine.")


def _rows():
    rows = {i: [] for i in range(len(TIERS))}
    for stem, (tier, fallback) in CHAPTERS.items():
        rows[tier].append((stem, fallback))
    return rows


def _open(lay: Layout, H: float) -> list[str]:
    label = "The map of the chain: the chapters of Steel and Silicon from chip to nation. " + DESC
    return [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {lay.W} {round(H)}" width="100%" role="img" '
            f'aria-label="{html.escape(label)}" style="display:block;width:100%;height:auto;font-family:{FONT}">',
            '  <title>The map of the chain: the chapters of Steel and Silicon from chip to nation</title>',
            f'  <desc>{html.escape(DESC)}</desc>']


def svg_wide(hotspots=None):
    """The desktop drawing: the chain's links down the left, the chapters beside each, the walkthrough spanning them
    on the right, and a row across the chain (chapter 14, the labs) at the foot. Returns (svg, height)."""
    lay = Layout(True)
    hotspots = [] if hotspots is None else hotspots
    CHAIN_X, BOX_X0, BOX_X1, SPAN_X0, SPAN_X1, RING_H, TOP, GAP = 24, 196, 600, 616, 744, 100, 84, 30
    body = [f'  <text x="{CHAIN_X}" y="30" font-size="14" fill="#333333">THE CHAIN OF SCALE</text>',
            f'  <text x="{BOX_X0}" y="30" font-size="14" fill="#333333">THE CHAPTERS ABOUT EACH LINK</text>',
            f'  <text x="{CHAIN_X}" y="54" font-size="13.5" fill="#555555">At every link: can it compute? Can it '
            'feed the compute? Can it talk? Can it be supplied?</text>']
    rows, y, tops = _rows(), TOP, []
    for i, (name, sub) in enumerate(TIERS):
        colour = PALETTE[i % len(PALETTE)]
        n = len(rows[i])
        w = (BOX_X1 - BOX_X0 - 10 * (n - 1)) / n
        h = max(RING_H, max(box_height(lay, len(box_lines(lay, s, f, w)[1])) for s, f in rows[i]))
        if i:  # the interlock between this link and the one above
            body.append(f'  <rect x="{CHAIN_X + 55}" y="{tops[-1][0] + tops[-1][1] - 14}" width="40" '
                        f'height="{y - tops[-1][0] - tops[-1][1] + 28}" rx="20" fill="none" stroke="#555555" '
                        f'stroke-width="6"/>')
        body.append(f'  <rect x="{CHAIN_X}" y="{y}" width="150" height="{h}" rx="{h / 2}" fill="none" '
                    f'stroke="{colour}" stroke-width="7"/>\n'
                    f'  <text x="{CHAIN_X + 75}" y="{y + h / 2 - 4}" font-size="16" font-weight="700" '
                    f'text-anchor="middle" fill="#111111">{html.escape(name)}</text>\n'
                    f'  <text x="{CHAIN_X + 75}" y="{y + h / 2 + 16}" font-size="13.5" text-anchor="middle" '
                    f'fill="#333333">{html.escape(sub)}</text>')
        body.append(f'  <line x1="{CHAIN_X + 150}" y1="{y + h / 2}" x2="{BOX_X0 - 6}" y2="{y + h / 2}" '
                    f'stroke="{colour}" stroke-width="2" stroke-dasharray="3 3"/>')
        _row(lay, rows[i], BOX_X0, BOX_X1, y, colour, hotspots, body)
        tops.append((y, h))
        y += h + GAP
    chain_end = y - GAP
    body.append(box(lay, SPAN_X0, TOP, SPAN_X1 - SPAN_X0, chain_end - TOP, WALKTHROUGH[0], WALKTHROUGH[1],
                    PALETTE[7], hotspots, note=("running example:", "175B parameters,", "2T tokens,",
                                                "1,024 A100 GPUs")))
    y = chain_end + 34
    body.append(f'  <text x="{CHAIN_X}" y="{y}" font-size="13.5" fill="#333333">ACROSS THE CHAIN: THE MODELS '
                'CHECKED, AND THE MECHANISMS RUN ON A REAL ENGINE</text>')
    end = _row(lay, ACROSS, CHAIN_X, SPAN_X1, y + 12, "#555555", hotspots, body)
    H = end + 10
    return "\n".join(_open(lay, H) + body + ["</svg>"]) + "\n", H


def svg_narrow(hotspots=None):
    """The phone drawing: one link after another, its chapters two a row under it, then the walkthrough, then the
    row across the chain. Returns (svg, height)."""
    lay = Layout(False)
    hotspots = [] if hotspots is None else hotspots
    X0, X1, GAP = 8, 352, 10
    body = [f'  <text x="{X0}" y="22" font-size="13" fill="#333333">THE CHAIN OF SCALE, CHIP TO NATION</text>']
    rows, y = _rows(), 36
    for i, (name, sub) in enumerate(TIERS):
        colour = PALETTE[i % len(PALETTE)]
        body.append(f'  <rect x="{X0}" y="{y}" width="{X1 - X0}" height="30" rx="15" fill="none" stroke="{colour}" '
                    f'stroke-width="5"/>\n'
                    f'  <text x="{X0 + 16}" y="{y + 20}" font-size="15" font-weight="700" fill="#111111">'
                    f'{html.escape(name)}<tspan font-weight="400" font-size="13" fill="#333333"> — '
                    f'{html.escape(sub)}</tspan></text>')
        y = _row(lay, rows[i], X0 + 12, X1, y + 38, colour, hotspots, body, per_row=2) + 16
    h = box_height(lay, len(box_lines(lay, *WALKTHROUGH, X1 - X0)[1])) + 18
    body.append(box(lay, X0, y, X1 - X0, h, WALKTHROUGH[0], WALKTHROUGH[1], PALETTE[7], hotspots,
                    note=("every link: 175B, 2T tokens, 1,024 A100 GPUs",)))
    y += h + 28
    body.append(f'  <text x="{X0}" y="{y}" font-size="13" fill="#333333">ACROSS THE CHAIN</text>')
    end = _row(lay, ACROSS, X0, X1, y + 10, "#555555", hotspots, body, per_row=2)
    H = end + 8
    return "\n".join(_open(lay, H) + body + ["</svg>"]) + "\n", H


def svg(hotspots=None) -> str:
    """The desktop figure as a standalone SVG (a picture: the links are laid over it by :func:`embed`)."""
    return svg_wide(hotspots)[0]


def _linked(picture, H, W, hotspots, cls) -> str:
    links = []
    for x, y, w, h, path, label in hotspots:
        style = (f"position:absolute;left:{100 * x / W:.3f}%;top:{100 * y / H:.3f}%;"
                 f"width:{100 * w / W:.3f}%;height:{100 * h / H:.3f}%;border-radius:9px")
        links.append(f'  <a class="chain-map-link" href="../{path}.html" title="{html.escape(label)}" '
                     f'style="{style}"><span class="visually-hidden">{html.escape(label)}</span></a>')
    return (f'<div class="chain-map {cls}" style="position:relative;max-width:{W}px;margin:0 auto">\n{picture}'
            + "\n".join(links) + "\n</div>\n")


def embed() -> str:
    """The HTML the page includes: the desktop and the phone drawing (a media query shows one), each with one
    ordinary link laid over each box.

    The links are HTML anchors positioned in percentages of the figure, so they scale with it, take keyboard focus,
    and are what a crawler or screen reader finds; the drawing underneath stays a plain labelled image.
    """
    style = ("<style>.chain-map-link:hover,.chain-map-link:focus-visible{outline:3px solid #0072B2;outline-offset:2px}"
             ".chain-map-narrow{display:none}@media (max-width:600px){.chain-map-wide{display:none}"
             ".chain-map-narrow{display:block}}</style>")
    wide_spots, narrow_spots = [], []
    wide, wh = svg_wide(wide_spots)
    narrow, nh = svg_narrow(narrow_spots)
    return (style + "\n" + _linked(wide, wh, 760, wide_spots, "chain-map-wide")
            + _linked(narrow, nh, 360, narrow_spots, "chain-map-narrow"))


def main() -> int:
    OUT.write_text(svg(), encoding="utf-8")
    EMBED.write_text(embed(), encoding="utf-8")
    every = [*CHAPTERS, WALKTHROUGH[0], *(p for p, _ in ACROSS)]
    linked = sum(in_toc(s) for s in every)
    print(f"chain_map: wrote {OUT.relative_to(ROOT)} and {EMBED.relative_to(ROOT)} "
          f"({linked} of {len(every)} chapters and labs linked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
