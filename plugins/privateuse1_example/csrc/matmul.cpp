// Batched matrix multiply: out[..., M, N] = a[..., M, K] @ b[..., K, N].
//
// The caller broadcasts the batch dims (stride 0 where an operand repeats) and
// allocates a dense out. Each batch runs a cache-blocked i-k-j loop: a strip of
// b's rows is reused across all rows of a while it sits in cache, four rows of
// out are updated per load of a row of b, and the innermost loop runs along
// contiguous rows of b and out so it vectorises.
// b is packed densely first when its rows are not contiguous (x @ w.t()).
#include "runtime.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace openreg {

namespace {

constexpr std::int64_t kBlockK = 128;
constexpr std::int64_t kBlockN = 512;

// Integer products wrap around, as in PyTorch: computed in the unsigned type.
template <class T>
using Work = std::conditional_t<std::is_integral_v<T>, std::uint64_t, T>;

template <class T>
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, const char* a, std::int64_t a_rs, std::int64_t a_cs,
          const T* b, std::int64_t ldb, T* c) {
  using W = Work<T>;
  W* cw = reinterpret_cast<W*>(c);
  const W* bw = reinterpret_cast<const W*>(b);
  std::fill(cw, cw + M * N, W(0));
  for (std::int64_t k0 = 0; k0 < K; k0 += kBlockK) {
    const std::int64_t k1 = std::min(K, k0 + kBlockK);
    for (std::int64_t j0 = 0; j0 < N; j0 += kBlockN) {
      const std::int64_t j1 = std::min(N, j0 + kBlockN);
      std::int64_t i = 0;
      // four rows of out at a time: each row of b loaded once feeds four accumulating rows
      for (; i + 4 <= M; i += 4) {
        W* __restrict c0 = cw + i * N;
        W* __restrict c1 = c0 + N;
        W* __restrict c2 = c1 + N;
        W* __restrict c3 = c2 + N;
        const char* a0 = a + i * a_rs;
        for (std::int64_t k = k0; k < k1; ++k) {
          const char* ak = a0 + k * a_cs;
          const W x0 = W(*reinterpret_cast<const T*>(ak));
          const W x1 = W(*reinterpret_cast<const T*>(ak + a_rs));
          const W x2 = W(*reinterpret_cast<const T*>(ak + 2 * a_rs));
          const W x3 = W(*reinterpret_cast<const T*>(ak + 3 * a_rs));
          const W* __restrict brow = bw + k * ldb;
          for (std::int64_t j = j0; j < j1; ++j) {
            const W bj = brow[j];
            c0[j] += x0 * bj;
            c1[j] += x1 * bj;
            c2[j] += x2 * bj;
            c3[j] += x3 * bj;
          }
        }
      }
      for (; i < M; ++i) {
        W* __restrict crow = cw + i * N;
        const char* arow = a + i * a_rs;
        for (std::int64_t k = k0; k < k1; ++k) {
          const W aik = W(*reinterpret_cast<const T*>(arow + k * a_cs));
          const W* __restrict brow = bw + k * ldb;
          for (std::int64_t j = j0; j < j1; ++j) crow[j] += aik * brow[j];
        }
      }
    }
  }
}

template <class T>
void matmul_typed(const Array& out, const Array& a, const Array& b) {
  const int nd = out.ndim();
  const std::int64_t M = out.shape[nd - 2], N = out.shape[nd - 1], K = a.shape[nd - 1];
  const std::vector<std::int64_t> batch(out.shape.begin(), out.shape.end() - 2);
  std::int64_t nbatch = 1;
  for (auto s : batch) nbatch *= s;
  const std::int64_t isz = sizeof(T);
  const bool b_dense_rows = b.strides[nd - 1] == 1 || N == 1;
  std::vector<T> packed(b_dense_rows ? 0 : static_cast<std::size_t>(K * N));
  std::vector<std::int64_t> idx(batch.size(), 0);
  for (std::int64_t t = 0; t < nbatch; ++t) {
    std::int64_t a_off = a.offset, b_off = b.offset;
    for (std::size_t d = 0; d < batch.size(); ++d) {
      a_off += idx[d] * a.strides[d];
      b_off += idx[d] * b.strides[d];
    }
    const T* bp = reinterpret_cast<const T*>(b.buf->ptr) + b_off;
    std::int64_t ldb = b.strides[nd - 2];
    if (!b_dense_rows) {
      for (std::int64_t k = 0; k < K; ++k)
        for (std::int64_t j = 0; j < N; ++j) packed[k * N + j] = bp[k * b.strides[nd - 2] + j * b.strides[nd - 1]];
      bp = packed.data();
      ldb = N;
    }
    const char* ap = a.buf->ptr + a_off * isz;
    T* cp = reinterpret_cast<T*>(out.data()) + t * M * N;
    gemm<T>(M, N, K, ap, a.strides[nd - 2] * isz, a.strides[nd - 1] * isz, bp, ldb, cp);
    for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
}

void matmul(const Array& out, const Array& a, const Array& b) {
  if (a.ndim() != out.ndim() || b.ndim() != out.ndim() || out.ndim() < 2)
    throw std::invalid_argument("openreg: matmul operands must be broadcast to out's rank first");
  if (a.dtype != out.dtype || b.dtype != out.dtype) throw std::invalid_argument("openreg: matmul dtypes differ");
  if (out.numel() == 0) return;
  py::gil_scoped_release nogil;
  dispatch_compute(out.dtype, [&](auto tag) { matmul_typed<decltype(tag)>(out, a, b); });
}

}  // namespace

void bind_matmul(py::module_& m) {
  m.def("matmul", &matmul, "out[..., M, N] = a[..., M, K] @ b[..., K, N] with batch dims broadcast; out dense.");
}

}  // namespace openreg
