"""Automatic differentiation over programs: reverse mode (``reverse.py``: a backward
Program emitted with the ops' own VJP rules), batching (``batching.py``: jacobians),
forward mode (``forward_mode.py``: ``ForwardAccumulator``), and a backward as one call
op for nested tapes (``nested.py``, with its ``backward_call`` primitive and the memo of
what it derives from an entry); the derivatives of ``loop`` and ``switch``
(``control_flow.py``, installed on the primitives: a reversed loop, a switch of VJPs)
and ``loop``'s batching rule (``control_flow_batching.py``: one batched loop).

Imports: ``core``, ``ir``, ``ops``.
"""

from . import (
    control_flow,  # noqa: F401 - installs the derivatives of loop and switch
    control_flow_batching,  # noqa: F401 - installs loop's batching rule
)
