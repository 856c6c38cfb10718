"""A hanging spring-mass chain: forces are the negative gradient of the potential energy.

N point masses in the plane hang from a fixed anchor, each joined to the next by a
spring (stiffness k, rest length L), under gravity:

    U(p) = sum_i k/2 (|p_i - p_{i-1}| - L)^2 + sum_i m g y_i      (p_0 = the anchor)

``gt.value_and_grad(U)`` gives the energy and ``-F`` in one call, and velocity Verlet
integrates Newton's equations. Verlet is symplectic, so the total energy oscillates
slightly but does not drift: the largest energy error, printed relative to the peak
kinetic energy (the energy the motion actually exchanges), stays small.

Run: python examples/spring_chain.py
"""

from __future__ import annotations

import numpy as np

import gradtape as gt

N, MASS, K, REST, GRAVITY = 8, 0.5, 1000.0, 0.25, 9.81
ANCHOR = np.array([[0.0, 0.0]])


def potential_energy(p: gt.Tensor) -> gt.Tensor:
    chain = gt.concatenate([gt.constant(ANCHOR), p], axis=0)
    d = chain[1:] - chain[:-1]
    length = gt.sqrt(gt.reduce_sum(d * d, axis=1))
    springs = 0.5 * K * gt.reduce_sum((length - REST) ** 2)
    return springs + MASS * GRAVITY * gt.reduce_sum(p[:, 1])


energy_and_gradient = gt.value_and_grad(potential_energy)


def total_energy(p: np.ndarray, v: np.ndarray) -> float:
    return float(potential_energy(gt.constant(p))) + 0.5 * MASS * float(np.sum(v * v))


def simulate(steps: int = 1000, dt: float = 2e-3, report_every: int = 250) -> dict:
    # Start stretched out horizontally at rest: the chain swings down like a pendulum.
    p = np.stack([REST * np.arange(1, N + 1), np.zeros(N)], axis=1)
    v = np.zeros_like(p)
    _, grad_u = energy_and_gradient(p)
    a = -grad_u.numpy() / MASS
    e0 = total_energy(p, v)
    max_error = peak_kinetic = 0.0
    print(f"{N} masses, dt = {dt}, initial energy {e0:.6f}")
    for step in range(1, steps + 1):
        v_half = v + 0.5 * dt * a
        p = p + dt * v_half
        u, grad_u = energy_and_gradient(p)
        a = -grad_u.numpy() / MASS
        v = v_half + 0.5 * dt * a
        kinetic = 0.5 * MASS * float(np.sum(v * v))
        e = float(u) + kinetic
        max_error = max(max_error, abs(e - e0))
        peak_kinetic = max(peak_kinetic, kinetic)
        if step % report_every == 0:
            print(f"t = {step * dt:5.2f}  energy {e:.6f}  lowest mass y = {p[:, 1].min():+.3f}")
    drift = max_error / peak_kinetic
    print(f"peak kinetic energy {peak_kinetic:.4f}")
    print(f"max relative energy drift {drift:.2e}")
    return {"initial_energy": e0, "final_positions": p, "peak_kinetic": peak_kinetic,
            "max_drift": drift}


if __name__ == "__main__":
    simulate()
