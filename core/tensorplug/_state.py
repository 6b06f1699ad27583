"""Process-wide settings the core reads (the default device)."""

from .device import device

default_device = device("cpu")
