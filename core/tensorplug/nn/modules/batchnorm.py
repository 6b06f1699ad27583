"""``torch.nn.modules.batchnorm``'s path: the batch normalization layers (defined in ``normalization``)."""

from .normalization import BatchNorm1d, BatchNorm2d

__all__ = ["BatchNorm1d", "BatchNorm2d"]
