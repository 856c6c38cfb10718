"""Building and compiling backwards: the build recipe (``build.py``: lower → vjp →
passes → residual selection → entry, the one place a backward is made), the user's names
for its values (``value_names.py``), the compile cache and the batched backwards per
entry (``cache.py``), and the compiled runner (``runner.py``: generate, compile, dump,
fall back to the interpreter).

Imports: ``core``, ``ir``, ``ops``, ``passes``, ``codegen``, ``ad``.
"""
