"""Where the time of an eager step goes: NumPy's own work, gradtape's dispatch, the
tape's recording and the gradient call, measured in one process.

    python benchmarks/eager_overhead.py                 # full run (about half a minute)
    python benchmarks/eager_overhead.py --quick         # smoke run
    python benchmarks/eager_overhead.py --update-docs   # also rewrite docs/performance.md

Issue 3's targets for the MLP step with a new tape each step (1.5×) and the scalar chain
(5×) are budgets per recorded op. This report measures the cost of one op on its own
(outside any tape, and recorded on a tape that follows its site's reference, as in a
training loop) and splits the two steps into their parts, so the budget can be checked
against what an op costs. Garbage collection stays on, as in user code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
if __name__ == "__main__":  # before NumPy loads its thread pool
    import _threads

    _threads.limit_from_argv()

import _peers as peers
import gradient
import numpy as np
from _harness import command, compare, machine, parser, update_docs, versions

OPS_PER_LOOP = 50


Op = Callable[[Any, Any], Any]


def op_loops(x: Any, numpy_op: Op, op: Op) -> dict[str, Callable[[], Any]]:
    """``OPS_PER_LOOP`` applications of an op in NumPy, in gradtape without a tape, and
    recorded on a tape opened at one site each time (the gradient call in ``warm`` makes
    that site's reference, which later tapes follow)."""
    import gradtape as gt

    t = gt.constant(x)
    if t.ndim == 0:
        t = t + 0.0  # a NumPy scalar, as an op's result is (a constant holds a 0-d array)

    def numpy_loop() -> Any:
        y = x
        for _ in range(OPS_PER_LOOP):
            y = numpy_op(y, x)
        return y

    def no_tape() -> Any:
        y = t
        for _ in range(OPS_PER_LOOP):
            y = op(y, t)
        return y

    def recorded() -> Any:
        with gt.GradientTape() as tape:
            tape.watch(t)
            y = t
            for _ in range(OPS_PER_LOOP):
                y = op(y, t)
        return tape, y

    def warm() -> None:
        tape, y = recorded()
        tape.gradient(y, t)

    warm()
    warm()
    return {"NumPy": numpy_loop, "gradtape, no tape": no_tape, "gradtape, recorded": recorded}


def per_op_table(min_time: float, repeats: int) -> str:
    import gradtape as gt

    def product(a: Any, b: Any) -> Any:
        return a * b

    cases = {
        "multiply, float64 scalars": (np.float64(1.0000001), product, product),
        "sin, float64 scalar": (np.float64(0.5), lambda a, b: np.sin(a),
                                lambda a, b: gt.sin(a)),
        "multiply, 32×64 float32": (np.full((32, 64), 1.0000001, np.float32), product,
                                    product),
    }
    lines = ["| op | NumPy | gradtape, no tape | recorded on a tape | dispatch | recording |",
             "|---|---:|---:|---:|---:|---:|"]
    for title, (x, numpy_op, op) in cases.items():
        times = {name: seconds / OPS_PER_LOOP for name, seconds in
                 compare(op_loops(x, numpy_op, op), min_time, repeats).items()}
        numpy_t, eager, recorded = times.values()
        lines.append(f"| {title} | {_us(numpy_t)} | {_us(eager)} | {_us(recorded)} | "
                     f"{_us(eager - numpy_t)} | {_us(recorded - eager)} |")
    return "\n".join(lines) + "\n"


def step_parts(min_time: float, repeats: int) -> str:
    """The MLP step and the scalar chain, split: hand-written forward and full gradient,
    gradtape's forward without a tape, recorded on a tape, and the whole step."""
    import gradtape as gt

    ops = peers.gradtape_ops()
    params, data = gradient.mlp_data()
    x, y = data
    variables = [gt.Variable(p) for p in params]
    tensors = tuple(gt.constant(d) for d in data)
    chain_x = gt.constant(np.float64(0.7))

    def mlp_record() -> Any:
        with gt.GradientTape() as tape:
            loss = gradient.mlp_loss(ops, variables, tensors)
        return tape, loss

    def mlp_step() -> Any:
        tape, loss = mlp_record()
        return tape.gradient(loss, variables)

    def chain_record() -> Any:
        with gt.GradientTape() as tape:
            tape.watch(chain_x)
            out = gradient.chain_loss(ops, [chain_x], ())
        return tape, out

    def chain_step() -> Any:
        tape, out = chain_record()
        return tape.gradient(out, chain_x)

    x64 = np.float64(0.7)
    rows = {
        "MLP step (12 recorded ops)": {
            "hand forward": lambda: gradient.mlp_forward(params, x, y),
            "hand forward + gradient": lambda: gradient.mlp_backward(
                params, x, gradient.mlp_forward(params, x, y)[1]),
            "forward, no tape": lambda: gradient.mlp_loss(ops, variables, tensors),
            "forward, recorded": mlp_record,
            "whole step": mlp_step,
            "target": 1.5,
        },
        "Scalar chain (100 recorded ops)": {
            "hand forward": lambda: gradient.chain_loss(_numpy_ops(), [x64], ()),
            "hand forward + gradient": lambda: gradient.chain_hand(x64),
            "forward, no tape": lambda: gradient.chain_loss(ops, [chain_x], ()),
            "forward, recorded": chain_record,
            "whole step": chain_step,
            "target": 5.0,
        },
    }
    lines = ["| step | hand-written | dispatch | recording | gradient call and backward "
             "| whole step | ratio | target | hand + target's budget |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for title, parts in rows.items():
        target = parts.pop("target")
        for fn in parts.values():  # compile and settle every part first
            fn()
            fn()
        t = compare(parts, min_time, repeats)  # interleaved rounds: load hits all alike
        hand = t["hand forward + gradient"]
        dispatch = t["forward, no tape"] - t["hand forward"]
        recording = t["forward, recorded"] - t["forward, no tape"]
        backward = t["whole step"] - t["forward, recorded"]
        lines.append(f"| {title} | {_us(hand)} | {_us(dispatch)} | {_us(recording)} | "
                     f"{_us(backward)} | {_us(t['whole step'])} | "
                     f"{t['whole step'] / hand:.2f}× | ≤ {target:g}× | {_us(hand * target)} |")
    return "\n".join(lines) + "\n"


def _numpy_ops() -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(sin=np.sin, cos=np.cos)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f} µs"


def render(per_op: str, steps: str) -> str:
    threads = sys.modules.get("_threads")
    return "\n".join([
        "## Where an eager step's time goes (issue 3)", "",
        f"Command: `{command()}`", "",
        f"Machine: {machine(threads.THREADS if threads else 0)}.", "",
        f"Versions: {versions(['gradtape'])}.", "",
        "Every figure is the best of interleaved rounds (every variant once per round). "
        "Per op, averaged over a loop of "
        f"{OPS_PER_LOOP}: *dispatch* is gradtape without a tape minus NumPy, *recording* "
        "is the same loop recorded on a tape (following its site's reference, as a "
        "training loop does) minus the loop without one.", "",
        per_op, "",
        "The two eager steps, split. *Dispatch* is the forward without a tape minus the "
        "hand-written forward; *recording* is the forward on a tape minus the forward "
        "without one; the gradient column is the rest of the step. The last column is "
        "what the whole step may cost to meet its target.", "",
        steps,
    ])


def main(argv: list[str] | None = None) -> str:
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    min_time, repeats = (0.02, 2) if args.quick else (0.2, 7)
    text = render(per_op_table(min_time, repeats), step_parts(min_time, repeats))
    print(text)
    if args.update_docs:
        update_docs("eager-overhead", text)
    return text


if __name__ == "__main__":
    main()
