"""The intermediate representation: program nodes (``nodes.py``), ``Primitive``
(``primitive.py``), the builder, abstract evaluation, the printer, a program as a
Graphviz graph (``graph.py``), the verifier, the interpreter, the one program walker
(``walk.py``), dead-code elimination, and the lowering of tape records (``lower.py``).

Imports: ``core``.
"""
