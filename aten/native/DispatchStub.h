// DispatchStub: one CPU kernel compiled once per ISA (DEFAULT, AVX2), the best one the CPU
// runs chosen on first call and cached. TESSERA_CPU_CAPABILITY=default|avx2 forces a
// lower one (tests run every path that way).
//
//   // a normal header (aten/native/nn/Normalization.h):
//   using layer_norm_fn = void (*)(const Tensor&, ...);
//   DECLARE_DISPATCH(layer_norm_fn, layer_norm_stub);
//   // a normal .cpp:
//   DEFINE_DISPATCH(layer_norm_stub);
//   ... layer_norm_stub(kCPU, x, ...);    // or layer_norm_stub(x, ...)
//   // aten/native/nn/cpu/NormalizationKernel.cpp, compiled per ISA:
//   namespace at::native {
//   inline namespace CPU_CAPABILITY { namespace { void layer_norm_kernel(...) { ... } } }
//   REGISTER_DISPATCH(layer_norm_stub, &layer_norm_kernel);
//   }
//
// An ops.yaml `iterator:` operator needs none of the three lines: codegen declares and
// defines <op>_stub and writes its REGISTER_DISPATCH into Register<File>.h, which the
// per-ISA file defining <op>_kernel includes (see cpu_kernels: in ops.yaml).
//
// Note [No static initialisers in per-ISA files]
// A dynamic initialiser in an AVX2 file would run AVX2 code at load time, on any CPU. So
// REGISTER_DISPATCH defines a constant-initialised pointer named after the stub and the
// capability (exp_stub_AVX2_kernel); DEFINE_DISPATCH builds the stub from the addresses
// of those pointers, also a constant initialisation, and nothing runs before the first
// call. Per-ISA files hold no other static data.
#pragma once

#include <aten/core/CPUCapability.h>
#include <c10/core/Device.h>
#include <c10/macros/Export.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstdint>
#include <utility>

namespace at::inline tessera::native {

namespace detail {
// The best capability this CPU and build support, ignoring the environment.
TORCH_API CPUCapability best_cpu_capability();
// The choice rule, separate from the process state so tests can try every input: an
// unknown request or one above `best` warns (through `warn`, when non-null) and gets `best`.
TORCH_API CPUCapability choose_cpu_capability(const char* requested, CPUCapability best, void (*warn)(const char*));
[[noreturn]] TORCH_API void no_kernel_registered(const char* stub);
}  // namespace detail

template <typename FnPtr>
class DispatchStub;

template <typename R, typename... Args>
class DispatchStub<R (*)(Args...)> {
 public:
  using FnPtr = R (*)(Args...);

  // kernels[c] points at the capability's registered pointer, or is null where the build
  // did not compile that capability.
  constexpr DispatchStub(const char* name, const FnPtr* default_kernel, const FnPtr* avx2_kernel)
      : name_(name), kernels_{default_kernel, avx2_kernel} {}
  DispatchStub(const DispatchStub&) = delete;
  DispatchStub& operator=(const DispatchStub&) = delete;

  template <typename... A>
  R operator()(A&&... args) {
    return get()(std::forward<A>(args)...);
  }
  template <typename... A>
  R operator()(c10::DeviceType device, A&&... args) {
    TORCH_CHECK(device == c10::DeviceType::CPU, name_, ": only CPU kernels are registered here, got device ",
                static_cast<int>(device));
    return get()(std::forward<A>(args)...);
  }

  // The kernel for the process's capability (cached).
  FnPtr get() {
    FnPtr fn = cached_.load(std::memory_order_relaxed);
    if (__builtin_expect(fn == nullptr, 0)) {
      fn = kernel_at_most(get_cpu_capability());
      cached_.store(fn, std::memory_order_relaxed);
    }
    return fn;
  }
  // The kernel compiled for exactly `c`, or null (tests compare capabilities with it).
  FnPtr kernel_for(CPUCapability c) const {
    const FnPtr* p = kernels_[static_cast<int>(c)];
    return p ? *p : nullptr;
  }
  const char* name() const { return name_; }

 private:
  FnPtr kernel_at_most(CPUCapability c) const {
    for (int i = static_cast<int>(c); i >= 0; --i) {
      if (FnPtr fn = kernel_for(static_cast<CPUCapability>(i))) return fn;
    }
    detail::no_kernel_registered(name_);
  }

  const char* name_;
  const FnPtr* kernels_[kNumCPUCapabilities];
  std::atomic<FnPtr> cached_{nullptr};
};

}  // namespace at::inline tessera::native

#define TESSERA_DISPATCH_KERNEL_NAME_(name, cap) name##_##cap##_kernel
#define TESSERA_DISPATCH_KERNEL_NAME(name, cap) TESSERA_DISPATCH_KERNEL_NAME_(name, cap)

// In a header, at namespace at::native scope.
#define DECLARE_DISPATCH(fn_type, name)                                  \
  extern TORCH_API ::at::native::DispatchStub<fn_type> name;             \
  extern const fn_type name##_DEFAULT_kernel;                            \
  extern const fn_type name##_AVX2_kernel

// In one normal .cpp, at namespace at::native scope. The build defines
// TESSERA_CPU_AVX2_KERNELS where it compiles the AVX2 flavour of the kernel files.
#if defined(TESSERA_CPU_AVX2_KERNELS)
#define TESSERA_DISPATCH_AVX2_PTR(name) &name##_AVX2_kernel
#else
#define TESSERA_DISPATCH_AVX2_PTR(name) nullptr
#endif
#define DEFINE_DISPATCH(name) \
  constinit ::at::native::DispatchStub<decltype(name)::FnPtr> name(#name, &name##_DEFAULT_kernel, TESSERA_DISPATCH_AVX2_PTR(name))

// In a per-ISA file, at namespace at::native scope (after the CPU_CAPABILITY block).
#define REGISTER_DISPATCH(name, fn) \
  constinit const decltype(name)::FnPtr TESSERA_DISPATCH_KERNEL_NAME(name, CPU_CAPABILITY) = fn
