"""Seed example 1: second derivative with nested tapes.

The TensorFlow code, with only the import changed. The inner tape's gradient is
computed while the outer tape records, so the outer tape can differentiate it again.

Run: python examples/higher_order_derivatives.py
"""

import gradtape as tf  # was: import tensorflow as tf

x = tf.constant(5.0)
with tf.GradientTape() as g:
    g.watch(x)
    with tf.GradientTape() as gg:
        gg.watch(x)
        y = x * x * x
    dy_dx = gg.gradient(y, x)  # 3x^2 = 75
d2y_dx2 = g.gradient(dy_dx, x)  # 6x = 30

print("First-order derivative (dy_dx):", dy_dx)
print("Second-order derivative (d2y_dx2):", d2y_dx2)
