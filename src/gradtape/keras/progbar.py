"""``keras.utils.Progbar``: Keras 3's progress bar, in its text.

At ``verbose=1`` each update rewrites the line in place (``\\r`` on a terminal, a new line
elsewhere, as Keras 3)::

      32/1875 ━━━━━━━━━━━━━━━━━━━━ 5s 3ms/step - accuracy: 0.8750 - loss: 0.3815

(the bold and colour escapes Keras writes omitted here); the finished line shows the
elapsed time instead of the ETA. At ``verbose=2`` only the finished line is written:
``1875/1875 - 3s - 2ms/step - accuracy: 0.8750 - loss: 0.3815``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

import numpy as np

__all__ = ["Progbar"]

_BOLD, _GREEN, _GREY, _RESET = "\x1b[1m", "\x1b[32m", "\x1b[37m", "\x1b[0m"


class Progbar:
    """Keras 3's ``Progbar(target, width=20, verbose=1, interval=0.05,
    stateful_metrics=None, stateless_metrics=None, unit_name="step")``. A metric is
    averaged over the updates (weighted by their steps) unless it is stateful; with
    neither list given, all are averaged, as Keras. ``clock`` and ``stream`` (not Keras's)
    replace ``time.time`` and ``sys.stdout``, so tests read the text at a fake time."""

    def __init__(self, target: int | None, width: int = 20, verbose: int = 1,
                 interval: float = 0.05, stateful_metrics: Iterable[str] | None = None,
                 stateless_metrics: Iterable[str] | None = None, unit_name: str = "step",
                 clock: Callable[[], float] | None = None, stream: TextIO | None = None):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Pass at most one of `stateful_metrics` (the metrics shown "
                             "as they are) and `stateless_metrics` (the averaged ones).")
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self.stateful_metrics = set(stateful_metrics or ()) \
            if stateless_metrics is None else None
        self.stateless_metrics = None if stateless_metrics is None else set(stateless_metrics)
        self._clock = clock or time.time
        self._stream = stream
        self._dynamic_display = _is_dynamic(stream or sys.stdout)
        self._seen_so_far = 0
        self._values: dict[str, list[Any]] = {}
        self._values_order: list[str] = []
        self._start = self._clock()
        self._last_update = 0.0
        self._time_after_first_step: float | None = None
        self._prev_total_width = 0

    def update(self, current: int, values: Iterable[tuple[str, Any]] | None = None,
               finalize: bool | None = None) -> None:
        """Shows step ``current`` with ``values`` (``[(name, value_for_last_step)]``);
        ``finalize`` (default: ``current >= target``) ends the line."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or ():
            self._accumulate(name, value, current, finalize)
        self._seen_so_far = current
        now = self._clock()
        per_step = self._step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._write_live(current, now, per_step, finalize)
        elif self.verbose == 2 and finalize and self.target:
            count = f"{current:{_digits(self.target)}d}/{self.target}"
            info = f"{count} - {now - self._start:.0f}s -{_per_unit(per_step, self.unit_name)}"
            self._write(info + self._metrics_text(signed=False) + "\n")
        self._last_update = now

    def add(self, n: int, values: Iterable[tuple[str, Any]] | None = None) -> None:
        self.update(self._seen_so_far + n, values)

    # --- the text -------------------------------------------------------------------------
    def _accumulate(self, name: str, value: Any, current: int, finalize: bool) -> None:
        if name not in self._values_order:
            self._values_order.append(name)
        if self.stateful_metrics is not None:
            averaged = name not in self.stateful_metrics
        else:
            averaged = name in self.stateless_metrics
        if not averaged or finalize:
            self._values[name] = [value, 1]
            return
        steps = max(current - self._seen_so_far, 1)
        total = self._values.setdefault(name, [0.0, 0])
        total[0] += value * steps
        total[1] += steps

    def _metrics_text(self, signed: bool = True) -> str:
        """`` - name: mean`` per metric; Keras's one-line form (``signed=False``) tests
        ``mean > 1e-3`` where the live bar tests ``abs(mean)``."""
        parts = []
        for name in self._values_order:
            total, count = self._values[name]
            if not isinstance(total, float):
                total = np.mean(total)
            mean = total / max(1, count)
            fixed = (abs(mean) if signed else mean) > 1e-3
            parts.append(f" - {name}: {mean:.4f}" if fixed else f" - {name}: {mean:.4e}")
        return "".join(parts)

    def _write_live(self, current: int, now: float, per_step: float, finalize: bool) -> None:
        message = ("\b" * self._prev_total_width + "\r") if self._dynamic_display else "\n"
        escapes = 0
        if self.target:
            count = f"{current:{_digits(self.target)}d}/{self.target}"
            done = int(self.width * current / self.target)
            bar = f"{_BOLD}{count}{_RESET} "
            escapes += 8
            if done > 0:
                bar += f"{_GREEN}{'━' * done}{_RESET}"
                escapes += 9
            bar += f"{_GREY}{'━' * (self.width - done)}{_RESET}"
            escapes += 9
        else:
            bar = f"{current:7d}/Unknown"
        if self.target and not finalize:
            when = _eta(per_step * (self.target - current))
        else:
            when = f"{now - self._start:.0f}s"
        info = f" {_BOLD}{when}{_RESET}"
        escapes += 8
        info += _per_unit(per_step, self.unit_name) + self._metrics_text()
        width = len(bar) + len(info) - escapes
        if self._prev_total_width > width:
            info += " " * (self._prev_total_width - width)
        self._write(message + bar + info + ("\n" if finalize else ""))
        self._prev_total_width = width

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stdout
        stream.write(text)
        stream.flush()

    def _step_duration(self, current: int, now: float) -> float:
        """Seconds per step, leaving out the first step (compilation, warm-up) once
        there are more, as Keras estimates it."""
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            per_step = (now - self._time_after_first_step) / (current - 1)
        else:
            per_step = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_step


def _digits(target: int) -> int:
    return int(math.log10(target)) + 1


def _eta(seconds: float) -> str:
    if seconds > 3600:
        return f"{int(seconds // 3600)}:{int(seconds % 3600 // 60):02d}:{int(seconds % 60):02d}"
    if seconds > 60:
        return f"{int(seconds // 60)}:{int(seconds % 60):02d}"
    return f"{int(seconds)}s"


def _per_unit(seconds: float, unit: str) -> str:
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit}"
    return f" {seconds * 1e6:.0f}us/{unit}"


def _is_dynamic(stream: Any) -> bool:
    """Rewrite the line in place on a terminal or in a notebook (Keras's test)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules
