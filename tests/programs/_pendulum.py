"""A small Pendulum in NumPy, standing in for gym's ``Pendulum-v0`` in the DDPG
program: gym's equations (torque in [-2, 2], reward ``-(theta^2 + 0.1 theta_dot^2 +
0.001 u^2)``), the old gym API (``reset`` returns the observation, ``step`` a 4-tuple),
seeded for repeatable runs."""

import numpy as np


class _Box:
    def __init__(self, low: float, high: float, shape: tuple[int, ...]):
        self.low = np.full(shape, low, np.float32)
        self.high = np.full(shape, high, np.float32)
        self.shape = shape


class Pendulum:
    max_speed, max_torque, dt, g, m, length = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0

    def __init__(self, max_steps: int = 200, seed: int = 0):
        self.max_steps = max_steps
        self.rng = np.random.default_rng(seed)
        self.observation_space = _Box(-8.0, 8.0, (3,))
        self.action_space = _Box(-self.max_torque, self.max_torque, (1,))
        self.theta, self.theta_dot, self.steps = 0.0, 0.0, 0

    def _observation(self) -> np.ndarray:
        return np.array([np.cos(self.theta), np.sin(self.theta), self.theta_dot])

    def reset(self) -> np.ndarray:
        self.theta = self.rng.uniform(-np.pi, np.pi)
        self.theta_dot = self.rng.uniform(-1.0, 1.0)
        self.steps = 0
        return self._observation()

    def step(self, action):
        u = float(np.clip(np.asarray(action).reshape(-1)[0], -self.max_torque,
                          self.max_torque))
        angle = ((self.theta + np.pi) % (2 * np.pi)) - np.pi
        reward = -(angle**2 + 0.1 * self.theta_dot**2 + 0.001 * u**2)
        self.theta_dot = np.clip(
            self.theta_dot + (3 * self.g / (2 * self.length) * np.sin(self.theta)
                              + 3.0 / (self.m * self.length**2) * u) * self.dt,
            -self.max_speed, self.max_speed)
        self.theta = self.theta + self.theta_dot * self.dt
        self.steps += 1
        return self._observation(), reward, self.steps >= self.max_steps, {}
