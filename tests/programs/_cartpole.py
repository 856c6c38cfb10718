"""A small CartPole in NumPy, standing in for gym's ``CartPole-v1`` in the RL programs:
the classic cart-pole equations (Barto, Sutton and Anderson, 1983, as gym writes them),
``reset`` and ``step`` with gym's return conventions, seeded for repeatable runs."""

import numpy as np


class _Discrete:
    def __init__(self, n: int):
        self.n = n


class _Box:
    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape


class CartPole:
    """gym's CartPole dynamics; ``new_api`` picks gym 0.26's 5-tuple ``step`` and
    ``(state, info)`` ``reset`` over the old 4-tuple and bare state."""

    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, max_steps: int = 500, new_api: bool = True, seed: int = 0):
        self.max_steps = max_steps
        self.new_api = new_api
        self.rng = np.random.default_rng(seed)
        self.action_space = _Discrete(2)
        self.observation_space = _Box((4,))
        self.state = np.zeros(4)
        self.steps = 0

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        self.steps = 0
        state = self.state.astype(np.float32)
        return (state, {}) if self.new_api else state

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if int(action) == 1 else -self.force_mag
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + polemass_length * theta_dot**2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * cos**2 / total_mass))
        x_acc = temp - polemass_length * theta_acc * cos / total_mass
        self.state = np.array([x + self.tau * x_dot, x_dot + self.tau * x_acc,
                               theta + self.tau * theta_dot,
                               theta_dot + self.tau * theta_acc])
        self.steps += 1
        done = bool(abs(self.state[0]) > 2.4 or abs(self.state[2]) > 0.2095)
        truncated = self.steps >= self.max_steps
        state = self.state.astype(np.float32)
        if self.new_api:
            return state, 1.0, done, truncated, {}
        return state, 1.0, done or truncated, {}
