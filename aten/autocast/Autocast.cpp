// The AutocastCPU kernels and the thread's autocast state. The kernels cast on the way in
// and redispatch below the autocast keys, with those keys excluded for the whole call, so a
// composite (linear) is cast once at the top and its parts (addmm, matmul) run on the cast
// tensors unchanged, as torch's autocast does. The casts themselves are ordinary `to` calls
// that autograd records, so gradients reach float32 weights in float32.
#include <aten/autocast/Autocast.h>

#include <aten/core/Tensor.h>
#include <aten/library.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <unordered_map>

namespace at::inline tessera::autocast {

namespace {

thread_local c10::ScalarType t_cpu_dtype = c10::kBFloat16;
thread_local c10::ScalarType t_gpu_dtype = c10::kHalf;
thread_local bool t_cache_enabled = true;
thread_local int t_nesting = 0;

// A weight's cast, kept while the outermost region lasts. The entry holds the source too,
// so its address cannot be reused by another tensor while the entry stands.
struct CachedCast {
  at::Tensor source;
  at::Tensor cast;
};
thread_local std::unordered_map<const c10::TensorImpl*, CachedCast> t_cache;

void set_key(c10::DispatchKey key, bool on) {
  auto& tls = c10::thread_local_state();
  tls.included = on ? tls.included.add(key) : tls.included.remove(key);
}

// As torch: floating CPU (or oneDNN) tensors, float64 excepted.
bool eligible(const at::Tensor& t) {
  return t.defined() && (t.is_cpu() || t.is_mkldnn()) && c10::isFloatingType(t.scalar_type()) &&
         t.scalar_type() != c10::kDouble;
}

at::Tensor cached_cast(const at::Tensor& t, c10::ScalarType to) {
  if (!eligible(t) || t.scalar_type() == to) return t;
  const bool cacheable = t_cache_enabled && to == t_cpu_dtype && t.scalar_type() == c10::kFloat &&
                         t.requires_grad() && t.is_leaf() && !t.is_view();
  if (cacheable) {
    auto it = t_cache.find(t.unsafeGetTensorImpl());
    // A region of another dtype nested inside casts again (and keeps the newer cast).
    if (it != t_cache.end() && it->second.cast.scalar_type() == to) return it->second.cast;
  }
  at::Tensor cast = t.to(to);
  if (cacheable) t_cache.insert_or_assign(t.unsafeGetTensorImpl(), CachedCast{t, cast});
  return cast;
}

// Calls f on every tensor argument, list elements included.
template <class F>
void for_each_tensor(c10::Stack::iterator first, c10::Stack::iterator last, F&& f) {
  for (auto it = first; it != last; ++it) {
    if (it->isTensor()) {
      f(it->toTensor());
    } else if (it->isTensorList()) {
      for (const at::Tensor& t : it->toTensorList()) f(t);
    } else if (it->isOptionalTensorList()) {
      for (const auto& t : it->toOptionalTensorList()) {
        if (t.has_value()) f(*t);
      }
    }
  }
}

void cast_arguments(c10::Stack::iterator first, c10::Stack::iterator last, c10::ScalarType to) {
  for (auto it = first; it != last; ++it) {
    if (it->isTensor()) {
      at::Tensor cast = cached_cast(it->toTensor(), to);
      *it = c10::IValue(std::move(cast));
    } else if (it->isTensorList()) {
      std::vector<at::Tensor> cast;
      for (const at::Tensor& t : it->toTensorList()) cast.push_back(cached_cast(t, to));
      *it = c10::IValue(std::move(cast));
    } else if (it->isOptionalTensorList()) {
      std::vector<std::optional<at::Tensor>> cast;
      for (const auto& t : it->toOptionalTensorList()) {
        cast.push_back(t.has_value() ? std::optional<at::Tensor>(cached_cast(*t, to)) : std::nullopt);
      }
      *it = c10::IValue(std::move(cast));
    }
  }
}

enum class Policy { LowerPrecisionFp, Fp32, Promote, AsCalled };

// torch's prioritize: float32 wins over the autocast dtype; any other reduced type among
// the floating arguments (float16 in a bfloat16 region) is an error, as torch's.
c10::ScalarType promoted_type(c10::Stack::iterator first, c10::Stack::iterator last) {
  const c10::ScalarType lower = t_cpu_dtype;
  c10::ScalarType to = lower;
  for_each_tensor(first, last, [&](const at::Tensor& t) {
    if (!eligible(t)) return;
    const c10::ScalarType next = t.scalar_type();
    if (to == c10::kFloat || next == c10::kFloat) {
      to = c10::kFloat;
    } else {
      TORCH_CHECK(next == lower, "Unexpected floating ScalarType in at::autocast::prioritize");
    }
  });
  return to;
}

void run(Policy policy, const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  if (policy != Policy::AsCalled) {
    const auto last = stack->end();
    const auto first = last - static_cast<std::ptrdiff_t>(op.schema().arguments().size());
    const c10::ScalarType to = policy == Policy::Fp32      ? c10::kFloat
                               : policy == Policy::Promote ? promoted_type(first, last)
                                                           : t_cpu_dtype;
    cast_arguments(first, last, to);
  }
  op.redispatchBoxed(ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::AutocastCPU), stack);
}

TORCH_LIBRARY_IMPL(_, AutocastCPU, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(_, AutocastCUDA, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

}  // namespace

bool is_cpu_enabled() { return c10::thread_local_state().included.has(c10::DispatchKey::AutocastCPU); }
void set_cpu_enabled(bool enabled) { set_key(c10::DispatchKey::AutocastCPU, enabled); }
c10::ScalarType get_cpu_dtype() { return t_cpu_dtype; }

void set_cpu_dtype(c10::ScalarType dtype) {
  TORCH_CHECK(dtype == c10::kBFloat16 || dtype == c10::kHalf,
              "Currently, AutocastCPU only support Bfloat16 or Float16 as the autocast_cpu_dtype");
  t_cpu_dtype = dtype;
}

bool is_gpu_enabled() { return c10::thread_local_state().included.has(c10::DispatchKey::AutocastCUDA); }
void set_gpu_enabled(bool enabled) { set_key(c10::DispatchKey::AutocastCUDA, enabled); }
c10::ScalarType get_gpu_dtype() { return t_gpu_dtype; }
void set_gpu_dtype(c10::ScalarType dtype) { t_gpu_dtype = dtype; }

bool is_cache_enabled() { return t_cache_enabled; }
void set_cache_enabled(bool enabled) { t_cache_enabled = enabled; }
void clear_cache() { t_cache.clear(); }
int increment_nesting() { return ++t_nesting; }
int decrement_nesting() { return --t_nesting; }

void lower_precision_fp_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack) {
  run(Policy::LowerPrecisionFp, op, ks, stack);
}
void fp32_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack) {
  run(Policy::Fp32, op, ks, stack);
}
void promote_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack) {
  run(Policy::Promote, op, ks, stack);
}
void as_called_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack) {
  run(Policy::AsCalled, op, ks, stack);
}

}  // namespace at::inline tessera::autocast
