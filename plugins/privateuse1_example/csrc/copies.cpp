// Copies: device<->device (bytewise or converting), host<->device and fill.
//
// Host memory is reached only here, and only as a contiguous numpy buffer
// that Python hands in: upload reads one into a (possibly strided) device
// view, download writes a device view into one.
#include "runtime.h"

#include <pybind11/numpy.h>

#include <stdexcept>
#include <type_traits>

namespace openreg {

namespace {

template <std::size_t N>
void copy_rows(char** p, std::int64_t n, const std::int64_t* s) {
  if (s[0] == std::int64_t(N) && s[1] == std::int64_t(N)) {
    std::memcpy(p[0], p[1], static_cast<std::size_t>(n) * N);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], N);
}

template <std::size_t N>
void fill_rows(char** p, std::int64_t n, const std::int64_t* s, const char* value) {
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], value, N);
}

}  // namespace

void strided_bytes(const std::vector<std::int64_t>& shape, char* dst, const std::vector<std::int64_t>& dst_st,
                   const char* src, const std::vector<std::int64_t>& src_st, std::size_t isz) {
  char* base[2] = {dst, const_cast<char*>(src)};
  const std::vector<std::int64_t> st[2] = {dst_st, src_st};
  switch (isz) {
    case 1: for_each_row<2>(shape, base, st, copy_rows<1>); break;
    case 2: for_each_row<2>(shape, base, st, copy_rows<2>); break;
    case 4: for_each_row<2>(shape, base, st, copy_rows<4>); break;
    case 8: for_each_row<2>(shape, base, st, copy_rows<8>); break;
    default:
      for_each_row<2>(shape, base, st, [isz](char** p, std::int64_t n, const std::int64_t* s) {
        for (std::int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], isz);
      });
  }
}

namespace {

std::vector<std::int64_t> dense_bytes(const std::vector<std::int64_t>& shape, int itemsize) {
  auto st = contiguous_strides(shape);
  for (auto& v : st) v *= itemsize;
  return st;
}

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

void check_host(const py::array& host, std::int64_t nbytes) {
  if (!(host.flags() & py::array::c_style)) throw std::invalid_argument("openreg: host buffer must be contiguous");
  if (host.nbytes() != nbytes)
    throw std::invalid_argument("openreg: host buffer has " + std::to_string(host.nbytes()) + " bytes, expected " +
                                std::to_string(nbytes));
}

}  // namespace

void copy_bytes(const Array& dst, const Array& src) {
  if (dst.itemsize != src.itemsize) throw std::invalid_argument("openreg: bytewise copy between different sizes");
  strided_bytes(dst.shape, dst.data(), dst.broadcast_bytes(dst.shape), src.data(), src.broadcast_bytes(dst.shape),
                dst.itemsize);
}

void copy_cast(const Array& dst, const Array& src) {
  if (dst.dtype == src.dtype) return copy_bytes(dst, src);
  char* base[2] = {dst.data(), src.data()};
  const std::vector<std::int64_t> st[2] = {dst.broadcast_bytes(dst.shape), src.broadcast_bytes(dst.shape)};
  dispatch_typed(dst.dtype, [&](auto to) {
    using To = decltype(to);
    dispatch_typed(src.dtype, [&](auto from) {
      using From = decltype(from);
      for_each_row<2>(dst.shape, base, st, [](char** p, std::int64_t n, const std::int64_t* s) {
        for (std::int64_t i = 0; i < n; ++i) {
          From v;
          std::memcpy(&v, p[1] + i * s[1], sizeof(From));
          const To r = convert<To>(v);
          std::memcpy(p[0] + i * s[0], &r, sizeof(To));
        }
      });
    });
  });
}

void bind_copies(py::module_& m) {
  m.def("copy_", [](const Array& dst, const Array& src) {
    if (!castable(dst.dtype) || !castable(src.dtype)) {
      if (dst.dtype != src.dtype) throw std::invalid_argument("openreg: no native cast between these dtypes");
    }
    py::gil_scoped_release nogil;
    copy_cast(dst, src);
  }, "dst[...] = src (broadcast): bytewise for one dtype, converting between dtypes with native casts.");
  m.def("can_cast", [](int a, int b) { return a == b || (castable(a) && castable(b)); });

  m.def("upload", [](const Array& dst, const py::array& host) {
    check_host(host, dst.numel() * dst.itemsize);
    const char* src = static_cast<const char*>(host.data());
    const auto dst_st = dst.broadcast_bytes(dst.shape);
    const auto src_st = dense_bytes(dst.shape, dst.itemsize);
    py::gil_scoped_release nogil;
    strided_bytes(dst.shape, dst.data(), dst_st, src, src_st, dst.itemsize);
  }, "Copy a contiguous host numpy buffer (as bytes) into the device view dst.");

  m.def("download", [](const Array& src, py::array& host) {
    check_host(host, src.numel() * src.itemsize);
    char* out = static_cast<char*>(host.mutable_data());
    const auto out_st = dense_bytes(src.shape, src.itemsize);
    const auto src_st = src.broadcast_bytes(src.shape);
    py::gil_scoped_release nogil;
    strided_bytes(src.shape, out, out_st, src.data(), src_st, src.itemsize);
  }, "Copy the device view src into a contiguous host numpy buffer of the same byte size.");

  m.def("fill_", [](const Array& dst, py::bytes pattern) {
    const std::string value = pattern;
    if (static_cast<int>(value.size()) != dst.itemsize) throw std::invalid_argument("openreg: fill value size");
    char* base[1] = {dst.data()};
    const std::vector<std::int64_t> st[1] = {dst.broadcast_bytes(dst.shape)};
    const char* v = value.data();
    const std::size_t isz = dst.itemsize;
    py::gil_scoped_release nogil;
    for_each_row<1>(dst.shape, base, st, [v, isz](char** p, std::int64_t n, const std::int64_t* s) {
      switch (isz) {
        case 1: fill_rows<1>(p, n, s, v); break;
        case 2: fill_rows<2>(p, n, s, v); break;
        case 4: fill_rows<4>(p, n, s, v); break;
        case 8: fill_rows<8>(p, n, s, v); break;
        default: for (std::int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], v, isz);
      }
    });
  }, "Store one element (its bytes, in the array's dtype) into every element of dst.");
}

}  // namespace openreg
