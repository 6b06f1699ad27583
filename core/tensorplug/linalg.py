"""``tensorplug.linalg``: PyTorch's ``torch.linalg`` (norms, inverses and solves, determinants,
decompositions, pseudo-inverse and least squares, matrix functions and products).

Every function takes batches of matrices (any leading dims). The decompositions and solves are
operators with a kernel per backend and PyTorch's backward formulas
(:mod:`tensorplug.ops.linalg_decomp`); the rest decompose into them and other ops
(:mod:`tensorplug.ops.linalg_functions`). See docs/linalg.md.
"""

from __future__ import annotations

from .ops.linalg import vector_norm
from .ops.linalg_decomp import LinAlgError, det, solve_triangular, matrix_exp
from .ops.linalg_functions import (matrix_norm, norm, inv, inv_ex, solve, solve_ex, slogdet, svd, svdvals, qr,
                                   eigh, eigvalsh, cholesky, cholesky_ex, pinv, lstsq, multi_dot, vecdot,
                                   matrix_power, cross, matrix_rank)
from .ops.linalg_factor import (lu_factor, lu_factor_ex, lu, lu_solve, eig, eigvals, householder_product,
                                ldl_factor, ldl_factor_ex, ldl_solve)
from .ops.linalg_composites import cond, diagonal, vander, tensorinv, tensorsolve

__all__ = ["vector_norm", "matrix_norm", "norm", "inv", "inv_ex", "solve", "solve_ex", "det", "slogdet", "svd",
           "svdvals", "qr", "eigh", "eigvalsh", "cholesky", "cholesky_ex", "pinv", "lstsq", "multi_dot", "vecdot",
           "matrix_power", "cross", "solve_triangular", "matrix_rank", "matrix_exp", "LinAlgError",
           "lu_factor", "lu_factor_ex", "lu", "lu_solve", "eig", "eigvals", "householder_product", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "cond", "diagonal", "vander", "tensorinv", "tensorsolve"]


from .ops import out as _out  # noqa: E402

_out.install(globals(), "linalg")  # PyTorch's out=
