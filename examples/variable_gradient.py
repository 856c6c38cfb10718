"""Seed example 2: the gradient of a Variable, watched because it is read on the tape.

Run: python examples/variable_gradient.py
"""

import gradtape as tf  # was: import tensorflow as tf

x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x**2
dy_dx = tape.gradient(y, x)  # 2x = 6
print(dy_dx)
