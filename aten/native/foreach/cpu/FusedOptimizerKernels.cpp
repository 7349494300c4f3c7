// The fused optimizer updates of one parameter in one pass, compiled once per ISA. Each
// element takes the same arithmetic, in the same order, as torch's per-tensor updates
// (foreach=False). Adam:
// m = m * b1 + g * (1 - b1); v = v * b2 + (1 - b2) * g * g;
// p += -step_size * m / (sqrt(v) / sqrt(1 - b2^t) + eps), so trajectories agree to the
// rounding of the last operation instead of drifting.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/cpu/vec/vec.h>
#include <aten/native/foreach/FusedOptimizers.h>

#include <cmath>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

// One element (or one vector of them) of the update; V is T or Vectorized<T>.
template <typename T, typename V, typename Sqrt, typename Max>
C10_ALWAYS_INLINE void adam_element(V& p, V& g, V& m, V& v, V* vmax, const AdamStep& s, Sqrt sqrt_fn, Max max_fn) {
  const V one_minus_b1(static_cast<T>(1 - s.beta1)), one_minus_b2(static_cast<T>(1 - s.beta2));
  if (s.inv_grad_scale != 1.0) g = g * V(static_cast<T>(s.inv_grad_scale));
  V grad = s.maximize ? V(static_cast<T>(0)) - g : g;
  if (s.weight_decay != 0) {
    if (s.decoupled) {
      p = p * V(static_cast<T>(1 - s.lr * s.weight_decay));
    } else {
      grad = grad + p * V(static_cast<T>(s.weight_decay));
    }
  }
  m = m * V(static_cast<T>(s.beta1)) + grad * one_minus_b1;
  v = v * V(static_cast<T>(s.beta2)) + one_minus_b2 * (grad * grad);
  V second = v;
  if (vmax) {
    *vmax = max_fn(*vmax, v);
    second = *vmax;
  }
  const V denom = sqrt_fn(second) / V(static_cast<T>(s.bias2_sqrt)) + V(static_cast<T>(s.eps));
  p = p + V(static_cast<T>(-s.step_size)) * (m / denom);
}

template <typename T>
void adam_range(T* p, T* g, T* m, T* v, T* vmax, int64_t begin, int64_t end, const AdamStep& s) {
  using Vec = Vectorized<T>;
  const bool write_grad = s.inv_grad_scale != 1.0;
  int64_t i = begin;
  for (; i + Vec::size() <= end; i += Vec::size()) {
    Vec vp = Vec::loadu(p + i), vg = Vec::loadu(g + i), vm = Vec::loadu(m + i), vv = Vec::loadu(v + i);
    Vec vx = vmax ? Vec::loadu(vmax + i) : Vec(T(0));
    adam_element<T>(vp, vg, vm, vv, vmax ? &vx : nullptr, s, [](Vec x) { return x.sqrt(); },
                    [](Vec a, Vec b) { return vec::maximum(a, b); });
    vp.store(p + i);
    vm.store(m + i);
    vv.store(v + i);
    if (vmax) vx.store(vmax + i);
    if (write_grad) vg.store(g + i);
  }
  for (; i < end; ++i) {
    T x = vmax ? vmax[i] : T(0);
    adam_element<T>(p[i], g[i], m[i], v[i], vmax ? &x : nullptr, s, [](T a) { return std::sqrt(a); },
                    [](T a, T b) { return (a > b || std::isnan(a)) ? a : b; });
    if (vmax) vmax[i] = x;
  }
}

void fused_adam_kernel(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                       const Tensor& max_exp_avg_sq, const AdamStep& s) {
  dispatch_types<kFloating>(param.scalar_type(), "_fused_adam_", [&]<typename T>() {
    T* p = param.data_ptr<T>();
    T* g = grad.data_ptr<T>();
    T* m = exp_avg.data_ptr<T>();
    T* v = exp_avg_sq.data_ptr<T>();
    T* vmax = s.amsgrad ? max_exp_avg_sq.data_ptr<T>() : nullptr;
    at::parallel_for(0, param.numel(), 32768, [&](int64_t begin, int64_t end) {
      adam_range<T>(p, g, m, v, vmax, begin, end, s);
    });
  });
}

// SGD: g = grad (+ weight_decay * p); b = g on the first step, else b * momentum +
// (1 - dampening) * g; g = nesterov ? g + momentum * b : b; p += -lr * g.
template <typename T, typename V>
C10_ALWAYS_INLINE void sgd_element(V& p, V& g, V* buf, const SgdStep& s) {
  if (s.inv_grad_scale != 1.0) g = g * V(static_cast<T>(s.inv_grad_scale));
  V d = s.maximize ? V(static_cast<T>(0)) - g : g;
  if (s.weight_decay != 0) d = d + V(static_cast<T>(s.weight_decay)) * p;
  if (buf) {
    if (s.first_step) {
      *buf = d;
    } else {
      *buf = *buf * V(static_cast<T>(s.momentum)) + V(static_cast<T>(1 - s.dampening)) * d;
    }
    d = s.nesterov ? d + V(static_cast<T>(s.momentum)) * *buf : *buf;
  }
  p = p + V(static_cast<T>(-s.lr)) * d;
}

template <typename T>
void sgd_range(T* p, T* g, T* b, int64_t begin, int64_t end, const SgdStep& s) {
  using Vec = Vectorized<T>;
  const bool write_grad = s.inv_grad_scale != 1.0;
  int64_t i = begin;
  for (; i + Vec::size() <= end; i += Vec::size()) {
    Vec vp = Vec::loadu(p + i), vg = Vec::loadu(g + i);
    Vec vb = b ? Vec::loadu(b + i) : Vec(T(0));
    sgd_element<T>(vp, vg, b ? &vb : nullptr, s);
    vp.store(p + i);
    if (b) vb.store(b + i);
    if (write_grad) vg.store(g + i);
  }
  for (; i < end; ++i) sgd_element<T>(p[i], g[i], b ? b + i : nullptr, s);
}

void fused_sgd_kernel(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& s) {
  dispatch_types<kFloating>(param.scalar_type(), "_fused_sgd_", [&]<typename T>() {
    T* p = param.data_ptr<T>();
    T* g = grad.data_ptr<T>();
    T* b = momentum_buffer.defined() ? momentum_buffer.data_ptr<T>() : nullptr;
    at::parallel_for(0, param.numel(), 32768, [&](int64_t begin, int64_t end) {
      sgd_range<T>(p, g, b, begin, end, s);
    });
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(fused_adam_stub, &fused_adam_kernel);
REGISTER_DISPATCH(fused_sgd_stub, &fused_sgd_kernel);

}  // namespace at::inline tessera::native
