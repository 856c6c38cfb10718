"""Dead-code elimination, as a pass: the transform lives in ``ir/dce.py`` (autodiff
runs it on every backward it builds, and ``ir`` imports nothing from ``passes``)."""

from __future__ import annotations

from ..ir.dce import eliminate_dead_code, prune_outputs

__all__ = ["eliminate_dead_code", "prune_outputs"]
