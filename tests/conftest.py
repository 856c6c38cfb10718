"""Fixtures shared by the whole test suite."""

import os

import pytest
from hypothesis import settings

import gradtape as gt

# Property tests draw the same examples on every run, so CI cannot pass or fail by luck;
# GRADTAPE_HYPOTHESIS=explore draws new ones (run it to look for bugs, then pin what it
# finds with @example).
settings.register_profile("pinned", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("GRADTAPE_HYPOTHESIS", "pinned"))


@pytest.fixture(params=[True, False], ids=["compiled", "interpreted"])
def compile_mode(request):
    """Run the test twice: gradients through generated code (compiled on the first call
    of each structure), then through the reference interpreter. The value is the flag."""
    with gt.config(compile=request.param, compile_after=1):
        yield request.param


# Op tests and tape-semantics tests run twice: compiled (on the first call of each
# structure) and interpreted. Tests that take ``compile_mode`` already do it themselves.
_RUN_IN_BOTH_MODES = ("/ops/", "test_tape", "test_variable", "test_custom_gradient",
                      "test_nested", "test_jacobians", "test_higher_order")


def pytest_generate_tests(metafunc):
    path = str(metafunc.definition.path).replace("\\", "/")
    if "compile_mode" in metafunc.fixturenames:
        return
    if any(part in path for part in _RUN_IN_BOTH_MODES):
        metafunc.parametrize("gradient_mode", [True, False], ids=["compiled", "interpreted"],
                             indirect=True)


@pytest.fixture(autouse=True)
def gradient_mode(request):
    """Sets the compile option for tests parametrized by pytest_generate_tests above."""
    mode = getattr(request, "param", None)
    if mode is None:
        yield None
        return
    with gt.config(compile=mode, compile_after=1):
        yield mode
