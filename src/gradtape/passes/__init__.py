"""Program -> Program rewrites and their pipeline (``pipeline.py``): the algebraic
rules merged into one walk (``simplify.py`` over ``fold``, ``zeros_ones``, ``signs``,
``noop_shapes``, ``regroup``), CSE, DCE, fills, fusion and buffer analyses, and the
selection of a backward's residuals (``residuals.py``); loop bodies and branches
(``control_flow.py``: the pipeline inside them; unread stacks dropped and invariant work
hoisted before code generation; ``loop_motion.py``: map-like work out of loops, counted
loops bounded).

Imports: ``ir``, ``ops``.
"""
