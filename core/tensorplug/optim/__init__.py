"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``) and learning rate schedulers.

The API, update rules and state-dict layout follow ``torch.optim``; see
docs/training.md.
"""

from __future__ import annotations

from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
