"""The peak memory of one gradient step, above the steady baseline, each in a fresh process.

The workload (issue [6/6]): a 4-layer tanh MLP, batch 4096, 1024 -> 2048 -> 2048 -> 2048
-> 2048, float32, 128 MiB of layer outputs. Each variant builds the model and its input,
runs one warm-up step (so code, caches and the allocator's pools are in place), then
measures the resident set's peak over a second step against the resident size just
before it. Variants: hand-written NumPy, the gradtape eager tape, ``@gt.function``,
PyTorch and JAX when importable (a variant that cannot import is reported as skipped).

    python benchmarks/memory.py            # the issue's sizes
    python benchmarks/memory.py --quick    # small sizes: only that each variant runs

The peak comes from ``/proc/self/status`` (``VmHWM``, reset through
``/proc/self/clear_refs``), so it counts what the allocator took from the system, as
``ru_maxrss`` does, without the process's earlier history.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

VARIANTS = ("numpy", "gradtape_eager", "gradtape_function", "torch", "jax")
MiB = 1 << 20


def _sizes(quick: bool) -> tuple[int, list[int]]:
    if quick:
        return 64, [32, 64, 64, 64, 32]
    return 4096, [1024, 2048, 2048, 2048, 2048]


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:  # "5": reset VmHWM to the current RSS
        f.write("5")


def _numpy_step(np, xs, ws):
    """Forward and backward by hand: keep each layer's output, nothing else."""
    h = [xs]
    for w in ws:
        h.append(np.tanh(h[-1] @ w))
    g = np.ones_like(h[-1]) / h[-1].size
    grads = [None] * len(ws)
    for k in reversed(range(len(ws))):
        g = g * (1 - h[k + 1] * h[k + 1])
        grads[k] = h[k].T @ g
        g = g @ ws[k].T if k else None
    return grads


def _gradtape_step(gt, x, ws):
    with gt.GradientTape() as tape:
        h = x
        for w in ws:
            h = gt.tanh(gt.matmul(h, w))
        loss = gt.reduce_mean(h)
    return tape.gradient(loss, ws)


def _variant(name: str, quick: bool):
    """The step function of ``name`` (called with no arguments), or ``None``."""
    import numpy as np
    batch, widths = _sizes(quick)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, widths[0]), dtype=np.float32)
    ws = [(rng.standard_normal((a, b), dtype=np.float32) / np.sqrt(a)).astype(np.float32)
          for a, b in zip(widths, widths[1:])]
    if name == "numpy":
        return lambda: _numpy_step(np, xs, ws)
    if name.startswith("gradtape"):
        import gradtape as gt
        x, variables = gt.constant(xs), [gt.Variable(w) for w in ws]
        if name == "gradtape_eager":
            return lambda: _gradtape_step(gt, x, variables)
        step = gt.function(lambda: _gradtape_step(gt, x, variables))
        return step
    if name == "torch":
        import torch
        torch.set_num_threads(1)
        tx = torch.from_numpy(xs)
        tw = [torch.from_numpy(w).requires_grad_() for w in ws]

        def torch_step():
            h = tx
            for w in tw:
                h = torch.tanh(h @ w)
            return torch.autograd.grad(h.mean(), tw)
        return torch_step
    if name == "jax":
        import jax
        import jax.numpy as jnp

        def loss(ws_, x_):
            h = x_
            for w in ws_:
                h = jnp.tanh(h @ w)
            return jnp.mean(h)
        grad = jax.jit(jax.grad(loss))
        jx, jw = jnp.asarray(xs), [jnp.asarray(w) for w in ws]
        return lambda: [g.block_until_ready() for g in grad(jw, jx)]
    raise ValueError(f"unknown variant {name!r}")


def measure(name: str, quick: bool) -> dict:
    """Run in this process: the step's peak above the resident size before it."""
    try:
        step = _variant(name, quick)
    except ImportError as e:
        return {"variant": name, "skipped": f"not importable: {e}"}
    step()  # warm-up: code, caches, the allocator's pools
    step()
    before = _status("VmRSS")
    _reset_peak()
    result = step()
    peak = _status("VmHWM")
    del result
    return {"variant": name, "peak_mib": round((peak - before) / MiB, 1)}


def run(variant: str, quick: bool, python: str = sys.executable) -> dict:
    """``measure`` in a fresh process (the peaks of earlier variants don't count)."""
    src = Path(__file__).resolve().parent.parent / "src"
    cmd = [python, __file__, "--one", variant] + (["--quick"] if quick else [])
    env = {"PYTHONPATH": str(src), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        return {"variant": variant, "failed": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--one", choices=VARIANTS, help="measure one variant here")
    parser.add_argument("--torch-python", default=None,
                        help="the Python to run the torch variant with (its own venv)")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.quick)))
        return []
    rows = []
    for name in VARIANTS:
        python = args.torch_python if name == "torch" and args.torch_python else sys.executable
        rows.append(run(name, args.quick, python))
    for row in rows:
        value = row.get("peak_mib", row.get("skipped") or row.get("failed"))
        print(f"{row['variant']:>18}  {value}" + (" MiB" if "peak_mib" in row else ""))
    return rows


if __name__ == "__main__":
    main()
