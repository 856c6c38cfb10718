"""``python -m gradtape``: run the seed examples and print their results, then show the
generated backward code of a small model and a short speed comparison.

``python -m gradtape inspect SCRIPT.py`` runs a script and prints the backward
functions gradtape generated for it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import gradtape as gt

USAGE = """usage: python -m gradtape            seed examples, generated code, speed
       python -m gradtape inspect SCRIPT.py [ARGS...]
                                    run SCRIPT.py, then show its generated backward code"""


def higher_order_derivatives() -> None:
    """Seed example 1 (examples/higher_order_derivatives.py): nested tapes, x^3 at 5."""
    x = gt.constant(5.0)
    with gt.GradientTape() as g:
        g.watch(x)
        with gt.GradientTape() as gg:
            gg.watch(x)
            y = x * x * x
        dy_dx = gg.gradient(y, x)
    d2y_dx2 = g.gradient(dy_dx, x)
    print("First-order derivative (dy_dx):", dy_dx)
    print("Second-order derivative (d2y_dx2):", d2y_dx2)


def variable_gradient() -> None:
    """Seed example 2 (examples/variable_gradient.py): d(x^2)/dx for a Variable at 3."""
    x = gt.Variable(3.0)
    with gt.GradientTape() as tape:
        y = x**2
    print(tape.gradient(y, x))


def jacobian() -> None:
    """Seed example 3 (examples/jacobian.py): Jacobian of [x0^2, sin(x1)]."""
    x = gt.Variable([1.0, 2.0, 3.0])
    with gt.GradientTape() as tape:
        y = gt.stack([x[0] ** 2, gt.sin(x[1])])
    print("Jacobian:\n", tape.jacobian(y, x))


SEED_EXAMPLES = (higher_order_derivatives, variable_gradient, jacobian)


def run_seed_examples() -> None:
    for number, example in enumerate(SEED_EXAMPLES, 1):
        print(f"# Seed example {number}: {example.__doc__.split(':', 1)[1].strip()}")
        example()
        print()


def run_main_job() -> None:
    """The seed examples, the generated backward code of a small model, a short timing."""
    from gradtape.cli import demo

    run_seed_examples()
    print("# Generated backward code")
    demo.show_generated_code()
    print("# Speed")
    demo.speed_comparison()


def inspect_command(args: Sequence[str]) -> int:
    try:
        cli_inspect = importlib.import_module("gradtape.cli.inspect")
    except ImportError:
        print("gradtape: the inspect command is not available in this installation.",
              file=sys.stderr)
        return 2
    return cli_inspect.main(list(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        run_main_job()
        return 0
    if args[0] == "inspect":
        return inspect_command(args[1:])
    if args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    print(f"gradtape: unknown command {args[0]!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
