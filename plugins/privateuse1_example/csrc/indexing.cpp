// Indexing: index_select and gather, element moves by size (any dtype).
//
// Both check their indices before writing anything and return the first index
// out of range (None when all are valid), so Python raises the core's error.
#include "runtime.h"

#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>

namespace openreg {

namespace {

std::vector<std::int64_t> read_indices(const Array& index) {
  if (index.dtype != kInt64) throw std::invalid_argument("openreg: indices must be int64");
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(index.numel()));
  char* base[1] = {index.data()};
  const std::vector<std::int64_t> st[1] = {index.broadcast_bytes(index.shape)};
  for_each_row<1>(index.shape, base, st, [&out](char** p, std::int64_t n, const std::int64_t* s) {
    for (std::int64_t i = 0; i < n; ++i) out.push_back(*reinterpret_cast<const std::int64_t*>(p[0] + i * s[0]));
  });
  return out;
}

std::optional<std::int64_t> first_outside(const std::vector<std::int64_t>& idx, std::int64_t hi) {
  for (auto v : idx)
    if (v < 0 || v >= hi) return v;
  return std::nullopt;
}

template <class V>
std::vector<V> without(const std::vector<V>& v, int dim) {
  std::vector<V> out(v);
  out.erase(out.begin() + dim);
  return out;
}

std::optional<std::int64_t> index_select(const Array& out, const Array& self, int dim, const Array& index) {
  std::vector<std::int64_t> idx;
  {
    py::gil_scoped_release nogil;
    idx = read_indices(index);
  }
  if (auto bad = first_outside(idx, self.shape[dim])) return bad;
  const auto shape = without(out.shape, dim);
  const auto out_st = without(out.broadcast_bytes(out.shape), dim);
  const auto self_st = without(self.broadcast_bytes(self.shape), dim);
  const std::int64_t out_step = out.strides[dim] * out.itemsize, self_step = self.strides[dim] * self.itemsize;
  py::gil_scoped_release nogil;
  for (std::size_t i = 0; i < idx.size(); ++i)
    strided_bytes(shape, out.data() + std::int64_t(i) * out_step, out_st, self.data() + idx[i] * self_step, self_st,
                  self.itemsize);
  return std::nullopt;
}

std::optional<std::int64_t> gather(const Array& out, const Array& self, int dim, const Array& index) {
  std::vector<std::int64_t> idx;
  {
    py::gil_scoped_release nogil;
    idx = read_indices(index);
  }
  if (auto bad = first_outside(idx, self.shape[dim])) return bad;
  // walk index's shape; self steps along every dim but `dim`, where the index value picks the element
  std::vector<std::int64_t> self_st(self.ndim());
  for (int d = 0; d < self.ndim(); ++d) self_st[d] = d == dim ? 0 : self.strides[d] * self.itemsize;
  const std::vector<std::int64_t> st[3] = {out.broadcast_bytes(out.shape), index.broadcast_bytes(out.shape),
                                           self_st};
  char* base[3] = {out.data(), index.data(), self.data()};
  const std::int64_t step = self.strides[dim] * self.itemsize;
  const std::size_t isz = self.itemsize;
  py::gil_scoped_release nogil;
  for_each_row<3>(out.shape, base, st, [step, isz](char** p, std::int64_t n, const std::int64_t* s) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t v = *reinterpret_cast<const std::int64_t*>(p[1] + i * s[1]);
      std::memcpy(p[0] + i * s[0], p[2] + i * s[2] + v * step, isz);
    }
  });
  return std::nullopt;
}

}  // namespace

void bind_indexing(py::module_& m) {
  m.def("index_select", &index_select,
        "out = self.index_select(dim, index); returns the first index out of range instead (None when all are valid).");
  m.def("gather", &gather,
        "out = self.gather(dim, index); returns the first index out of range instead (None when all are valid).");
}

}  // namespace openreg
