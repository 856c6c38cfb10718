"""Regenerates the docs' figures: ``python tools/docs_figures.py`` (needs Graphviz's ``dot``).

docs/img/compiler-example.dot and .svg are ``tape.inspect(loss, [w, b])``'s
``to_dot()`` / ``to_svg()`` for the example that opens docs/compiler.md (its first python
block). tests/tape/test_inspect_graph.py checks that both still match that example.
"""

from __future__ import annotations

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURE = os.path.join(REPO, "docs", "img", "compiler-example")


def compiler_example_inspection():
    """Runs the first python block of docs/compiler.md; returns its ``insp``."""
    sys.path.insert(0, os.path.join(REPO, "tests"))
    from docs_blocks import parse_blocks

    with open(os.path.join(REPO, "docs", "compiler.md"), encoding="utf-8") as f:
        first = next(b for b in parse_blocks(f.read()) if b.language == "python")
    namespace: dict = {"__name__": "__main__"}
    exec(compile(first.code, "model.py", "exec"), namespace)
    return namespace["insp"]


def main() -> None:
    insp = compiler_example_inspection()
    with open(FIGURE + ".dot", "w", encoding="utf-8") as f:
        f.write(insp.to_dot())
    with open(FIGURE + ".svg", "w", encoding="utf-8") as f:
        f.write(insp.to_svg())


if __name__ == "__main__":
    main()
