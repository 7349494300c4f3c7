// A custom operator, registered with TORCH_LIBRARY exactly as Tessera's own are:
// example::axpy(Tensor x, Tensor y, float a) -> Tensor computes a * x + y.
#include <aten/aten.h>

namespace {
at::Tensor axpy(const at::Tensor& x, const at::Tensor& y, double a) { return at::add(y, x, a); }
}  // namespace

TORCH_LIBRARY(example, m) { m.def("axpy(Tensor x, Tensor y, float a) -> Tensor"); }
TORCH_LIBRARY_IMPL(example, CPU, m) { m.impl("axpy", TORCH_FN(axpy)); }

// Linking this symbol keeps the library (and so its registrations) in the app.
extern "C" int example_ops_linked() { return 1; }
