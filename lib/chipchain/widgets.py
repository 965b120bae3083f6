"""The one way chapters build explorables: controls over a render function.

A chapter defines (in chipchain, where it can be tested) a function that takes the controls' values as keyword
arguments and returns HTML (a string; use :mod:`chipchain.plotting`'s SVG charts and :func:`table` for figures and
tables). :func:`explore` wraps it:

* **In Jupyter** the controls recompute the output on every change.
* **On the static site** there is no kernel. When the environment variable ``CHIPCHAIN_STATIC=1`` is set (the book
  build sets it), every combination of control values is rendered in advance into nested ipywidgets ``Stack``s,
  and each control is linked to the stacks' ``selected_index`` with ``jslink``, which runs in the browser. Moving a
  slider on the published page switches the visible output, with no server.
* A render function that raises ``ValueError`` or ``KeyError`` (a bad combination of values) shows that message
  on one line instead of a traceback.

Controls are discrete on purpose: a slider moves over a list of values, so the static site can precompute them.

Controls are laid out as a form (:data:`FORM_CSS`, also in ``book/site.css``; each explorable's header carries it
for JupyterLab): one label column per explorable, sized to its longest description (labels wrap past 16 em, never
truncate), so every track starts at the same x; each slider's readout on its line, one readout width per form;
toggle buttons sized to their text; at ≤ 560 px each label takes its own line and the track and readout share the
next, with the result directly under the controls.

>>> ex = explore(lambda n: f"<b>{n * n}</b>", [Slider("n", "n", [1, 2, 3], value=2)], title="Squares")
>>> ex.render_current()
'<b>4</b>'
>>> print(repr(ex).splitlines()[0])
Explorable 'Squares' — n: 1 … 3 (3 positions)
"""
from __future__ import annotations

import html as _html
import itertools
import math
import os
import re
import time
from dataclasses import dataclass, field

from . import _check, plotting, tables
from ._i18n import gettext as _t, has_cjk as _has_cjk

__all__ = ["Slider", "Choice", "Toggle", "explore", "Explorable", "message", "static_mode",
           "MAX_STATIC_VIEWS", "REGISTRY", "explorer", "predict", "FORM_CSS", "VIEW_CSS", "STYLE"]

#: the most views one explorable may precompute for the static site
MAX_STATIC_VIEWS = 400
#: explorer factories registered with :func:`explorer`, for tests that time every view
REGISTRY: dict = {}


def static_mode() -> bool:
    """True when building the static site (``CHIPCHAIN_STATIC=1``)."""
    return os.environ.get("CHIPCHAIN_STATIC", "") not in ("", "0", "false", "False")


def _label(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass
class Slider:
    """A slider over a list of values (numbers or strings), shown with ``fmt`` (a format string or callable)."""

    name: str
    description: str
    values: list
    value: object = None
    fmt: object = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        self.values = list(self.values)
        if len(self.values) < 2:
            raise ValueError(f"values of slider {self.name!r} must hold at least two values, got {self.values!r}")
        if self.value is None:
            self.value = self.values[0]
        if self.value not in self.values:
            raise ValueError(f"value {self.value!r} of slider {self.name!r} is not one of its values")

    @property
    def labels(self) -> list[str]:
        """The positions as the reader sees them (in the reader's language, :mod:`chipchain._i18n`)."""
        if self.fmt is None:
            return [_t(_label(v)) for v in self.values]
        if callable(self.fmt):
            return [_t(str(self.fmt(v))) for v in self.values]
        return [_t(format(v, self.fmt)) for v in self.values]

    @property
    def index(self) -> int:
        return self.values.index(self.value)

    def summary(self) -> str:
        return f"{self.description}: {self.labels[0]} … {self.labels[-1]} ({len(self.values)} positions)"

    def build(self, label_em: float | None = None, readout_em: float | None = None):
        import ipywidgets as W

        w = W.SelectionSlider(options=list(zip(self.labels, range(len(self.values)))), index=self.index,
                              description=_t(self.description), continuous_update=True,
                              style={"description_width": _em(label_em)}, layout=W.Layout(width="100%"))
        return _classed(w, readout_em)


@dataclass
class Choice:
    """A drop-down over named options: ``options`` maps the label shown to the value passed."""

    name: str
    description: str
    options: dict
    value: object = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        if not isinstance(self.options, dict):
            self.options = {_label(o): o for o in self.options}
        if len(self.options) < 2:
            raise ValueError(f"options of choice {self.name!r} must hold at least two entries")
        self.values = list(self.options.values())
        if self.value is None:
            self.value = self.values[0]
        if self.value not in self.values:
            raise ValueError(f"value {self.value!r} of choice {self.name!r} is not one of its options")

    @property
    def labels(self) -> list[str]:
        return [_t(o) for o in self.options]

    @property
    def index(self) -> int:
        return self.values.index(self.value)

    def summary(self) -> str:
        return f"{self.description}: {len(self.values)} options"

    def build(self, label_em: float | None = None, readout_em: float | None = None):
        import ipywidgets as W

        w = W.Dropdown(options=list(zip(self.labels, range(len(self.values)))), index=self.index,
                       description=_t(self.description), style={"description_width": _em(label_em)},
                       layout=W.Layout(width="100%"))
        return _classed(w, None)


@dataclass
class Toggle:
    """An on/off switch (two toggle buttons), passing ``False`` or ``True``."""

    name: str
    description: str
    value: bool = False
    labels: list = field(default_factory=lambda: ["off", "on"])

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self.name!r}")
        if not isinstance(self.value, bool):
            raise ValueError(f"value of toggle {self.name!r} must be True or False, got {self.value!r}")
        self.values = [False, True]

    @property
    def index(self) -> int:
        return int(self.value)

    def summary(self) -> str:
        return f"{self.description}: {self.labels[0]}/{self.labels[1]}"

    def build(self, label_em: float | None = None, readout_em: float | None = None):
        import ipywidgets as W

        w = W.ToggleButtons(options=list(zip([_t(l) for l in self.labels], (0, 1))), index=self.index,
                            description=_t(self.description), layout=W.Layout(width="100%"),
                            style={"description_width": _em(label_em), "button_width": "auto"})
        return _classed(w, None)


# --- the form: one label column per explorable, readouts beside their slider ----------------------------------
#: width buckets (em) for a form's label column and for its sliders' readouts
_LABEL_EM = (6, 8, 10, 12, 14, 16)
_READOUT_EM = (3, 4, 5, 6, 7, 8, 10, 12, 14, 16)

#: the form's style (also in book/site.css): labels in one column that wraps, never truncates; tracks start at one
#: x; readouts on the slider's line, one width per form; toggle buttons sized to their text; on a phone (≤ 560 px)
#: each label takes its own line and the track and readout share the next.
FORM_CSS = (
    ".cc-form{max-width:100%;gap:.15em}"
    ".cc-form .widget-html-content{line-height:1.5}"
    ".cc-form .widget-box:not(.widget-hbox){flex-direction:column}"
    ".cc-form .widget-box>.widget-html,.cc-form .widget-box>.widget-box{width:auto;align-self:stretch;min-width:0}"
    ".cc-form .cc-ctl{display:flex;width:100%;max-width:100%;height:auto!important;"
    "min-height:var(--jp-widgets-inline-height,28px);align-items:center;margin:.2em 0;overflow:visible}"
    ".cc-form .cc-ctl>.widget-label{white-space:normal;overflow:visible;text-overflow:clip;line-height:1.25;"
    "height:auto!important;text-align:right;flex:0 0 auto;align-self:center;padding:.15em 0;margin:0 .8em 0 0}"
    ".cc-form .cc-ctl .slider-container{flex:1 1 6em;min-width:5em}"
    ".cc-form .cc-ctl .widget-readout{flex:0 0 auto;max-width:none;overflow:visible;text-overflow:clip;"
    "white-space:nowrap;text-align:left;margin-left:.9em}"
    + "".join(f".cc-form .cc-ro-{n} .widget-readout{{min-width:{n}em}}" for n in _READOUT_EM)
    + ".cc-form .cc-ctl.widget-dropdown>select{flex:1 1 auto;min-width:0;max-width:100%;height:auto;"
    "min-height:var(--jp-widgets-inline-height,28px)}"
    ".cc-form .cc-ctl.widget-toggle-buttons>div{flex:1 1 auto;min-width:0;display:flex;flex-wrap:wrap}"
    ".cc-form .cc-ctl .widget-toggle-button{width:auto;min-width:3em;padding:0 .8em;overflow:visible;"
    "text-overflow:clip;white-space:nowrap;margin:.1em .3em .1em 0}"
    "@media (max-width:560px){"
    ".cc-form .cc-ctl{flex-wrap:wrap;row-gap:0}"
    ".cc-form .cc-ctl>.widget-label{flex:0 0 100%;width:100%!important;max-width:100%;text-align:left;"
    "margin:0;padding:0}"
    ".cc-form .cc-ctl .slider-container{margin-left:.5em}"
    ".cc-form .cc-ctl .widget-readout{margin-left:.7em}}"
)
#: the style of the explorables' building blocks (:mod:`chipchain.views._layout`): headline cards (label, value in
#: bold, note; ``cc-good``/``cc-bad`` colour a value or a verdict), verdict lines and paragraphs. Classes, so the
#: hundreds of precomputed views of an explorable do not each repeat it.
VIEW_CSS = (
    ".cc-headline{display:grid;grid-template-columns:repeat(auto-fit,minmax(8.6em,1fr));gap:.45em;margin:.3em 0 .6em}"
    ".cc-headline>div{border:1px solid #ddd;border-radius:4px;padding:.35em .55em;min-width:0}"
    ".cc-headline>div>div{font-size:max(12px,.85em);color:#444;line-height:1.25}"
    ".cc-headline>div>div+div{font-weight:700;font-size:max(16px,1.2em);line-height:1.3;color:inherit}"
    ".cc-headline>div>div+div+div{font-weight:400;font-size:max(12px,.85em);color:#555;line-height:1.25}"
    ".cc-verdict,.cc-para{margin:.3em 0}.cc-ink{color:#222}"
    ".cc-para.cc-small{font-size:max(12px,.9em);color:#333}"
    ".cc-headline .cc-good,.cc-verdict.cc-good{color:#007A5A}.cc-headline .cc-bad,.cc-verdict.cc-bad{color:#B34700}"
)
#: the style of tables, charts, views and forms as one ``<style>`` element (each explorable's header carries it)
STYLE = f"<style>{tables.TABLE_CSS}{plotting.CHART_CSS}{VIEW_CSS}{FORM_CSS}</style>"


def _bucket(value: float, buckets) -> float:
    return next((b for b in buckets if b >= value), buckets[-1])


def _em(width) -> str:
    return "initial" if width is None else f"{width:g}em"


def _classed(widget, readout_em):
    widget.add_class("cc-ctl")
    if readout_em is not None:
        widget.add_class(f"cc-ro-{readout_em:g}")
    return widget


def _ems(text: str, latin: float) -> float:
    """Width of ``text`` in em: ``latin`` a Latin character, a full em a Chinese one."""
    return sum(1.0 if _has_cjk(ch) else latin for ch in text)


def _form_widths(controls) -> tuple[float, float]:
    """(label column, readout) widths in em for one form: the longest description (wrapping past 16 em) and the
    longest slider position label, rounded up to a bucket so forms look alike."""
    label = max(_ems(_t(c.description), 0.55) + 0.6 for c in controls)
    readouts = [_ems(l, 0.62) + 0.4 for c in controls if isinstance(c, Slider) for l in c.labels]
    return _bucket(label, _LABEL_EM), _bucket(max(readouts, default=3), _READOUT_EM)


#: a library message starts with the argument it refuses, ``dtype='fp8': …`` — useful in code, not to a reader
_ARG_PREFIX = re.compile(r"^\w+=(?:'[^']*'|\"[^\"]*\"|[^\s:]+):\s*")
#: catalog precision keys as a reader writes them
_PRECISION_WORDS = {"fp64_tensor": "FP64 Tensor Core", "fp64": "FP64", "fp32": "FP32", "tf32": "TF32", "bf16": "BF16",
                    "fp16": "FP16", "fp8": "FP8", "int8": "INT8"}


def reader_text(text: str) -> str:
    """A library error message as a reader should see it in an explorer: without the leading ``argument=value:``
    and with catalog precision keys in their printed form (``fp64_tensor`` → "FP64 Tensor Core").

    >>> reader_text("dtype='fp8': A100-SXM-80GB has no fp8 peak in the catalog (it has: fp64, fp64_tensor, bf16)")
    'A100-SXM-80GB has no FP8 peak in the catalog (it has: FP64, FP64 Tensor Core, BF16)'
    """
    text = _ARG_PREFIX.sub("", str(text), count=1)
    return re.sub(r"\b(" + "|".join(_PRECISION_WORDS) + r")\b", lambda m: _PRECISION_WORDS[m.group(1)], text)


def message(text: str) -> str:
    """A one-line notice (used for invalid combinations) as HTML."""
    return (f'<div class="cc-message" role="status" style="padding:.4em .7em;border-left:4px solid #D55E00;'
            f'background:#fff4ec">{_html.escape(str(text))}</div>')


def _svg_label(match) -> str:
    found = re.search(r'aria-label="([^"]*)"', match.group(0))
    return f"\n[chart: {found.group(1)}]\n" if found else "\n[chart]\n"


def _plain(html_text: str) -> str:
    """Readable text of an HTML fragment, for the deterministic text repr that nbval compares."""
    text = re.sub(r"<style.*?</style>", "", html_text, flags=re.S)
    text = re.sub(r'<figure class="cc-chart".*?</figure>', _svg_label, text, flags=re.S)   # legend and title too
    text = re.sub(r"<svg.*?</svg>", _svg_label, text, flags=re.S)
    text = re.sub(r"<(br|/p|/div|/tr|/li|/h\d|/caption)[^>]*>", "\n", text)
    text = re.sub(r"</t[dh]>", " | ", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = _html.unescape(text)
    lines = [re.sub(r"[ \t]+", " ", l).strip(" |") for l in text.splitlines()]
    return "\n".join(l for l in lines if l)


class Explorable:
    """Controls plus a render function; displays as live widgets (or precomputed stacks on the static site)."""

    def __init__(self, render, controls, title: str = ""):
        if not callable(render):
            raise ValueError(f"render must be callable, got {render!r}")
        controls = list(controls)
        if not controls:
            raise ValueError("controls must hold at least one control")
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"control names must be unique, got {names!r}")
        self.render = render
        self.controls = controls
        self.title = str(title)
        self._widget = None
        self.links = []          #: the jslinks of the static form (empty in live mode)

    # --- rendering -------------------------------------------------------------------------------------------
    def render_at(self, indices) -> str:
        """HTML for the control positions ``indices``; bad combinations give a one-line message."""
        kwargs = {c.name: c.values[i] for c, i in zip(self.controls, indices)}
        try:
            out = self.render(**kwargs)
        except (ValueError, KeyError) as exc:
            text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            return message(_t("Not possible: {reason}").format(reason=_t(reader_text(text), strict=False)))
        if not isinstance(out, str):
            raise TypeError(f"render must return an HTML string, got {type(out).__name__}")
        return out

    def render_current(self) -> str:
        return self.render_at([c.index for c in self.controls])

    @property
    def n_views(self) -> int:
        return math.prod(len(c.values) for c in self.controls)

    def all_indices(self):
        return itertools.product(*(range(len(c.values)) for c in self.controls))

    def timings(self) -> dict:
        """Render every view once; return {indices: CPU seconds} (for the < 50 ms budget test: the process's own
        time, which other work on a loaded machine does not inflate)."""
        out = {}
        for idx in self.all_indices():
            t0 = time.process_time()
            self.render_at(idx)
            out[idx] = time.process_time() - t0
        return out

    # --- widgets ---------------------------------------------------------------------------------------------
    def _header(self):
        """The title, and the style of tables, charts and the form (so they also hold outside the book's site)."""
        import ipywidgets as W

        title = (f'<strong class="cc-form-title" style="display:block;line-height:1.35;margin:.2em 0 .4em">'
                 f'{_html.escape(_t(self.title))}</strong>') if self.title else ""
        return W.HTML(STYLE + title)

    def _controls(self):
        label_em, readout_em = _form_widths(self.controls)
        return [c.build(label_em, readout_em) for c in self.controls]

    def _box(self, parts):
        import ipywidgets as W

        box = W.VBox(parts, layout=W.Layout(max_width="100%", width="100%"))
        box.add_class("cc-form")
        return box

    def _live(self):
        import ipywidgets as W

        controls = self._controls()
        out = W.HTML(self.render_current())

        def update(_change=None):
            out.value = self.render_at([w.index for w in controls])

        for w in controls:
            w.observe(update, names="index")
        return self._box([self._header(), *controls, out])

    def _static(self):
        import ipywidgets as W

        if self.n_views > MAX_STATIC_VIEWS:
            raise ValueError(f"explorable {self.title!r} has {self.n_views} views; the static site allows at most "
                             f"{MAX_STATIC_VIEWS} (use fewer slider positions)")
        controls = self._controls()
        levels = [[] for _ in self.controls]
        # The payload is every view's HTML and little else: the views and stacks share one (default) layout and
        # one style model instead of carrying their own, and a view whose HTML another view already has is that
        # same model (a Stack shows one child at a time, so a model may sit under several indices).
        from ipywidgets.widgets.widget_string import HTMLStyle

        layout, style = W.Layout(), HTMLStyle()
        views = {}

        def view(html_text):
            if html_text not in views:
                views[html_text] = W.HTML(html_text, layout=layout, style=style)
            return views[html_text]

        def build(depth, prefix):
            if depth == len(self.controls):
                return view(self.render_at(prefix))
            children = [build(depth + 1, prefix + [i]) for i in range(len(self.controls[depth].values))]
            stack = W.Stack(children, selected_index=self.controls[depth].index, layout=layout)
            levels[depth].append(stack)
            return stack

        root = build(0, [])
        self.links = [W.jslink((w, "index"), (s, "selected_index"))
                      for w, stacks in zip(controls, levels) for s in stacks]
        return self._box([self._header(), *controls, root])

    def widget(self):
        """The ipywidgets tree (built once)."""
        if self._widget is None:
            self._widget = self._static() if static_mode() else self._live()
        return self._widget

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget()._repr_mimebundle_(include=include, exclude=exclude)
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        head = f"Explorable {self.title!r} — " + "; ".join(c.summary() for c in self.controls)
        return head + "\n" + _plain(self.render_current())


def explore(render, controls, title: str = "") -> Explorable:
    """Build an :class:`Explorable` from a render function and a list of controls."""
    return Explorable(render, controls, title)


def explorer(func):
    """Decorator registering an explorer factory (a function returning an :class:`Explorable`) in
    :data:`REGISTRY`, so the test suite can render every view of every explorable and time it."""
    REGISTRY[f"{func.__module__}.{func.__qualname__}"] = func
    return func


def predict(question: str, options, reveal: str) -> Explorable:
    """The "predict first" device: the reader picks an answer before reading on; the choice is acknowledged and
    the reader is pointed to where the chapter settles it (``reveal``), so the bet is made before the answer.

    >>> p = predict("Which is the bottleneck?", ["compute", "memory bandwidth"], "the roofline section")
    >>> p.render_at([2])
    '<p>Your bet: <strong>memory bandwidth</strong>. Hold on to it — the roofline section settles it.</p>'
    """
    opts = list(options)
    if len(opts) < 2:
        raise ValueError("options must hold at least two answers")
    if not str(question).strip():
        raise ValueError("question must not be empty")
    choices = {"— choose —": None, **{str(o): str(o) for o in opts}}

    def render(answer):
        if answer is None:
            return f"<p>{_html.escape(_t('Make your bet before reading on.'))}</p>"
        return "<p>" + _t("Your bet: {answer}. Hold on to it — {reveal} settles it.").format(
            answer=f"<strong>{_html.escape(_t(answer))}</strong>", reveal=_html.escape(_t(reveal))) + "</p>"

    return explore(render, [Choice("answer", "Your answer", choices)], title=str(question))
