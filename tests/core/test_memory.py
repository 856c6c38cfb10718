"""Importing gradtape leaves the process allocator alone; holding freed memory is opt-in.

Each check runs in a fresh interpreter: glibc's settings belong to the whole process.
"""

import os
import platform
import subprocess
import sys

import pytest

import gradtape as gt

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="a glibc setting, read from /proc")

# Allocates and frees 40 arrays of 8 MB (each below glibc's 32 MiB mmap ceiling, so a
# raised trim threshold keeps them all) and prints RSS in MiB: before, at the peak, after.
_RSS_AFTER_FREE = r"""
import sys
import numpy as np
import gradtape as gt
from gradtape.core import memory

def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024

if sys.argv[1] == "config":
    gt.config(hold_freed_memory=True)
base = rss()
arrays = [np.ones(1_000_000) for _ in range(40)]
peak = rss()
del arrays
after = rss()
print(memory.held, round(base), round(peak), round(after))
"""


def _run(code: str, *args: str, hold_env: str | None = None) -> str:
    env = dict(os.environ)
    env.pop("GRADTAPE_HOLD_MEMORY", None)
    if hold_env is not None:
        env["GRADTAPE_HOLD_MEMORY"] = hold_env
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(gt.__file__))  # this copy
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, check=True).stdout.split()


def _rss_after_free(mode: str = "import", hold_env: str | None = None):
    held, base, peak, after = _run(_RSS_AFTER_FREE, mode, hold_env=hold_env)
    return held == "True", int(base), int(peak), int(after)


def test_freed_memory_goes_back_to_the_system_after_import():
    held, base, peak, after = _rss_after_free()
    assert not held
    assert peak - base > 250  # the arrays were really there
    assert after - base < 50, f"RSS kept {after - base} MiB of {peak - base} MiB freed"


def test_holding_freed_memory_is_an_explicit_opt_in_from_the_environment():
    held, base, peak, after = _rss_after_free(hold_env="1")
    assert held
    assert after - base > 250  # kept for reuse, as asked


def test_holding_freed_memory_by_config_and_giving_it_back():
    held, base, peak, after = _rss_after_free("config")
    assert held and after - base > 250
    code = _RSS_AFTER_FREE + (
        "gt.config(hold_freed_memory=False)\n"
        "print(memory.held, round(rss()))\n")
    out = _run(code, "config")
    assert out[0] == "True" and out[4] == "False"
    assert int(out[5]) - int(out[1]) < 50  # trimmed back to the system


def test_gradtape_hold_memory_zero_means_off():
    held, base, _, after = _rss_after_free(hold_env="0")
    assert not held and after - base < 50


def test_the_option_is_a_bool_config_option():
    assert gt.config().hold_freed_memory is False
