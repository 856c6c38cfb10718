"""``GradientTape``: the tape (``gradient_tape.py``), recording (``recording.py``),
site references, the lookup ladder (``lookup.py``), the gradient driver
(``backward.py``: look up, or build with ``compiler/build.py``, then run), jacobians,
``inspect`` (``inspection.py``: the IR texts, the source, ``to_dot``/``to_svg``), and
``custom_gradient`` (``custom_gradient.py``, whose primitives run ``grad_fn`` under the
tapes).

Imports: everything below it (``core``, ``ir``, ``ops``, ``passes``, ``codegen``,
``ad``, ``compiler``).
"""
