"""``gt.autograph.to_code`` (the converted source, pinned in
tests/golden/autograph_to_code.txt), ``to_graph`` and
``experimental.do_not_convert``."""

import os

import gradtape as gt
from gradtape.functions.autograph import conversion

GOLDEN = os.path.join(os.path.dirname(__file__), os.pardir, "golden",
                      "autograph_to_code.txt")


@gt.function
def clipped_sum(x, limit):
    total = gt.constant(0.0)
    for v in x:
        if v < 0:
            continue
        total = total + v
        if total > limit:
            break
    return total


def test_to_code_shows_the_converted_source_as_pinned():
    code = gt.autograph.to_code(clipped_sum)
    with open(GOLDEN, encoding="utf-8") as f:
        assert code == f.read()


def test_to_code_is_deterministic_across_conversions():
    first = gt.autograph.to_code(clipped_sum.python_function)
    conversion._cache.pop(clipped_sum.python_function.__code__)
    assert gt.autograph.to_code(clipped_sum.python_function) == first


def test_the_pinned_code_computes_what_python_does():
    x = gt.constant([1.0, -5.0, 2.0, 4.0, 8.0])
    assert clipped_sum(x, gt.constant(2.5)).numpy() == 3.0  # 1 + 2, then break
    assert clipped_sum(x, gt.constant(100.0)).numpy() == 15.0


def test_to_code_of_a_function_with_nothing_to_convert_is_its_source():
    def plain(x):
        return x * 2

    assert gt.autograph.to_code(plain) == "def plain(x):\n    return x * 2\n"


def test_to_graph_returns_the_converted_function():
    def relu_sum(x):
        total = gt.constant(0.0)
        for v in x:
            if v > 0:
                total = total + v
        return total

    converted = gt.autograph.to_graph(relu_sum)
    assert converted is not relu_sum
    f = gt.function(converted, autograph=False)  # already converted: traced as it is
    assert f(gt.constant([1.0, -2.0, 3.0])).numpy() == 4.0
    assert f(gt.constant([-1.0, 2.0, -3.0])).numpy() == 2.0
    assert f.experimental_get_tracing_count() == 1  # the if is a cond, not a guard


def test_do_not_convert_keeps_python_control_flow():
    @gt.autograph.experimental.do_not_convert
    def sign(x):
        if x > 0:
            return x * 0.0 + 1.0
        return x * 0.0 - 1.0

    f = gt.function(sign)
    assert f(gt.constant(3.0)).numpy() == 1.0
    assert f(gt.constant(-3.0)).numpy() == -1.0
    assert f.experimental_get_tracing_count() == 2  # Python's if: a guard per branch
    assert "ag__" not in gt.autograph.to_code(sign)
