"""Convolution as TF's ``tf.nn`` has it (``conv2d`` and its family): one primitive,
``conv_general`` (``general.py``), its NumPy kernels (``kernels.py``: im2col and
col2im on BLAS), TF's argument rules (``arguments.py``) and TF's functions
(``tf_ops.py``). NumPy's ``convolve`` is elsewhere (``ops/convolution.py``).

Imports: ``core``, ``ir`` (through the ops beside it).
"""

from . import tf_ops
from .general import conv_general, conv_general_p
from .tf_ops import *  # noqa: F403

__all__ = ["conv_general", "conv_general_p", *tf_ops.__all__]
