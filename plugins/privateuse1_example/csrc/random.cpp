// Random fills from the device's own generator (a 64-bit Mersenne Twister per
// device, seeded by manual_seed). Elements are drawn in row-major order of the
// tensor, so a strided view gets the same values as a dense tensor of its shape.
#include "runtime.h"

#include <cmath>
#include <stdexcept>

namespace openreg {

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Uniform in [0, 1) with the full mantissa of T.
template <class T>
T unit(std::mt19937_64& g) {
  if constexpr (sizeof(T) == 4) return T(g() >> 40) * T(1.0 / 16777216.0);
  else return T(g() >> 11) * T(1.0 / 9007199254740992.0);
}

template <class T, class Draw>
void fill_draws(const Array& out, Draw draw) {
  char* base[1] = {out.data()};
  const std::vector<std::int64_t> st[1] = {out.broadcast_bytes(out.shape)};
  for_each_row<1>(out.shape, base, st, [&draw](char** p, std::int64_t n, const std::int64_t* s) {
    for (std::int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = draw();
  });
}

template <class F>
void dispatch_float(int dtype, F&& f) {
  if (dtype == kFloat32) f(float{});
  else if (dtype == kFloat64) f(double{});
  else throw std::invalid_argument("openreg: random fills need float32 or float64");
}

void uniform_(const Array& out, double from, double to) {
  Device& dev = device(out.device());
  py::gil_scoped_release nogil;
  std::lock_guard<std::mutex> lock(dev.mu);
  dispatch_float(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T lo = T(from), width = T(to - from);
    fill_draws<T>(out, [&] { return lo + width * unit<T>(dev.gen); });
  });
}

void normal_(const Array& out, double mean, double std) {
  Device& dev = device(out.device());
  py::gil_scoped_release nogil;
  std::lock_guard<std::mutex> lock(dev.mu);
  dispatch_float(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    // Box-Muller in double: each pair of uniforms gives two normals
    bool have = false;
    double spare = 0.0;
    fill_draws<T>(out, [&] {
      double z;
      if (have) {
        z = spare;
      } else {
        const double u1 = 1.0 - unit<double>(dev.gen);  // (0, 1]: log stays finite
        const double u2 = unit<double>(dev.gen);
        const double r = std::sqrt(-2.0 * std::log(u1));
        z = r * std::cos(kTwoPi * u2);
        spare = r * std::sin(kTwoPi * u2);
      }
      have = !have;
      return T(mean + std * z);
    });
  });
}

}  // namespace

void bind_random(py::module_& m) {
  m.def("uniform_", &uniform_, "Fill out with U[from, to) drawn from its device's generator.");
  m.def("normal_", &normal_, "Fill out with N(mean, std**2) drawn from its device's generator.");
}

}  // namespace openreg
