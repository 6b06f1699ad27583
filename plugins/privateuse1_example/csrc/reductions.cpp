// Reductions over dims: sum and amax (keepdim handled by the caller's out shape).
//
// The input is walked once in its own memory order while each element is folded
// into an accumulator slot (stride 0 along the reduced dims), so a reduction over
// the leading dim streams through memory just as one over the last dim does.
// Floating sums accumulate in double and round once; integer sums wrap.
#include "runtime.h"

#include <limits>
#include <stdexcept>
#include <type_traits>

namespace openreg {

namespace {

template <class T>
struct SumOp {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, std::uint64_t>;
  static Acc init() { return Acc(0); }
  static Acc fold(Acc a, T x) { return a + Acc(x); }
  static Acc merge(Acc a, Acc b) { return a + b; }
};

template <class T>
struct MaxOp {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  // NaN propagates: once the accumulator is NaN it stays NaN
  static Acc fold(Acc a, T x) { return (a > x || a != a) ? a : x; }
  static Acc merge(Acc a, Acc b) { return fold(a, b); }
};

template <class T, class Op>
void reduce_typed(const Array& out, const Array& in, const std::vector<bool>& reduced) {
  using Acc = typename Op::Acc;
  std::vector<std::int64_t> kept;
  for (int d = 0; d < in.ndim(); ++d)
    if (!reduced[d]) kept.push_back(in.shape[d]);
  const auto kept_st = contiguous_strides(kept);
  std::vector<std::int64_t> acc_st(in.ndim(), 0);
  for (int d = 0, k = 0; d < in.ndim(); ++d)
    if (!reduced[d]) acc_st[d] = kept_st[k++] * std::int64_t(sizeof(Acc));
  std::int64_t n_out = 1;
  for (auto s : kept) n_out *= s;
  std::vector<Acc> acc(static_cast<std::size_t>(n_out), Op::init());
  char* base[2] = {reinterpret_cast<char*>(acc.data()), in.data()};
  const std::vector<std::int64_t> st[2] = {acc_st, in.broadcast_bytes(in.shape)};
  for_each_row<2>(in.shape, base, st, [](char** p, std::int64_t n, const std::int64_t* s) {
    Acc* a = reinterpret_cast<Acc*>(p[0]);
    if (s[0] == 0) {
      // a whole row into one slot: four independent chains keep the adder busy
      Acc part[4] = {Op::init(), Op::init(), Op::init(), Op::init()};
      std::int64_t i = 0;
      if (s[1] == std::int64_t(sizeof(T))) {
        const T* x = reinterpret_cast<const T*>(p[1]);
        for (; i + 4 <= n; i += 4)
          for (int j = 0; j < 4; ++j) part[j] = Op::fold(part[j], x[i + j]);
        for (; i < n; ++i) part[0] = Op::fold(part[0], x[i]);
      } else {
        for (; i < n; ++i) part[0] = Op::fold(part[0], *reinterpret_cast<const T*>(p[1] + i * s[1]));
      }
      *a = Op::merge(*a, Op::merge(Op::merge(part[0], part[1]), Op::merge(part[2], part[3])));
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      Acc* slot = reinterpret_cast<Acc*>(p[0] + i * s[0]);
      *slot = Op::fold(*slot, *reinterpret_cast<const T*>(p[1] + i * s[1]));
    }
  });
  // out is fresh and dense, in the accumulator's order
  T* o = reinterpret_cast<T*>(out.data());
  for (std::int64_t i = 0; i < n_out; ++i) o[i] = T(acc[i]);
}

void reduce(const std::string& op, const Array& out, const Array& in0, std::vector<std::int64_t> dims) {
  const Array in = as_dtype(in0, out.dtype);
  std::vector<bool> reduced(in.ndim(), dims.empty());
  for (auto d : dims) reduced[d < 0 ? d + in.ndim() : d] = true;
  py::gil_scoped_release nogil;
  dispatch_compute(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (op == "sum") reduce_typed<T, SumOp<T>>(out, in, reduced);
    else if (op == "amax") reduce_typed<T, MaxOp<T>>(out, in, reduced);
    else throw std::invalid_argument("openreg: unknown reduction " + op);
  });
}

}  // namespace

void bind_reductions(py::module_& m) {
  m.def("reduce", &reduce, "out = op over dims of in (all dims when dims is empty); out is fresh and dense.",
        py::arg("op"), py::arg("out"), py::arg("input"), py::arg("dims"));
}

}  // namespace openreg
