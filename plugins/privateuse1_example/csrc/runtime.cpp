// Devices and their caching allocators.
//
// Requests are rounded up to a size class (512 bytes below 1 MiB, then whole
// MiB) so that blocks freed by one tensor fit the next tensor of a similar
// size. A freed block goes to its device's cache rather than back to the
// system; empty_cache() hands the cached blocks back.
#include "runtime.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace openreg {

namespace {

// Never destroyed: buffers still alive at interpreter exit release into it.
std::vector<std::unique_ptr<Device>>& devices() {
  static auto* list = new std::vector<std::unique_ptr<Device>>();
  return *list;
}

constexpr std::size_t kSmall = 512;
constexpr std::size_t kLarge = std::size_t(1) << 20;
constexpr std::size_t kAlign = 64;

std::size_t size_class(std::size_t n) {
  if (n == 0) return 0;
  if (n < kLarge) return (n + kSmall - 1) / kSmall * kSmall;
  return (n + kLarge - 1) / kLarge * kLarge;
}

}  // namespace

static int g_count = 0;

void init_devices(int count) {
  if (count < 1) throw std::invalid_argument("openreg needs at least one device, got " + std::to_string(count));
  auto& list = devices();
  // never shrinks: a device that existed keeps its state, live buffers may still release into it
  while (static_cast<int>(list.size()) < count) list.push_back(std::make_unique<Device>());
  g_count = count;
}

int device_count() { return g_count; }

Device& device(int index) {
  if (index < 0 || index >= g_count)
    throw py::index_error("openreg device index " + std::to_string(index) + " is out of range (device_count() is " +
                          std::to_string(g_count) + ")");
  return *devices()[index];
}

namespace {

// Buffers release into their device even after a re-init lowered the count.
Device& owner(int index) { return *devices()[index]; }

}  // namespace

char* allocate(int dev, std::size_t nbytes, std::size_t* block) {
  Device& d = device(dev);
  const std::size_t want = size_class(nbytes);
  *block = want;
  if (want == 0) return nullptr;
  std::lock_guard<std::mutex> lock(d.mu);
  char* ptr = nullptr;
  auto it = d.cache.find(want);
  if (it != d.cache.end()) {
    ptr = it->second;
    d.cache.erase(it);
  } else {
    ptr = static_cast<char*>(std::aligned_alloc(kAlign, want));
    if (ptr == nullptr) throw std::bad_alloc();
    d.stats.reserved += static_cast<std::int64_t>(want);
  }
  d.stats.allocated += static_cast<std::int64_t>(want);
  if (d.stats.allocated > d.stats.max_allocated) d.stats.max_allocated = d.stats.allocated;
  return ptr;
}

void release(int dev, char* ptr, std::size_t block) {
  if (ptr == nullptr) return;
  Device& d = owner(dev);
  std::lock_guard<std::mutex> lock(d.mu);
  d.cache.emplace(block, ptr);
  d.stats.allocated -= static_cast<std::int64_t>(block);
}

void empty_cache(int dev) {
  Device& d = device(dev);
  std::lock_guard<std::mutex> lock(d.mu);
  for (auto& kv : d.cache) {
    std::free(kv.second);
    d.stats.reserved -= static_cast<std::int64_t>(kv.first);
  }
  d.cache.clear();
}

Stats stats(int dev) {
  Device& d = device(dev);
  std::lock_guard<std::mutex> lock(d.mu);
  return d.stats;
}

void reset_peak(int dev) {
  Device& d = device(dev);
  std::lock_guard<std::mutex> lock(d.mu);
  d.stats.max_allocated = d.stats.allocated;
}

void synchronize(int dev) {
  // Kernels run to completion before returning, so nothing is queued; taking the
  // device's lock still orders this call after any allocation in flight.
  Device& d = device(dev);
  std::lock_guard<std::mutex> lock(d.mu);
}

void manual_seed(int dev, std::uint64_t seed) {
  Device& d = device(dev);
  std::lock_guard<std::mutex> lock(d.mu);
  d.seed = seed;
  d.gen.seed(seed);
}

Buffer::Buffer(std::size_t n, int dev) : ptr(nullptr), nbytes(n), block(0), device(dev) {
  ptr = allocate(dev, n, &block);
}

Buffer::~Buffer() { release(device, ptr, block); }

std::int64_t Array::numel() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::vector<std::int64_t> Array::broadcast_bytes(const std::vector<std::int64_t>& to) const {
  std::vector<std::int64_t> out(to.size(), 0);
  const std::size_t lead = to.size() - shape.size();
  for (std::size_t d = 0; d < shape.size(); ++d)
    out[lead + d] = shape[d] == 1 ? 0 : strides[d] * itemsize;
  return out;
}

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> st(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    st[i] = step;
    step *= shape[i] > 1 ? shape[i] : 1;
  }
  return st;
}

int itemsize_of(int dtype) {
  switch (dtype) {
    case kBool: case kUInt8: case kInt8: return 1;
    case kInt16: case kFloat16: case kBFloat16: return 2;
    case kInt32: case kFloat32: return 4;
    case kInt64: case kFloat64: return 8;
    default: throw std::invalid_argument("openreg: dtype code " + std::to_string(dtype) + " has no known size");
  }
}

bool castable(int dtype) { return dtype >= kBool && dtype <= kFloat64 && dtype != kFloat16 && dtype != kBFloat16; }

Array empty(const std::vector<std::int64_t>& shape, int dtype, int itemsize, int dev) {
  std::int64_t n = 1;
  for (auto s : shape) {
    if (s < 0) throw std::invalid_argument("openreg: negative dimension");
    n *= s;
  }
  auto buf = std::make_shared<Buffer>(static_cast<std::size_t>(n) * itemsize, dev);
  Array a;
  a.buf = buf.get();
  a.root = py::cast(buf);
  a.shape = shape;
  a.strides = contiguous_strides(shape);
  a.offset = 0;
  a.dtype = dtype;
  a.itemsize = itemsize;
  return a;
}

Array as_dtype(const Array& a, int dtype) {
  if (a.dtype == dtype) return a;
  Array out = empty(a.shape, dtype, itemsize_of(dtype), a.device());
  copy_cast(out, a);
  return out;
}

namespace {

py::tuple to_tuple(const std::vector<std::int64_t>& v) {
  py::tuple t(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

Array make_array(py::object root, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
                 std::int64_t offset, int dtype, int itemsize) {
  if (shape.size() != strides.size()) throw std::invalid_argument("openreg: shape and strides differ in length");
  Array a;
  a.buf = root.cast<Buffer*>();
  a.root = std::move(root);
  a.shape = std::move(shape);
  a.strides = std::move(strides);
  a.offset = offset;
  a.dtype = dtype;
  a.itemsize = itemsize;
  // a view must stay inside its buffer: a bad as_strided would otherwise read foreign memory
  std::int64_t lo = offset, hi = offset;
  bool nonempty = true;
  for (std::size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] == 0) nonempty = false;
    const std::int64_t span = (a.shape[d] - 1) * a.strides[d];
    if (span < 0) lo += span; else hi += span;
  }
  if (nonempty && (lo < 0 || static_cast<std::size_t>(hi + 1) * itemsize > a.buf->nbytes))
    throw std::out_of_range("openreg: view out of the bounds of its storage");
  return a;
}

}  // namespace

void bind_runtime(py::module_& m) {
  py::class_<Buffer, std::shared_ptr<Buffer>>(m, "Buffer", "A block of device memory (the storage root of a tensor).")
      .def_property_readonly("nbytes", [](const Buffer& b) { return b.nbytes; })
      .def_property_readonly("device", [](const Buffer& b) { return b.device; });

  py::class_<Array>(m, "Array", "A strided view (in elements) on a device buffer.")
      .def(py::init(&make_array), py::arg("root"), py::arg("shape"), py::arg("strides"), py::arg("offset"),
           py::arg("dtype"), py::arg("itemsize"))
      .def_property_readonly("shape", [](const Array& a) { return to_tuple(a.shape); })
      .def_property_readonly("strides", [](const Array& a) { return to_tuple(a.strides); })
      .def_readonly("offset", &Array::offset)
      .def_readonly("dtype", &Array::dtype)
      .def_readonly("itemsize", &Array::itemsize)
      .def_readonly("root", &Array::root)
      .def_property_readonly("device", &Array::device)
      .def("is_contiguous", [](const Array& a) {
        std::int64_t expect = 1;
        for (std::size_t i = a.shape.size(); i-- > 0;) {
          if (a.shape[i] == 0) return true;
          if (a.shape[i] != 1 && a.strides[i] != expect) return false;
          expect *= a.shape[i];
        }
        return true;
      });

  m.def("empty", &empty, "Uninitialised contiguous device memory.", py::arg("shape"), py::arg("dtype"),
        py::arg("itemsize"), py::arg("device"));
  m.def("init", &init_devices, "Create the devices (called once, when the plugin is imported).");
  m.def("device_count", &device_count);
  m.def("synchronize", [](int dev) {
    py::gil_scoped_release nogil;
    synchronize(dev);
  });
  m.def("memory_allocated", [](int dev) { return stats(dev).allocated; });
  m.def("max_memory_allocated", [](int dev) { return stats(dev).max_allocated; });
  m.def("memory_reserved", [](int dev) { return stats(dev).reserved; });
  m.def("reset_peak_memory_stats", &reset_peak);
  m.def("empty_cache", &empty_cache);
  m.def("manual_seed", &manual_seed);
  m.def("initial_seed", [](int dev) { return device(dev).seed; });
}

}  // namespace openreg
