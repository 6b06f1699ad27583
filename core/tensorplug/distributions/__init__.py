"""``tensorplug.distributions``: probability distributions with sampling, reparameterized sampling,
log densities, entropies and KL divergences, as ``torch.distributions``.

``Normal``, ``Bernoulli``, ``Categorical``, ``Uniform``, ``MultivariateNormal``
(on ``tensorplug.linalg``) and ``Independent``; ``kl_divergence`` with the
closed forms registered by ``register_kl``. See docs/distributions.md.
"""

from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .normal import Normal
from .bernoulli import Bernoulli
from .categorical import Categorical
from .uniform import Uniform
from .multivariate_normal import MultivariateNormal
from .independent import Independent
from .kl import kl_divergence, register_kl

__all__ = ["constraints", "Distribution", "Normal", "Bernoulli", "Categorical", "Uniform", "MultivariateNormal",
           "Independent", "kl_divergence", "register_kl"]
