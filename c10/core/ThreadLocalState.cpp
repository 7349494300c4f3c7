#include <c10/core/ThreadLocalState.h>

namespace c10::inline tessera {

namespace detail {
thread_local ThreadLocalState tls_state;
}  // namespace detail

namespace {
constexpr DispatchKeySet kInferenceExcluded = autograd_dispatch_keyset | DispatchKeySet(DispatchKey::ADInplaceOrView);
}  // namespace

InferenceMode::InferenceMode(bool enabled) : saved_(detail::tls_state) {
  ThreadLocalState& s = detail::tls_state;
  // As in torch, InferenceMode(false) is a way back to normal recording inside an
  // inference-mode region, so it turns grad mode on.
  s.inference_mode = enabled;
  s.grad_enabled = !enabled;
  s.excluded = enabled ? (s.excluded | kInferenceExcluded) : (s.excluded - kInferenceExcluded);
}

InferenceMode::~InferenceMode() {
  ThreadLocalState& s = detail::tls_state;
  s.inference_mode = saved_.inference_mode;
  s.grad_enabled = saved_.grad_enabled;
  s.excluded = saved_.excluded;
}

}  // namespace c10::inline tessera
