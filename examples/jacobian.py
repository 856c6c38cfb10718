"""Seed example 3: the Jacobian of a vector function of a Variable.

y = [x0^2, sin(x1)], so dy/dx = [[2 x0, 0, 0], [0, cos(x1), 0]] = [[2, 0, 0], [0, -0.416, 0]].

Run: python examples/jacobian.py
"""

import gradtape as tf  # was: import tensorflow as tf

x = tf.Variable([1.0, 2.0, 3.0])
with tf.GradientTape() as tape:
    y = tf.stack([x[0] ** 2, tf.sin(x[1])])
jacobian = tape.jacobian(y, x)
print("Jacobian:\n", jacobian)
