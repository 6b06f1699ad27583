// The openreg runtime: simulated devices whose memory is owned here, in C++.
//
// Every buffer comes from its device's caching allocator and knows its device.
// An Array is a strided window (strides and offset in elements) on one buffer;
// views share the buffer through the Python object that owns it, so Python sees
// one stable `root` per allocation. Python never gets a pointer into device
// memory: values leave only through the explicit copies in copies.cpp.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

namespace py = pybind11;

namespace openreg {

// Dtype codes shared with the Python side (tensorplug_openreg/backend.py). Codes
// above kFloat64 are dtypes the runtime only moves as bytes (plugin dtypes).
enum DType : int {
  kBool = 0, kUInt8 = 1, kInt8 = 2, kInt16 = 3, kInt32 = 4, kInt64 = 5,
  kFloat16 = 6, kBFloat16 = 7, kFloat32 = 8, kFloat64 = 9,
};

// A block of device memory. Freed blocks go back to their device's cache.
struct Buffer {
  char* ptr;
  std::size_t nbytes;     // what was asked for
  std::size_t block;      // the size class actually held
  int device;
  Buffer(std::size_t nbytes, int device);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

struct Stats {
  std::int64_t allocated = 0;      // bytes in live blocks
  std::int64_t max_allocated = 0;  // peak of `allocated` since the last reset
  std::int64_t reserved = 0;       // live blocks plus cached free blocks
};

// One simulated device: its allocator cache, statistics and random generator.
struct Device {
  std::mutex mu;
  std::multimap<std::size_t, char*> cache;  // size class -> free block
  Stats stats;
  std::mt19937_64 gen;
  std::uint64_t seed = 0;
};

void init_devices(int count);
int device_count();
Device& device(int index);  // raises IndexError for an index out of range

char* allocate(int dev, std::size_t nbytes, std::size_t* block);
void release(int dev, char* ptr, std::size_t block);
void empty_cache(int dev);
Stats stats(int dev);
void reset_peak(int dev);
void synchronize(int dev);
void manual_seed(int dev, std::uint64_t seed);

struct Array {
  py::object root;  // the Python object owning the shared_ptr<Buffer>
  Buffer* buf;
  std::vector<std::int64_t> shape, strides;  // strides in elements
  std::int64_t offset;                       // in elements
  int dtype;
  int itemsize;

  char* data() const { return buf->ptr + offset * itemsize; }
  int device() const { return buf->device; }
  std::int64_t numel() const;
  int ndim() const { return static_cast<int>(shape.size()); }
  // Byte strides of this array broadcast to `to` (0 where it repeats).
  std::vector<std::int64_t> broadcast_bytes(const std::vector<std::int64_t>& to) const;
};

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape);
Array empty(const std::vector<std::int64_t>& shape, int dtype, int itemsize, int dev);
// A contiguous copy of `a` in `dtype` (or `a` itself when it is already of that dtype).
Array as_dtype(const Array& a, int dtype);
int itemsize_of(int dtype);
bool castable(int dtype);  // has a native cast loop

// ---------------------------------------------------------------------------------------------
// Strided iteration. The dims are coalesced where every operand is dense across
// them, then `row(ptrs, n, inner_strides)` is called once per innermost row with
// byte pointers and byte strides: kernels write one tight loop per row.
constexpr int kMaxDims = 25;

template <int K, class Row>
void for_each_row(const std::vector<std::int64_t>& shape, char* const (&base)[K],
                  const std::vector<std::int64_t> (&bstrides)[K], Row&& row) {
  std::int64_t sz[kMaxDims];
  std::int64_t st[K][kMaxDims];
  int nd = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return;
    if (shape[d] == 1) continue;
    // fold dim d into the previous kept dim when every operand steps through both as one
    bool fold = nd > 0;
    for (int k = 0; k < K && fold; ++k) fold = st[k][nd - 1] == bstrides[k][d] * shape[d];
    if (fold) {
      sz[nd - 1] *= shape[d];
      for (int k = 0; k < K; ++k) st[k][nd - 1] = bstrides[k][d];
      continue;
    }
    sz[nd] = shape[d];
    for (int k = 0; k < K; ++k) st[k][nd] = bstrides[k][d];
    ++nd;
  }
  char* p[K];
  std::int64_t inner[K];
  for (int k = 0; k < K; ++k) p[k] = base[k];
  if (nd == 0) {
    for (int k = 0; k < K; ++k) inner[k] = 0;
    row(p, std::int64_t(1), inner);
    return;
  }
  for (int k = 0; k < K; ++k) inner[k] = st[k][nd - 1];
  const std::int64_t n = sz[nd - 1];
  std::int64_t idx[kMaxDims] = {0};
  const int outer = nd - 1;
  while (true) {
    row(p, n, inner);
    int d = outer - 1;
    for (; d >= 0; --d) {
      for (int k = 0; k < K; ++k) p[k] += st[k][d];
      if (++idx[d] < sz[d]) break;
      for (int k = 0; k < K; ++k) p[k] -= st[k][d] * sz[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Calls f(T{}) with T the C++ type of `dtype`, for the dtypes computed natively.
template <class F>
void dispatch_compute(int dtype, F&& f) {
  switch (dtype) {
    case kInt64: f(std::int64_t{}); return;
    case kFloat32: f(float{}); return;
    case kFloat64: f(double{}); return;
    default: throw std::invalid_argument("openreg: no native kernel for dtype code " + std::to_string(dtype));
  }
}

// Every dtype with a C++ type (what casts and fills handle).
template <class F>
void dispatch_typed(int dtype, F&& f) {
  switch (dtype) {
    case kBool: f(bool{}); return;
    case kUInt8: f(std::uint8_t{}); return;
    case kInt8: f(std::int8_t{}); return;
    case kInt16: f(std::int16_t{}); return;
    case kInt32: f(std::int32_t{}); return;
    case kInt64: f(std::int64_t{}); return;
    case kFloat32: f(float{}); return;
    case kFloat64: f(double{}); return;
    default: throw std::invalid_argument("openreg: no native cast for dtype code " + std::to_string(dtype));
  }
}

// dst[...] = src over `shape`, both given by byte pointers and byte strides.
void strided_bytes(const std::vector<std::int64_t>& shape, char* dst, const std::vector<std::int64_t>& dst_st,
                   const char* src, const std::vector<std::int64_t>& src_st, std::size_t isz);
// Bytewise strided copy of src (broadcast to dst's shape) into dst, same itemsize.
void copy_bytes(const Array& dst, const Array& src);
// Converting copy between two dtypes with native casts (castable()).
void copy_cast(const Array& dst, const Array& src);

void bind_runtime(py::module_& m);
void bind_copies(py::module_& m);
void bind_elementwise(py::module_& m);
void bind_reductions(py::module_& m);
void bind_matmul(py::module_& m);
void bind_indexing(py::module_& m);
void bind_random(py::module_& m);

}  // namespace openreg
