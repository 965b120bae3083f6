"""Chapter 13's last two steps and the four questions with an export column: tables over
:class:`chipchain.walkthrough.Walkthrough`'s steps ⑧ and ⑨."""
from __future__ import annotations

from .. import hardware, policy, units
from ..walkthrough import Walkthrough
from .walkthrough import four_questions, source_check_table


def export_table(walkthrough: Walkthrough | None = None):
    """Step ⑧ as a DataFrame: for each export rule, how it classifies the run's accelerator and why, the fastest
    part it lets through, and the days the same run takes on as many of those at the same MFU.

    >>> export_table()["fastest_allowed"].tolist()
    ['H800', 'H20']
    """
    import pandas as pd

    w = walkthrough or Walkthrough()
    e = w.step8_export()
    rows = []
    for rid, c in e.classifications.items():
        r = policy.rule(rid)
        rows.append({"rule": f"{r.name} ({rid})", "classification": c.category, "why": c.reason,
                     "fastest_allowed": e.shippable[rid], "days": e.shippable_days[rid]})
    return pd.DataFrame(rows)


def serving_step_table(walkthrough: Walkthrough | None = None):
    """Step ⑨ as a DataFrame: at batch 1 and at the batch the serving GPUs' memory holds — tokens per second,
    joules per token at rated GPU power, dollars per million tokens at the rent.

    >>> serving_step_table()["batch"].tolist()
    [1, 27]
    """
    import pandas as pd

    s = (walkthrough or Walkthrough()).step9_serving()
    return pd.DataFrame([
        {"batch": 1, "tokens_per_s": s.tokens_per_second_1, "per_user": s.tokens_per_second_1,
         "joules_per_token": s.joules_per_token_1, "usd_per_million": s.dollars_per_million_tokens_1},
        {"batch": s.max_batch, "tokens_per_s": s.tokens_per_second, "per_user": s.per_user_tokens_per_second,
         "joules_per_token": s.joules_per_token, "usd_per_million": s.dollars_per_million_tokens}])


def four_questions_export(accelerators=("A100", "H100", "H800", "H20", "B200", "MI300X"), rule_ids=None):
    """:func:`chipchain.views.walkthrough.four_questions` with the supply question's export half: one column per
    rule, the part's classification under it (:func:`chipchain.policy.classify`).

    >>> four_questions_export(["H800", "H20"]).loc["H800", "export, 2023-10 rule"]
    '3A090.a'
    """
    df = four_questions(accelerators)
    ids = rule_ids or [r.id for r in policy.rules()]
    for rid in ids:
        df[f"export, {rid} rule"] = [policy.classify(hardware.get(n), rid).category for n in df.index]
    return df


#: how the book names its three source documents in prose (BOOK-STANDARD: "the source chapter", …)
SOURCE_NAMES = {"seed 000": "the source chapter", "seed 002": "the hardware primer", "seed 004": "the practitioner's article"}


def _named(text) -> str:
    out = str(text)
    for k, v in SOURCE_NAMES.items():
        out = out.replace(k, v).replace(k.capitalize(), v[0].upper() + v[1:])
    return out


def source_check_display(checks=None):
    """:func:`chipchain.views.walkthrough.source_check_table` with the sources named as the prose names them
    ("the source chapter, walkthrough ①" rather than "seed 000, walkthrough ①"), disagreements first.

    >>> source_check_display()["source"].iloc[0]
    'the source chapter, walkthrough ①'
    """
    df = source_check_table(checks).copy()
    for col in ("source", "note"):
        df[col] = df[col].map(_named)
    return df
