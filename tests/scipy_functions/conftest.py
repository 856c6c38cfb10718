"""Fixtures for the gt.scipy tests: the op tests' ``check_jvp`` and ``check_batching``."""

import importlib.util
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    "ops_conftest", pathlib.Path(__file__).resolve().parent.parent / "ops" / "conftest.py")
_ops_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ops_conftest)


@pytest.fixture
def check_jvp():
    return _ops_conftest._check_jvp


@pytest.fixture
def check_batching():
    return _ops_conftest._check_batching
