"""Fixtures shared by the whole test suite."""

import pytest

import gradtape as gt


@pytest.fixture(params=[True, False], ids=["compiled", "interpreted"])
def compile_mode(request):
    """Run the test twice: gradients through generated code (compiled on the first call
    of each structure), then through the reference interpreter. The value is the flag."""
    with gt.config(compile=request.param, compile_after=1):
        yield request.param
