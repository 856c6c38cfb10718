"""Shared timing helpers: every workload is timed side by side in one process, and the
report gives ratios to the hand-written NumPy gradient (absolute times are noise here).

A workload is a dict of *makers*: ``name -> maker()``, where ``maker()`` does the set-up
(variables, tapes, jit wrappers) and returns the zero-argument function to time, which
returns the gradients. A maker raises :class:`Skip` when its library is missing or cannot
express the workload. ``run_workload`` checks every implementation's gradients against
the hand-written ones before timing anything (a benchmark of a wrong gradient is
meaningless), records first-call (cold) latencies, then times all implementations in
interleaved rounds so that drift in machine load affects them alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HAND = "hand-written NumPy"
GRADTAPE = "gradtape"
COLD_STARTS = 5  # cold samples per implementation in a full run
DOCS = Path(__file__).resolve().parent.parent / "docs" / "performance.md"


class Skip(Exception):
    """Raised by a maker whose library is missing or cannot run this workload."""


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def per_call(fn: Callable[[], object], min_time: float = 0.2, repeats: int = 5) -> float:
    """Best-of-``repeats`` seconds per call, each repeat running at least ``min_time``."""
    return compare({"fn": fn}, min_time, repeats)["fn"]


def _calls_for(fn: Callable[[], object], min_time: float) -> int:
    """How many calls of ``fn`` take about ``min_time`` seconds."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time / 4:
            break
        number *= 4
    return max(1, round(number * min_time / max(elapsed, 1e-9)))


def compare(fns: dict[str, Callable[[], object]], min_time: float = 0.2,
            repeats: int = 5) -> dict[str, float]:
    """Best-of-``repeats`` seconds per call for each function, measured in interleaved
    rounds (every function once per round) so slow drifts in load hit all of them."""
    for fn in fns.values():
        fn()  # warm up (and compile, for the compiled paths)
    numbers = {name: _calls_for(fn, min_time) for name, fn in fns.items()}
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            number = numbers[name]
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def first_call(make: Callable[[], Callable[[], object]]) -> float:
    """Seconds for the first call of a freshly made function (cold: trace + compile)."""
    fn = make()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def to_numpy(x: Any) -> Any:
    """Gradients of any of the libraries as NumPy arrays (lists stay lists)."""
    if isinstance(x, (list, tuple)):
        return [to_numpy(v) for v in x]
    if hasattr(x, "detach"):  # torch
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_close(got: Any, want: Any, what: str, rtol: float, atol: float) -> None:
    """Every array of ``got`` equals the one of ``want`` up to rtol/atol (atol relative to
    the largest magnitude in the expected array, so it suits any scale)."""
    got, want = to_numpy(got), to_numpy(want)
    if not isinstance(want, list):
        got, want = [got], [want]
    if not isinstance(got, list) or len(got) != len(want):
        raise AssertionError(f"{what}: expected {len(want)} gradients, got {got!r}")
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        scale = float(np.max(np.abs(w))) if w.size else 1.0
        np.testing.assert_allclose(np.asarray(g, dtype=w.dtype).reshape(w.shape), w,
                                   rtol=rtol, atol=atol * max(scale, 1.0),
                                   err_msg=f"{what}: gradient #{i} differs from hand-written")


@dataclass
class Result:
    """Per-call and first-call seconds of one workload; notes for skipped/failed peers."""

    title: str
    times: dict[str, float] = field(default_factory=dict)
    first: dict[str, float] = field(default_factory=dict)
    second: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class Settings:
    min_time: float
    repeats: int
    peers: bool
    only: list[str] | None
    cold_starts: int = 1  # cold samples per implementation; the report gives the median


def checked(title: str, name: str, maker: Callable[[], Callable[[], Any]], expected: Any,
            rtol: float, atol: float) -> tuple[Callable[[], Any], float, float]:
    """Make an implementation, call it three times (the first calls may interpret, later
    ones run compiled code), check every result; return it with its 1st and 2nd call times.

    ``expected`` is the hand-written result, or for stateful steps (a training step that
    updates its parameters) a function of the call number (1, 2, 3) giving the state
    after that many calls; such steps carry an ``observe()`` attribute returning it.
    """
    expect = expected if callable(expected) else (lambda _: expected)
    fn = maker()
    observe = getattr(fn, "observe", None)
    seen, times = [], []
    for _ in range(3):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        seen.append(observe() if observe is not None else out)
    for i, got in enumerate(seen, 1):
        assert_close(got, expect(i), f"{title} / {name} (call {i})", rtol, atol)
    return fn, times[0], times[1]


def run_workload(title: str, makers: dict[str, Callable[[], Callable[[], Any]]],
                 expected: Any, settings: Settings, *, rtol: float, atol: float,
                 strict: Sequence[str] = (GRADTAPE, "hand-written")) -> Result:
    """Check, cold-time and time every implementation of one workload (see ``checked``).

    Implementations whose name starts with one of ``strict`` must match (an
    AssertionError otherwise); peers that fail are reported, not fatal.
    """
    result = Result(title)
    ready: dict[str, Callable[[], Any]] = {}
    for name, maker in makers.items():
        is_strict = name == HAND or name.startswith(tuple(strict))
        if not settings.peers and not is_strict:
            continue
        try:
            fn, result.first[name], result.second[name] = checked(
                title, name, maker, expected, rtol, atol)
        except Skip as why:
            result.notes[name] = f"skipped: {why}"
            continue
        except Exception as exc:
            if is_strict:
                raise
            result.notes[name] = f"failed: {type(exc).__name__}: {_one_line(exc)}"
            if os.environ.get("BENCH_DEBUG"):
                traceback.print_exc()
            continue
        ready[name] = fn
        if settings.cold_starts > 1:
            result.first[name], result.second[name] = _median_cold(
                maker, settings.cold_starts - 1, result.first[name], result.second[name])
    result.times = compare(ready, settings.min_time, settings.repeats)
    return result


def _median_cold(maker: Callable[[], Callable[[], Any]], more: int, first: float,
                 second: float) -> tuple[float, float]:
    """Medians of the first and second call over ``more`` further cold starts and the
    checked one. Each start makes the implementation anew (gradtape's makers clear its
    cache), so every sample is a new structure; a single sample on a shared machine
    lands in whatever load the moment has."""
    firsts, seconds = [first], [second]
    for _ in range(more):
        fn = maker()
        for samples in (firsts, seconds):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return statistics.median(firsts), statistics.median(seconds)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:160] + ("…" if len(text) > 160 else "")


# --- reporting ----------------------------------------------------------------------------

def _fmt_time(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds * 1e3:,.0f} ms"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.2f} ms"
    return f"{seconds * 1e6:,.1f} µs"


def report(title: str, rows: list[tuple[str, float]], baseline: str,
           versus: str | None = None, notes: dict[str, str] | None = None) -> str:
    """A markdown table: time per call, ratio to ``baseline`` and, when ``versus`` (e.g.
    gradtape) is among the rows, ``versus``'s time divided by each row's time."""
    times = dict(rows)
    base = times[baseline]
    header = "| implementation | time per call | ratio to hand-written |"
    rule = "|---|---:|---:|"
    if versus in times:
        header += f" {versus} ÷ this |"
        rule += "---:|"
    lines = [f"### {title}", "", header, rule]
    for name, seconds in rows:
        line = f"| {name} | {_fmt_time(seconds)} | {seconds / base:.2f}× |"
        if versus in times:
            line += f" {times[versus] / seconds:.2f} |"
        lines.append(line)
    for name, note in (notes or {}).items():
        lines.append(f"| {name} | {note} | | |" if versus in times else f"| {name} | {note} | |")
    return "\n".join(lines) + "\n"


def report_result(result: Result, versus: str = GRADTAPE) -> str:
    rows = sorted(result.times.items(), key=lambda kv: kv[1])
    return report(result.title, rows, HAND, versus, result.notes)


def _reference_time(r: Result, prefix: str) -> float | None:
    """Steady per-call time of the first row whose name starts with ``prefix``."""
    for name, seconds in r.times.items():
        if name.startswith(prefix):
            return seconds
    return None


def report_cold(results: Sequence[Result], reference: str = "autograd") -> str:
    """First and second call of every implementation, and both in units of the
    ``reference`` row's steady per-call time ("a few autograd calls")."""
    lines = ["### First calls (cold: new structure, trace + compile)", "",
             "Times of the first and second call in a process that has already run other "
             "workloads (library imports and one-time initialisation excluded): the median "
             f"of {COLD_STARTS} cold starts in a full run (one in a quick run), each "
             "making the implementation anew (gradtape's cache cleared). "
             f"The last columns divide by {reference}'s steady per-call time.", "",
             f"| workload | implementation | 1st call | 2nd call | steady | 1st ÷ {reference} |"
             f" 2nd ÷ {reference} |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in results:
        ref = _reference_time(r, reference)
        for name in r.first:
            if name not in r.times or name.startswith("hand-written"):
                continue
            a, b, steady = r.first[name], r.second[name], r.times[name]
            ra = f"{a / ref:.1f}" if ref else "n/a"
            rb = f"{b / ref:.1f}" if ref else "n/a"
            lines.append(f"| {r.title} | {name} | {_fmt_time(a)} | {_fmt_time(b)} | "
                         f"{_fmt_time(steady)} | {ra} | {rb} |")
    return "\n".join(lines) + "\n"


@dataclass
class Target:
    """A target from the issues: ``name``'s per-call time ≤ ``limit`` × hand-written."""

    workload: str
    implementation: str
    limit: float


def report_targets(results: Sequence[Result], targets: Sequence[Target]) -> str:
    by_title = {r.title: r for r in results}
    lines = ["### Targets", "", "| workload | implementation | ratio to hand-written | target "
             "| met |", "|---|---|---:|---:|---|"]
    for t in targets:
        r = by_title.get(t.workload)
        if r is None:
            continue  # not selected in this run
        if t.implementation not in r.times or HAND not in r.times:
            note = r.notes.get(t.implementation, "not run")
            lines.append(f"| {t.workload} | {t.implementation} | {note} | ≤ {t.limit}× | — |")
            continue
        ratio = r.times[t.implementation] / r.times[HAND]
        met = "yes" if ratio <= t.limit else "**no**"
        lines.append(f"| {t.workload} | {t.implementation} | {ratio:.2f}× | ≤ {t.limit}× |"
                     f" {met} |")
    return "\n".join(lines) + "\n"


# --- command line and docs ----------------------------------------------------------------

def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true",
                   help="smoke run: short timings, results are rough")
    p.add_argument("--no-peers", action="store_true",
                   help="only gradtape and the hand-written gradient")
    p.add_argument("--only", nargs="*", metavar="WORKLOAD",
                   help="run only workloads whose name contains one of these words")
    p.add_argument("--update-docs", action="store_true",
                   help="write the report into its section of docs/performance.md")
    p.add_argument("--threads", type=int, default=1,
                   help="threads per library (default 1: stable ratios on a shared "
                        "machine; 0: each library's default)")
    p.add_argument("--hold-freed-memory", action="store_true",
                   help="run with gt.config(hold_freed_memory=True): glibc keeps freed "
                        "blocks for reuse, for every implementation in the process")
    return p


def settings_from(args: argparse.Namespace) -> Settings:
    if getattr(args, "hold_freed_memory", False):
        import gradtape as gt

        gt.config(hold_freed_memory=True)  # process-wide: the hand-written code gains too
    if args.quick:
        return Settings(min_time=0.02, repeats=2, peers=not args.no_peers, only=args.only)
    return Settings(min_time=0.15, repeats=5, peers=not args.no_peers, only=args.only,
                    cold_starts=COLD_STARTS)


def selected(settings: Settings, key: str) -> bool:
    return not settings.only or any(word in key for word in settings.only)


@dataclass
class Workload:
    """One benchmark problem: every implementation of it, and the value they must give."""

    key: str  # short name for --only
    title: str
    makers: dict[str, Callable[[], Callable[[], Any]]]  # hand-written first, then gradtape
    expected: Any  # a value, or a function of the call number for training steps
    rtol: float = 1e-9
    atol: float = 1e-12


def run_workloads(builders: Sequence[Callable[[], Workload]], settings: Settings
                  ) -> tuple[list[Result], dict[str, str]]:
    """Build every workload (their titles name the targets) and run the selected ones:
    ``(results, titles by key)``."""
    results, titles = [], {}
    for build in builders:
        w = build()
        titles[w.key] = w.title
        if not selected(settings, w.key):
            continue
        print(f"running: {w.title} ...", file=sys.stderr, flush=True)
        results.append(run_workload(w.title, w.makers, w.expected, settings,
                                    rtol=w.rtol, atol=w.atol))
    return results, titles


def _version(module: str) -> str:
    version = getattr(sys.modules[module], "__version__", None)
    if version is None:  # e.g. autograd: ask the installed distribution
        from importlib import metadata

        for dist in metadata.packages_distributions().get(module, []):
            return metadata.version(dist)
    return version or "?"


def versions(modules: Sequence[str]) -> str:
    """Versions of the libraries this process loaded (the ones that were measured)."""
    found = [f"Python {platform.python_version()}"]
    for module in ["numpy", *modules]:
        if module in sys.modules:
            found.append(f"{module} {_version(module)}")
    return ", ".join(found)


def machine(threads: int) -> str:
    pinned = ("every library limited to one thread" if threads == 1 else
              f"every library limited to {threads} threads" if threads > 1 else
              "library default thread counts")
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores, "
            f"{pinned} (a shared machine: absolute times are noisy; compare ratios "
            "within one run)")


def command() -> str:
    args = [a for a in sys.argv[1:] if a != "--update-docs"]
    return " ".join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *args])


def update_docs(section: str, text: str) -> None:
    """Replace the text between ``<!-- section:begin -->`` and ``<!-- section:end -->`` in
    docs/performance.md (appending the section if it is not there yet)."""
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    doc = DOCS.read_text() if DOCS.exists() else "# Performance\n"
    block = f"{begin}\n{text.rstrip()}\n{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(doc):
        doc = pattern.sub(lambda _: block, doc)
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    DOCS.write_text(doc)
