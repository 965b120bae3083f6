"""Chapter 11's expert-parallel engineering in figures and tables: all-to-all bytes per token, DeepEP's measured
bandwidths, auxiliary-loss-free load balancing and FP8 accumulation with and without promotion."""
from __future__ import annotations

from .. import _check, accumulation, expert_routing, plotting, units


def all_to_all_table(traffic: expert_routing.AllToAllBytes):
    """One token's forward all-to-all bytes in one MoE layer (:func:`chipchain.expert_routing.all_to_all_bytes`),
    as a pandas DataFrame (kB, decimal): to and from all its experts' GPUs, and the part that crosses the network.

    >>> df = all_to_all_table(expert_routing.all_to_all_bytes("DeepSeek-V3", node_limit=4))
    >>> df["total_kB"].round(1).tolist()
    [173.8, 86.9]
    """
    import pandas as pd

    if not isinstance(traffic, expert_routing.AllToAllBytes):
        raise ValueError("traffic must be an expert_routing.AllToAllBytes")
    t = traffic
    rows = [(f"to and from its {t.top_k} experts' GPUs", t.top_k, t.gpu_dispatch, t.gpu_combine),
            (f"across the network (at most {t.node_limit} nodes)", t.node_limit, t.node_limit * t.dispatch_per_copy,
             t.node_limit * t.combine_per_copy)]
    return pd.DataFrame([{"path": p, "copies": c, "dispatch_kB": d / 1e3, "combine_kB": b / 1e3,
                          "total_kB": (d + b) / 1e3} for p, c, d, b in rows])


def deepep_table(kernel="low-latency"):
    """DeepEP's published kernels (H800, CX7 InfiniBand) as a DataFrame; for the low-latency kernels also the
    bandwidth their latency implies for the bytes :func:`chipchain.expert_routing.token_bytes` counts.

    >>> [float(x) for x in deepep_table().iloc[0][["ep", "published_GBps"]]]
    [8.0, 98.0]
    """
    import pandas as pd

    rows = []
    for k in expert_routing.deepep_kernels(kernel):
        row = {"operation": k.operation, "ep": k.ep, "tokens": k.tokens, "link": k.link,
               "latency_us": None if k.latency is None else k.latency * 1e6, "published_GBps": k.bandwidth / 1e9}
        if k.latency is not None:
            row["implied_GBps"] = expert_routing.implied_bandwidth(k) / 1e9
        rows.append(row)
    return pd.DataFrame(rows)


def plot_bias_balancing(run: expert_routing.BalanceRun, ax=None):
    """The busiest expert's load above the mean, step by step, with the bias rule and without it."""
    if not isinstance(run, expert_routing.BalanceRun):
        raise ValueError("run must be an expert_routing.BalanceRun")
    ax = plotting.axes(ax)
    steps = range(1, len(run.max_violation) + 1)
    ax.plot(steps, [100 * v for v in run.unbiased], color=plotting.color(1), lw=2, label="no bias (router as trained)")
    ax.plot(steps, [100 * v for v in run.max_violation], color=plotting.color(0), lw=2,
            label=f"bias updated by γ = {run.gamma:g} each step")
    ax.set_xlabel("training step")
    ax.set_ylabel("busiest expert's load above the mean (%)")
    ax.set_ylim(0, None)
    ax.legend(loc="upper right")
    return ax


def plot_accumulation(comparison: accumulation.AccumulationComparison, ax=None):
    """Normwise relative error of emulated FP8 GEMM accumulation against the inner dimension K: limited
    accumulator alone, promoted to FP32 every N_C elements, and full FP32 (log scale)."""
    if not isinstance(comparison, accumulation.AccumulationComparison):
        raise ValueError("comparison must be an accumulation.AccumulationComparison")
    c = comparison
    ax = plotting.axes(ax)
    ax.loglog(c.ks, [100 * v for v in c.limited], "o-", color=plotting.color(1), lw=2,
              label=f"{c.acc_bits}-bit accumulator only")
    ax.loglog(c.ks, [100 * v for v in c.promoted], "s-", color=plotting.color(0), lw=2,
              label=f"promoted to FP32 every {c.promote_every}")
    ax.loglog(c.ks, [100 * v for v in c.fp32], "^--", color="#777", lw=1.5, label="FP32 accumulator")
    ax.set_xticks(c.ks, [f"{k:,}" for k in c.ks])
    ax.minorticks_off()
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("inner dimension K (elements summed)")
    ax.set_ylabel("relative error (%)")
    ax.legend(loc="center right")
    return ax
