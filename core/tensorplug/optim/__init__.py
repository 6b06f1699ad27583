"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``,
``RAdam``, ``LBFGS``) and learning rate schedulers.

The API, update rules and state-dict layout follow ``torch.optim``; see
docs/training.md.
"""

from __future__ import annotations

from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .lbfgs import LBFGS
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "lr_scheduler"]
