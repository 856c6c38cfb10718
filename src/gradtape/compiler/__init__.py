"""Compiling backwards: the compile cache and the per-entry memos (``cache.py``: LRU of
built backwards, their batched and derived programs) and the compiled runner
(``runner.py``: generate, compile, dump, fall back to the interpreter).

Imports: ``core``, ``ir``, ``codegen``.
"""
