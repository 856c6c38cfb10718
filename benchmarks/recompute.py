"""``gt.recompute_grad`` on the memory workload of issue [6/6]: the peak memory of one
gradient step of a 4-layer tanh MLP (batch 4096, 1024 -> 2048, float32: 128 MiB of layer
outputs), without checkpointing, with each layer its own ``recompute_grad`` block, with
two blocks of two layers, and with the four layers one block (which keeps the least in
the forward, but recomputes all of it at once in the backward). Each runs on the eager
tape and as a ``@gt.function`` step (the tape inside the function).

Each variant runs in a fresh process. After two warm-up steps, ``tracemalloc`` (which sees NumPy's
buffers) measures what the tape holds between the forward and the backward (eager
only: a compiled step is one call), and the step peak: the most allocated during the
step above what was allocated before it. The process's peak RSS is printed beside them.
``--batch`` and ``--width`` shrink the workload.

    python benchmarks/recompute.py [--batch 4096] [--width 2048]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tracemalloc

import numpy as np

MiB = 2 ** 20
# How the four layers are checkpointed: not at all, each layer a block, two blocks of
# two layers, one block of all.
VARIANTS = {"no recompute_grad": None, "recompute_grad per layer": 1,
            "recompute_grad, two blocks": 2, "recompute_grad, one block": 4}
MODES = ("eager", "@gt.function")


def step_peak(variant: str, mode: str, batch: int, width: int) -> dict[str, float]:
    """One variant's step peak above the steady allocation, in MiB."""
    import gradtape as gt

    rng = np.random.default_rng(0)
    x = gt.constant(rng.standard_normal((batch, width // 2), dtype=np.float32))
    sizes = [width // 2] + [width] * 4
    weights = [gt.Variable(rng.standard_normal((m, n), dtype=np.float32) / float(np.sqrt(m)))
               for m, n in zip(sizes, sizes[1:])]

    def layers(ws):
        def run(h):
            for w in ws:
                h = gt.tanh(h @ w)
            return h
        return run

    per_block = VARIANTS[variant] or len(weights)
    blocks = [layers(weights[i:i + per_block]) for i in range(0, len(weights), per_block)]
    if VARIANTS[variant]:
        blocks = [gt.recompute_grad(b) for b in blocks]

    def forward():
        with gt.GradientTape() as tape:
            h = x
            for block in blocks:
                h = block(h)
            loss = gt.reduce_sum(h)
        return tape, loss

    if mode == "eager":
        for _ in range(2):  # warm: the backward is built and compiled
            tape, loss = forward()
            tape.gradient(loss, weights)
        del tape, loss
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        tape, loss = forward()
        held = tracemalloc.get_traced_memory()[0] - base
        grads = tape.gradient(loss, weights)
    else:
        @gt.function
        def train_step():
            tape, loss = forward()
            return tape.gradient(loss, weights)

        for _ in range(2):  # the trace, then a warm call
            train_step()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        held = float("nan")
        grads = train_step()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    assert all(g.dtype == np.float32 for g in grads)
    return {"held_mib": held / MiB, "step_peak_mib": peak / MiB, "max_rss_mib": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--variant", help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(step_peak(args.variant, args.mode, args.batch, args.width)))
        return
    outputs = args.batch * args.width * 4 * 4 / MiB
    print(f"4-layer tanh MLP, batch {args.batch}, {args.width // 2} -> {args.width}, "
          f"float32 ({outputs:.0f} MiB of layer outputs)")
    for mode in MODES:
        results = {}
        print(f" {mode}:")
        for variant in VARIANTS:
            child = subprocess.run(
                [sys.executable, __file__, "--batch", str(args.batch), "--width",
                 str(args.width), "--variant", variant, "--mode", mode],
                check=True, capture_output=True, text=True)
            results[variant] = json.loads(child.stdout.splitlines()[-1])
            r = results[variant]
            held = "     -" if r["held_mib"] != r["held_mib"] else f"{r['held_mib']:6.0f}"
            print(f"  {variant:26s} held after the forward {held} MiB   "
                  f"step peak {r['step_peak_mib']:6.0f} MiB   max RSS "
                  f"{r['max_rss_mib']:6.0f} MiB")
        plain = results["no recompute_grad"]
        for variant in list(VARIANTS)[1:]:
            held, peak = (results[variant][k] / plain[k] for k in ("held_mib", "step_peak_mib"))
            kept = "" if held != held else f"held {held:.2f}, "  # nan: a compiled step
            print(f"  {variant} / no recompute_grad: {kept}step peak {peak:.2f}")


if __name__ == "__main__":
    main()
