"""TF's device API on a CPU-only library: ``tf.device``, ``tf.config.list_*_devices``.

gradtape computes with NumPy in this process, so there is one device, TF's
``/device:CPU:0``. ``tf.device("GPU:0")`` runs on it too, as TF's soft placement does
when no GPU is present; a device string TF would reject raises TF's error.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

__all__ = ["PhysicalDevice", "LogicalDevice", "device", "list_physical_devices",
           "list_logical_devices", "DEVICE_NAME"]

# What ``Tensor.device`` reports: every tensor lives here.
DEVICE_NAME = "/job:localhost/replica:0/task:0/device:CPU:0"

# TF's device spec: optional job/replica/task parts, then an optional device type:index
# (``CPU:0``, ``/cpu:0``, ``/device:GPU:1``, ``/job:localhost/device:CPU:0``).
_SPEC = re.compile(
    r"^(/job:[\w-]+)?(/replica:\d+)?(/task:\d+)?"
    r"(/?(device:)?(?P<type>[A-Za-z_]+)(:(?P<index>\d+|\*))?)?$")


class PhysicalDevice(NamedTuple):
    """TF's ``tf.config.PhysicalDevice``."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """TF's ``tf.config.LogicalDevice``."""

    name: str
    device_type: str


_CPU = PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")
_CPU_LOGICAL = LogicalDevice(name="/device:CPU:0", device_type="CPU")


def _check_type(device_type: str | None, where: str) -> str | None:
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError(f"{where}: device_type must be a string such as 'CPU' or 'GPU', "
                        f"got {device_type!r}.")
    return None if device_type is None else device_type.upper()


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The devices this process computes on (``tf.config.list_physical_devices``): one
    CPU; ``[]`` for ``'GPU'``, ``'TPU'`` or any other type."""
    wanted = _check_type(device_type, "tf.config.list_physical_devices")
    return [_CPU] if wanted in (None, "CPU") else []


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """``tf.config.list_logical_devices``: the one CPU, as ``/device:CPU:0``."""
    wanted = _check_type(device_type, "tf.config.list_logical_devices")
    return [_CPU_LOGICAL] if wanted in (None, "CPU") else []


class device:  # TF's name
    """``with tf.device('GPU:0'):`` — a context manager that places nothing: every
    op runs on the CPU (TF's soft placement when the device does not exist). The
    spec is checked as TF checks it: a malformed string raises ``ValueError``."""

    def __init__(self, device_name: Any):
        if device_name is not None and not isinstance(device_name, str):
            if callable(device_name):
                raise RuntimeError("tf.device does not support functions when eager "
                                   "execution is enabled; pass a device string such as "
                                   "'CPU:0'.")
            raise TypeError(f"tf.device needs a device string such as 'CPU:0' or "
                            f"'/device:GPU:0', got {device_name!r}.")
        if device_name and not _SPEC.match(device_name):
            raise ValueError(
                f"Unknown attribute or malformed device spec {device_name!r}: write it as "
                "'CPU:0', '/CPU:0', '/device:CPU:0' or '/job:localhost/device:CPU:0'.")
        self.name = device_name or ""

    def __enter__(self) -> device:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return f"tf.device({self.name!r})"
