"""``tape.inspect(...).to_dot()`` / ``.to_svg()``: the forward and backward programs as a
Graphviz graph, node for node and edge for edge the programs ``forward_ir`` and
``optimized_ir`` print."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import gradtape as gt

NODE = re.compile(r'^\s+(\w+) \[shape=(\w+), label="((?:[^"\\]|\\.)*)"\];$')
EDGE = re.compile(r"^\s+(\w+) -> (\w+)(?: \[label=\"(\d+)\"\])?;$")


def parse_dot(text: str) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, str]]]:
    """{node id: (shape, label)} and [(from, to, label)] of our DOT output."""
    nodes, edges = {}, []
    for line in text.splitlines():
        if m := NODE.match(line):
            nodes[m[1]] = (m[2], m[3])
        elif m := EDGE.match(line):
            edges.append((m[1], m[2], m[3]))
    return nodes, edges


def small_inspection():
    """sin(x) * w, summed: forward sin, multiply, sum; backward cos, multiply, ..."""
    x = gt.constant(np.array([0.5, 1.0, 2.0]))
    w = gt.Variable(np.array([1.0, -2.0, 3.0]), name="w")
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.sin(x) * w)
    return tape.inspect(y, [x, w])


def test_the_forward_cluster_has_a_node_per_input_and_equation_and_an_edge_per_read():
    text = small_inspection().to_dot()
    assert text.startswith("digraph gradtape {") and text.rstrip().endswith("}")
    nodes, edges = parse_dot(text)
    forward = {k: v for k, v in nodes.items() if k.startswith("forward_")}
    boxes = [label for shape, label in forward.values() if shape == "box"]
    assert [label.split(" = ")[1].split("(")[0] for label in boxes] == ["sin", "multiply",
                                                                        "sum"]
    inputs = sorted(label for shape, label in forward.values() if shape == "ellipse")
    assert len(inputs) == 2 and all(label.endswith(r"\nfloat64[3]") for label in inputs)
    by_label = {label.split(" = ")[0]: node for node, (_, label) in forward.items()
                if " = " in label}
    sin, multiply, total = by_label["sin_3"], by_label["multiply_4"], by_label["sum_5"]
    into = {(a, b) for a, b, _ in edges}
    assert (sin, multiply) in into and (multiply, total) in into
    assert (total, "forward_return", "0") in edges
    # Every edge joins two nodes the graph declares.
    assert all(a in nodes and (b in nodes) for a, b, _ in edges)


def test_the_backward_cluster_is_the_optimized_program():
    insp = small_inspection()
    nodes, edges = parse_dot(insp.to_dot())
    backward = [label for node, (shape, label) in nodes.items()
                if node.startswith("backward_e")]
    # One box per equation of optimized_ir, with the same names and primitives.
    eqn_lines = [line.strip() for line in insp.optimized_ir.splitlines()[1:-1]]
    assert len(backward) == len(eqn_lines)
    for label, line in zip(backward, eqn_lines):
        out, prim = line.split(" = ")[0].split(":")[0], line.split(" = ")[1].split()[0]
        assert label.startswith(f"{out} = {prim}(")
    returned = sorted(label for _, to, label in edges if to == "backward_return")
    assert returned == ["0", "1"]  # d/dx and d/dw


def test_labels_are_escaped_for_dot():
    from gradtape.ir.graph import _quote

    assert _quote('say "hi"\\now\nnext') == '"say \\"hi\\"\\\\now\\nnext"'


def test_to_svg_without_graphviz_names_it(monkeypatch):
    insp = small_inspection()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(gt.errors.NotFoundError, match="Graphviz.*dot.*install Graphviz"):
        insp.to_svg()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_to_svg_renders_with_graphviz():
    svg = small_inspection().to_svg()
    assert "<svg" in svg and "</svg>" in svg
    assert "sin_3 = sin(x_2)" in svg or "sin_3 = sin(x_1)" in svg


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                    reason="the figure is NumPy 2's program, as the golden files are "
                           "(NumPy 1.26's promotion records other constants)")
def test_the_compiler_page_figure_is_the_example_drawn_today():
    # docs/img/compiler-example.{dot,svg}: regenerate with `python tools/docs_figures.py`.
    import html
    import os
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, os.path.join(repo, "tools"))
    try:
        from docs_figures import FIGURE, compiler_example_inspection
    finally:
        sys.path.remove(os.path.join(repo, "tools"))
    dot = compiler_example_inspection().to_dot()
    with open(FIGURE + ".dot", encoding="utf-8") as f:
        assert f.read() == dot
    # The SVG shows the same labels (Graphviz writes each label line as one <text>).
    with open(FIGURE + ".svg", encoding="utf-8") as f:
        svg_texts = sorted(html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>",
                                                                f.read()))
    nodes, edges = parse_dot(dot)
    expected = [line for _, label in nodes.values() for line in label.split(r"\n")]
    expected += [label for _, _, label in edges if label]
    expected += ["forward", "backward (after passes)"]
    assert svg_texts == sorted(expected)
