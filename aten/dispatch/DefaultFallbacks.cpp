// Fallbacks every process gets: keys that every tensor carries (or every call includes)
// but that most operators have no kernel for fall through to the next key. Autograd
// replaces its fallthroughs with real kernels op by op.
#include <aten/library.h>

TORCH_LIBRARY_IMPL(_, BackendSelect, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(_, ADInplaceOrView, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(_, AutogradCPU, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(_, AutogradCUDA, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(_, AutogradOther, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
