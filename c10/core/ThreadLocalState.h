// All of Tessera's per-thread state in one struct, read once per op call: grad mode,
// inference mode and the dispatch keys to force in or out. RAII guards change it for a
// scope and restore it on exit, exceptions included.
#pragma once

#include <c10/core/DispatchKeySet.h>

namespace c10::inline tessera {

struct ThreadLocalState {
  bool grad_enabled = true;
  bool inference_mode = false;
  DispatchKeySet included;  // added to every call's key set
  DispatchKeySet excluded;  // removed from every call's key set
};

namespace detail {
// Exported so inline accessors in other libraries reach the one copy in libtessera_c10.
extern C10_API thread_local ThreadLocalState tls_state;
}  // namespace detail

inline ThreadLocalState& thread_local_state() { return detail::tls_state; }

struct C10_API GradMode {
  static bool is_enabled() { return detail::tls_state.grad_enabled; }
  static void set_enabled(bool enabled) { detail::tls_state.grad_enabled = enabled; }
};

// Sets grad mode for a scope: AutoGradMode(false) is torch.no_grad().
class C10_API AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : previous_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(previous_); }
  C10_DISABLE_COPY_AND_ASSIGN(AutoGradMode);

 private:
  bool previous_;
};

// Inference mode: no grad recording and no version-counter or view tracking. Entering it
// excludes the autograd and ADInplaceOrView keys; leaving it restores the previous state.
class C10_API InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  C10_DISABLE_COPY_AND_ASSIGN(InferenceMode);
  static bool is_enabled() { return detail::tls_state.inference_mode; }

 private:
  ThreadLocalState saved_;
};

namespace impl {

// Adds keys to the thread's include set for a scope (only those not already there are
// removed again on exit).
class C10_API IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKeySet keys)
      : added_(keys - detail::tls_state.included) {
    detail::tls_state.included = detail::tls_state.included | added_;
  }
  explicit IncludeDispatchKeyGuard(DispatchKey key) : IncludeDispatchKeyGuard(DispatchKeySet(key)) {}
  ~IncludeDispatchKeyGuard() { detail::tls_state.included = detail::tls_state.included - added_; }
  C10_DISABLE_COPY_AND_ASSIGN(IncludeDispatchKeyGuard);

 private:
  DispatchKeySet added_;
};

class C10_API ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet keys)
      : added_(keys - detail::tls_state.excluded) {
    detail::tls_state.excluded = detail::tls_state.excluded | added_;
  }
  explicit ExcludeDispatchKeyGuard(DispatchKey key) : ExcludeDispatchKeyGuard(DispatchKeySet(key)) {}
  ~ExcludeDispatchKeyGuard() { detail::tls_state.excluded = detail::tls_state.excluded - added_; }
  C10_DISABLE_COPY_AND_ASSIGN(ExcludeDispatchKeyGuard);

 private:
  DispatchKeySet added_;
};

}  // namespace impl
}  // namespace c10::inline tessera

namespace at::inline tessera {
// Inside an Autograd kernel: ops the kernel's callee calls skip autograd and view/version
// tracking (the kernel records the one Node for the whole op).
class AutoDispatchBelowADInplaceOrView {
 public:
  AutoDispatchBelowADInplaceOrView()
      : guard_(c10::autograd_dispatch_keyset | c10::DispatchKeySet(c10::DispatchKey::ADInplaceOrView)) {}

 private:
  c10::impl::ExcludeDispatchKeyGuard guard_;
};
using c10::AutoGradMode;
using c10::GradMode;
// torch.no_grad() in C++.
struct NoGradGuard : public c10::AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};
}  // namespace at::inline tessera
