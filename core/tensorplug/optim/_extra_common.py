"""Argument checks shared by the optimizers added after the first four."""

from __future__ import annotations

from .optimizer import _check_nonneg


def check_betas(betas):
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_common(lr, eps, weight_decay):
    _check_nonneg(lr, "learning rate")
    _check_nonneg(eps, "epsilon value")
    _check_nonneg(weight_decay, "weight_decay value")
