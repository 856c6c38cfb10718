"""Test helpers for the Dask tests (imported after ``pytest.importorskip("dask")``)."""

from dask.callbacks import Callback


class CountComputes(Callback):
    """Counts the graphs Dask computes while it is active (local schedulers)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1
