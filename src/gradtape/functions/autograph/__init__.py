"""AutoGraph for ``@gt.function``: Python ``if``/``while``/``for`` on tensors become
``gt.cond`` and ``gt.while_loop`` (TF's ``tf.autograph``).

``conversion.py`` converts a function's source once per code object (gast), through
``jumps.py`` (``break``/``continue``/``return`` as flags), ``analysis.py`` (what each
statement carries) and ``control_flow.py`` (statements as runtime calls, built with
``templates.py``); ``runtime.py`` is what converted code calls (``ag__``), deciding per
call whether a statement runs as Python or as a graph op, with TF's checks
(``checks.py``) and placeholders (``undefined.py``). Part of ``functions/``: it
imports ``core`` and ``ops``; ``gt.cond``, ``gt.while_loop`` and ``gt.range`` (in
``api/``, above) are installed into ``runtime`` by the package root.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .conversion import AutoGraphWarning, converted, converted_source, do_not_convert
from .runtime import install

__all__ = ["to_code", "to_graph", "do_not_convert", "converted", "install",
           "AutoGraphWarning"]


def to_code(entity: Callable[..., Any], recursive: bool = True,
            experimental_optional_features: Any = None) -> str:
    """TF's ``tf.autograph.to_code``: the source ``@gt.function`` traces for
    ``entity`` (a function or a ``gt.function``), its control flow converted. A
    function with nothing to convert shows its own source."""
    del recursive, experimental_optional_features
    return converted_source(entity)


def to_graph(entity: Callable[..., Any], recursive: bool = True,
             experimental_optional_features: Any = None) -> Callable[..., Any]:
    """TF's ``tf.autograph.to_graph``: ``entity`` with its control flow converted, a
    Python function to call inside ``@gt.function`` (or eagerly)."""
    del recursive, experimental_optional_features
    return converted(getattr(entity, "python_function", entity))
