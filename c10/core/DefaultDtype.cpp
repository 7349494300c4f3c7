#include <c10/core/DefaultDtype.h>
#include <c10/util/Exception.h>

#include <atomic>

namespace c10::inline tessera {

namespace {
std::atomic<ScalarType> default_dtype{ScalarType::Float};
}  // namespace

ScalarType get_default_dtype() { return default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(ScalarType dtype) {
  TORCH_CHECK_TYPE(dtype == kFloat || dtype == kDouble || dtype == kHalf || dtype == kBFloat16,
                   "only floating-point types are supported as the default type");
  default_dtype.store(dtype, std::memory_order_relaxed);
}

ScalarType get_default_complex_dtype() { return get_default_dtype() == kDouble ? kComplexDouble : kComplexFloat; }

}  // namespace c10::inline tessera
