// The extension module tensorplug_openreg._C: one binder per part of the runtime.
#include "runtime.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "openreg: a simulated accelerator whose memory and kernels live in C++";
  openreg::bind_runtime(m);
  openreg::bind_copies(m);
  openreg::bind_elementwise(m);
  openreg::bind_reductions(m);
  openreg::bind_matmul(m);
  openreg::bind_indexing(m);
  openreg::bind_random(m);
}
