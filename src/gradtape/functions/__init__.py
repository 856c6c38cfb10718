"""``@gt.function``: the decorator (``api.py``), tracing (``trace.py``), the traced call
and its gradient (``call.py``), gradient drops told per call (``drops.py``), retracing,
signatures and ``TensorSpec``, ``py_function``/``numpy_function``, a loop body or branch
traced into a sub-program (``subtrace.py``), the values a trace computed that the call
right after it reuses (``trace_runs.py``), and the primitives
that run a traced program or the user's Python (``function_call``, ``py_function``,
``variable_read``, ``guard_check``).

Imports: everything below it (``core``, ``ir``, ``ops``, ``passes``, ``codegen``,
``ad``, ``compiler``, ``tape``).
"""
