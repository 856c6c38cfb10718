"""``gradtape.testing``: numerical gradient checks for users' own functions, imported by
this path (``from gradtape.testing import check_grads``). They live in ``api/testing.py``.
"""

from .api.testing import check_grads, check_vjp

__all__ = ["check_grads", "check_vjp"]
