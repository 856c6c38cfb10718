"""The allocator setting that keeps freed array memory for reuse (gradtape.memory)."""

import os
import subprocess
import sys

import pytest

from gradtape import memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a glibc setting")
def test_importing_gradtape_holds_freed_memory_on_glibc():
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    assert memory.held


def test_it_can_be_switched_off_before_import():
    code = "import gradtape.memory as m; print(m.held)"
    env = dict(os.environ, GRADTAPE_HOLD_MEMORY="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"
