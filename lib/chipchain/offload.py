"""Offloading model states to the CPU or NVMe (ZeRO-Offload, ZeRO-Infinity): the bytes it moves and when it pays.

ZeRO-Offload keeps the FP32 optimizer states (master weights, Adam's moments) and the optimizer step on the CPU; the
GPU keeps the 16-bit weights and runs forward and backward. Each step the 16-bit gradients go to the CPU and the
updated 16-bit weights come back: 2Ψ + 2Ψ = 4Ψ bytes over PCIe, the minimum for this split (Ren et al. 2021, Sec. 3,
"a communication volume of 4M"). With data parallelism over n GPUs each GPU offloads its 1/n share (ZeRO-2
partitioning). ZeRO-Infinity extends the same idea to NVMe: the optimizer states then stream from the drives and
back every step, 2 × 12Ψ bytes for Adam's FP32 states (Rajbhandari et al. 2021).

The transfer hides behind compute when 4Ψ/(n·B) ≤ 6Ψ·T/(peak·MFU) for T tokens per GPU per step
(:func:`offload_break_even_tokens`).

>>> offload_pcie_bytes(7e9) / 1e9
28.0
>>> round(offload_break_even_tokens(989e12, 0.4, 64e9))   # H100 on PCIe 5 x16, 40 % MFU, one GPU
4121
"""
from __future__ import annotations

from . import _check

__all__ = ["offload_pcie_bytes", "offload_nvme_bytes", "offload_transfer_seconds", "offload_break_even_tokens"]


def offload_pcie_bytes(params, n_gpus=1, grad_bytes=2.0, param_bytes=2.0) -> float:
    """Bytes each GPU moves over PCIe per step under ZeRO-Offload: (g + w)·Ψ/n — the 16-bit gradients down and the
    updated 16-bit weights back up, for ``params`` Ψ sharded over ``n_gpus`` n (Ren et al. 2021: 4Ψ for n = 1).

    >>> offload_pcie_bytes(13e9, 8) / 1e9
    6.5
    """
    p = _check.positive("params", params)
    n = _check.integer("n_gpus", n_gpus)
    return (_check.positive("grad_bytes", grad_bytes) + _check.positive("param_bytes", param_bytes)) * p / n


def offload_nvme_bytes(params, n_gpus=1, optimizer_bytes=12.0) -> float:
    """Bytes read from and written to NVMe per step when the optimizer states live there (ZeRO-Infinity): the
    ``optimizer_bytes`` K per parameter (12 for FP32 master weights and Adam's two moments) read and written once,
    2·K·Ψ/n.

    >>> offload_nvme_bytes(7e9) / 1e9
    168.0
    """
    p = _check.positive("params", params)
    n = _check.integer("n_gpus", n_gpus)
    return 2.0 * _check.positive("optimizer_bytes", optimizer_bytes) * p / n


def offload_transfer_seconds(params, bandwidth, n_gpus=1) -> float:
    """Time for :func:`offload_pcie_bytes` at ``bandwidth`` bytes/s (per direction; the two directions are counted
    one after the other, the case when the weights come back only after the CPU step).

    >>> offload_transfer_seconds(7e9, 32e9)              # PCIe 4 x16, 32 GB/s per direction
    0.875
    """
    return offload_pcie_bytes(params, n_gpus) / _check.positive("bandwidth", bandwidth)


def offload_break_even_tokens(peak_flops, mfu, bandwidth, n_gpus=1) -> float:
    """Tokens per GPU per step above which the ZeRO-Offload transfer takes no longer than the step's compute:
    6Ψ·T/(peak·MFU) ≥ 4Ψ/(n·B), i.e. T ≥ 2·peak·MFU/(3·n·B) — the parameter count cancels.

    >>> round(offload_break_even_tokens(312e12, 0.5, 32e9))   # A100 on PCIe 4
    3250
    """
    peak = _check.positive("peak_flops", peak_flops)
    u = _check.fraction("mfu", mfu)
    b = _check.positive("bandwidth", bandwidth)
    return 2.0 * peak * u / (3.0 * _check.integer("n_gpus", n_gpus) * b)
