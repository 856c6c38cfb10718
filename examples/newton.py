"""Newton's method with a Hessian from nested tapes.

Minimizes the extended Rosenbrock function, whose minimum is at (1, 1, ..., 1), with
Newton steps ``x <- x - t H^-1 g`` and a backtracking line search. The gradient ``g`` and
the Hessian ``H`` come from two nested tapes, the way TensorFlow users write them:

    with gt.GradientTape() as outer:
        with gt.GradientTape() as inner:
            y = f(x)
        g = inner.gradient(y, x)   # on `outer`: one call of the compiled backward
    h = outer.jacobian(g, x)       # that call's derivative, batched over the rows of H

Every step records the same structure, so after the first steps each level runs
generated code from the cache: `gt.cache_info()` shows nothing new compiled later.

    python examples/newton.py
"""

import numpy as np

import gradtape as gt


def rosenbrock(x):
    """sum(100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2)."""
    return gt.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def value_gradient_hessian(f, x):
    """f(x), its gradient and its Hessian, as NumPy arrays."""
    x = gt.constant(x)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x)
    return y.numpy(), g.numpy(), h.numpy()


def newton(f, x0, tolerance=1e-10, max_steps=100):
    """Minimize ``f`` from ``x0``: returns the minimizer and the number of steps."""
    x = np.asarray(x0, dtype=np.float64)
    for step in range(max_steps):
        y, g, h = value_gradient_hessian(f, x)
        if np.linalg.norm(g) < tolerance:
            return x, step
        try:
            direction = -np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            direction = -g
        if g @ direction >= 0:  # H not positive definite here: go downhill instead
            direction = -g
        t = 1.0  # backtracking until the decrease is sufficient (Armijo's rule)
        while f(gt.constant(x + t * direction)).numpy() > y + 1e-4 * t * (g @ direction):
            t *= 0.5
        x = x + t * direction
    raise RuntimeError(f"Newton's method did not converge in {max_steps} steps.")


if __name__ == "__main__":
    start = np.zeros(8)
    solution, steps = newton(rosenbrock, start)
    expected = np.ones_like(start)
    print(f"converged in {steps} Newton steps to {np.round(solution, 10)}")
    print(f"distance to the minimum: {np.linalg.norm(solution - expected):.2e}")
    info = gt.cache_info()
    print(f"backward functions compiled: {info.compiled} (hits {info.hits}, "
          f"misses {info.misses})")
