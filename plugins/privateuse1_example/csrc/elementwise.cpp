// Elementwise kernels: binary arithmetic with broadcasting, unary math,
// comparisons, where, and relu's backward.
//
// Python has decided the result dtype (tensorplug's promotion) and allocated
// `out` with the broadcast shape; inputs of another dtype are cast here first.
// Integer arithmetic wraps around like PyTorch's (done in unsigned types,
// where overflow is defined); integer division by zero raises.
#include "runtime.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace openreg {

namespace {

enum Binary { kAdd = 0, kSub = 1, kMul = 2, kDiv = 3, kMaximum = 4, kDivTrunc = 5, kDivFloor = 6 };
enum Unary { kNeg = 0, kExp = 1, kLog = 2 };
enum Compare { kEq = 0, kNe = 1, kLt = 2, kLe = 3, kGt = 4, kGe = 5 };

template <class T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(std::uint64_t(a) + std::uint64_t(b));
  else return a + b;
}
template <class T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(std::uint64_t(a) - std::uint64_t(b));
  else return a - b;
}
template <class T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return T(std::uint64_t(a) * std::uint64_t(b));
  else return a * b;
}

// NaN propagates; at ties the second operand wins (so relu(-0.0) = maximum(0, -0.0) = -0.0), as numpy does.
template <class T>
T maximum(T a, T b) {
  return (a > b || a != a) ? a : b;
}

// numpy's (and PyTorch's) floor division of floats: exact through fmod, not floor(a / b).
template <class T>
T float_floor_div(T a, T b) {
  if (b == T(0)) return a / b;
  T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
  if (div == T(0)) return std::copysign(T(0), a / b);
  T fl = std::floor(div);
  if (div - fl > T(0.5)) fl += T(1);
  return fl;
}

template <class T>
T int_div(T a, T b, bool floor) {
  if (b == T(-1)) return T(std::uint64_t(0) - std::uint64_t(a));  // INT_MIN / -1 wraps instead of trapping
  T q = a / b;
  if (floor && (a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}

template <class T>
void binary_typed(int op, const Array& out, const Array& a, const Array& b, T alpha) {
  char* base[3] = {out.data(), a.data(), b.data()};
  const std::vector<std::int64_t> st[3] = {out.broadcast_bytes(out.shape), a.broadcast_bytes(out.shape),
                                           b.broadcast_bytes(out.shape)};
  auto run = [&](auto f) {
    for_each_row<3>(out.shape, base, st, [&f](char** p, std::int64_t n, const std::int64_t* s) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      const T* y = reinterpret_cast<const T*>(p[2]);
      constexpr std::int64_t z = sizeof(T);
      if (s[0] == z && s[1] == z && s[2] == z) {
        for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
      } else if (s[0] == z && s[1] == z && s[2] == 0) {
        const T c = *y;
        for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], c);
      } else if (s[0] == z && s[1] == 0 && s[2] == z) {
        const T c = *x;
        for (std::int64_t i = 0; i < n; ++i) o[i] = f(c, y[i]);
      } else {
        for (std::int64_t i = 0; i < n; ++i)
          *reinterpret_cast<T*>(p[0] + i * s[0]) =
              f(*reinterpret_cast<const T*>(p[1] + i * s[1]), *reinterpret_cast<const T*>(p[2] + i * s[2]));
      }
    });
  };
  const bool unit = alpha == T(1);
  switch (op) {
    case kAdd:
      if (unit) run([](T u, T v) { return wrap_add(u, v); });
      else run([alpha](T u, T v) { return wrap_add(u, wrap_mul(alpha, v)); });
      return;
    case kSub:
      if (unit) run([](T u, T v) { return wrap_sub(u, v); });
      else run([alpha](T u, T v) { return wrap_sub(u, wrap_mul(alpha, v)); });
      return;
    case kMul: run([](T u, T v) { return wrap_mul(u, v); }); return;
    case kMaximum: run([](T u, T v) { return maximum(u, v); }); return;
    case kDiv:
      if constexpr (std::is_floating_point_v<T>) run([](T u, T v) { return u / v; });
      else throw std::invalid_argument("openreg: true division needs a floating result");
      return;
    case kDivTrunc:
      if constexpr (std::is_floating_point_v<T>) run([](T u, T v) { return std::trunc(u / v); });
      else run([](T u, T v) { return int_div(u, v, false); });
      return;
    case kDivFloor:
      if constexpr (std::is_floating_point_v<T>) run([](T u, T v) { return float_floor_div(u, v); });
      else run([](T u, T v) { return int_div(u, v, true); });
      return;
    default: throw std::invalid_argument("openreg: unknown binary op");
  }
}

template <class T>
bool has_zero(const Array& a) {
  bool found = false;
  char* base[1] = {a.data()};
  const std::vector<std::int64_t> st[1] = {a.broadcast_bytes(a.shape)};
  for_each_row<1>(a.shape, base, st, [&found](char** p, std::int64_t n, const std::int64_t* s) {
    for (std::int64_t i = 0; i < n && !found; ++i) found = *reinterpret_cast<const T*>(p[0] + i * s[0]) == T(0);
  });
  return found;
}

void binary(int op, const Array& out, const Array& a0, const Array& b0, double alpha_f, std::int64_t alpha_i) {
  const Array a = as_dtype(a0, out.dtype), b = as_dtype(b0, out.dtype);
  py::gil_scoped_release nogil;
  dispatch_compute(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      if ((op == kDivTrunc || op == kDivFloor) && has_zero<T>(b)) throw std::runtime_error("ZeroDivisionError");
      binary_typed<T>(op, out, a, b, T(alpha_i));
    } else {
      binary_typed<T>(op, out, a, b, T(alpha_f));
    }
  });
}

template <class T, class F>
void map_unary(const Array& out, const Array& a, F f) {
  char* base[2] = {out.data(), a.data()};
  const std::vector<std::int64_t> st[2] = {out.broadcast_bytes(out.shape), a.broadcast_bytes(out.shape)};
  for_each_row<2>(out.shape, base, st, [&f](char** p, std::int64_t n, const std::int64_t* s) {
    constexpr std::int64_t z = sizeof(T);
    if (s[0] == z && s[1] == z) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) = f(*reinterpret_cast<const T*>(p[1] + i * s[1]));
    }
  });
}

void unary(int op, const Array& out, const Array& a0) {
  const Array a = as_dtype(a0, out.dtype);
  py::gil_scoped_release nogil;
  dispatch_compute(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case kNeg: map_unary<T>(out, a, [](T v) { return wrap_sub(T(0), v); }); return;
      case kExp:
      case kLog:
        if constexpr (std::is_floating_point_v<T>) {
          if (op == kExp) map_unary<T>(out, a, [](T v) { return std::exp(v); });
          else map_unary<T>(out, a, [](T v) { return std::log(v); });
          return;
        }
        throw std::invalid_argument("openreg: exp and log need a floating result");
      default: throw std::invalid_argument("openreg: unknown unary op");
    }
  });
}

// Calls f(T{}) for the dtypes comparisons and where handle: bool and the computed ones.
template <class F>
void dispatch_logical(int dtype, F&& f) {
  if (dtype == kBool) f(bool{});
  else dispatch_compute(dtype, f);
}

void compare(int op, const Array& out, const Array& a0, const Array& b0, int dtype) {
  const Array a = as_dtype(a0, dtype), b = as_dtype(b0, dtype);
  char* base[3] = {out.data(), a.data(), b.data()};
  const std::vector<std::int64_t> st[3] = {out.broadcast_bytes(out.shape), a.broadcast_bytes(out.shape),
                                           b.broadcast_bytes(out.shape)};
  py::gil_scoped_release nogil;
  dispatch_logical(dtype, [&](auto tag) {
    using T = decltype(tag);
    auto run = [&](auto f) {
      for_each_row<3>(out.shape, base, st, [&f](char** p, std::int64_t n, const std::int64_t* s) {
        for (std::int64_t i = 0; i < n; ++i)
          *reinterpret_cast<bool*>(p[0] + i * s[0]) =
              f(*reinterpret_cast<const T*>(p[1] + i * s[1]), *reinterpret_cast<const T*>(p[2] + i * s[2]));
      });
    };
    switch (op) {
      case kEq: run([](T u, T v) { return u == v; }); return;
      case kNe: run([](T u, T v) { return u != v; }); return;
      case kLt: run([](T u, T v) { return u < v; }); return;
      case kLe: run([](T u, T v) { return u <= v; }); return;
      case kGt: run([](T u, T v) { return u > v; }); return;
      case kGe: run([](T u, T v) { return u >= v; }); return;
      default: throw std::invalid_argument("openreg: unknown comparison");
    }
  });
}

template <std::size_t N>
void select_rows(char** p, std::int64_t n, const std::int64_t* s) {
  for (std::int64_t i = 0; i < n; ++i)
    std::memcpy(p[0] + i * s[0], *reinterpret_cast<const bool*>(p[1] + i * s[1]) ? p[2] + i * s[2] : p[3] + i * s[3],
                N);
}

void where(const Array& out, const Array& cond, const Array& a0, const Array& b0) {
  const Array a = as_dtype(a0, out.dtype), b = as_dtype(b0, out.dtype);
  char* base[4] = {out.data(), cond.data(), a.data(), b.data()};
  const std::vector<std::int64_t> st[4] = {out.broadcast_bytes(out.shape), cond.broadcast_bytes(out.shape),
                                           a.broadcast_bytes(out.shape), b.broadcast_bytes(out.shape)};
  py::gil_scoped_release nogil;
  switch (out.itemsize) {
    case 1: for_each_row<4>(out.shape, base, st, select_rows<1>); break;
    case 2: for_each_row<4>(out.shape, base, st, select_rows<2>); break;
    case 4: for_each_row<4>(out.shape, base, st, select_rows<4>); break;
    case 8: for_each_row<4>(out.shape, base, st, select_rows<8>); break;
    default: throw std::invalid_argument("openreg: where on an unsupported element size");
  }
}

// grad where self > threshold, else 0; NaN in self keeps the gradient (NaN <= t is false).
void threshold_backward(const Array& out, const Array& grad0, const Array& self0, double threshold) {
  const Array grad = as_dtype(grad0, out.dtype), self = as_dtype(self0, out.dtype);
  char* base[3] = {out.data(), grad.data(), self.data()};
  const std::vector<std::int64_t> st[3] = {out.broadcast_bytes(out.shape), grad.broadcast_bytes(out.shape),
                                           self.broadcast_bytes(out.shape)};
  py::gil_scoped_release nogil;
  dispatch_compute(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T t = T(threshold);
    for_each_row<3>(out.shape, base, st, [t](char** p, std::int64_t n, const std::int64_t* s) {
      for (std::int64_t i = 0; i < n; ++i) {
        const T x = *reinterpret_cast<const T*>(p[2] + i * s[2]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = x <= t ? T(0) : *reinterpret_cast<const T*>(p[1] + i * s[1]);
      }
    });
  });
}

}  // namespace

void bind_elementwise(py::module_& m) {
  m.def("binary", &binary, "out = op(a, b) broadcast; alpha scales b for add/sub (alpha_i for integer results).",
        py::arg("op"), py::arg("out"), py::arg("a"), py::arg("b"), py::arg("alpha_f") = 1.0, py::arg("alpha_i") = 1);
  m.def("unary", &unary, "out = op(a), computed in out's dtype.");
  m.def("compare", &compare, "out (bool) = a <op> b, both cast to dtype first.");
  m.def("where", &where, "out = cond ? a : b, broadcast.");
  m.def("threshold_backward", &threshold_backward, "out = self <= threshold ? 0 : grad.");
}

}  // namespace openreg
