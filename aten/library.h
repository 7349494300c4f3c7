// TORCH_LIBRARY and friends: how operators and kernels are registered, by Tessera's own
// generated code and by extension libraries alike (there is one mechanism).
//
//   TORCH_LIBRARY(myops, m) { m.def("scale(Tensor x, float s) -> Tensor"); }
//   TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("scale", TORCH_FN(scale_cpu)); }
//   TORCH_LIBRARY_IMPL(_, AutogradCPU, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
//
// Every registration is undone when its library object dies, so unloading a shared
// library removes its operators and kernels.
#pragma once

#include <aten/core/CustomClass.h>
#include <aten/dispatch/Dispatcher.h>

#include <optional>
#include <string>
#include <vector>

namespace torch::inline tessera {

using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::OperatorHandle;
using c10::Stack;

// A kernel as given to def()/impl()/fallback(), optionally tagged with a dispatch key.
class TORCH_API CppFunction {
 public:
  // A plain function pointer (prefer TORCH_FN(f), which the compiler can call directly).
  template <typename Func>
    requires std::is_function_v<Func>
  explicit CppFunction(Func* f) : kernel_(c10::KernelFunction::makeFromUnboxedRuntimeFunction(f)) {}
  template <typename FuncType, FuncType* func>
  explicit CppFunction(c10::CompileTimeFunctionPointer<FuncType, func> f)
      : kernel_(c10::KernelFunction::makeFromUnboxedFunction(f)) {}
  // A lambda or other functor.
  template <typename Lambda>
    requires(!std::is_function_v<std::remove_pointer_t<std::decay_t<Lambda>>> &&
             !std::is_same_v<std::decay_t<Lambda>, CppFunction>)
  explicit CppFunction(Lambda&& f) : kernel_(c10::KernelFunction::makeFromUnboxedLambda(std::forward<Lambda>(f))) {}

  // A kernel taking its arguments on the stack: `void fn(const OperatorHandle&, DispatchKeySet, Stack*)`.
  static CppFunction makeFromBoxedFunction(c10::KernelFunction::BoxedKernelFn fn) {
    return CppFunction(c10::KernelFunction::makeFromBoxedFunction(fn));
  }
  // A boxed kernel with state (the Python kernels of tessera.library.Library).
  static CppFunction makeFromBoxedCallable(c10::KernelFunction::BoxedCallable fn) {
    return CppFunction(c10::KernelFunction::makeFromBoxedCallable(std::move(fn)));
  }
  static CppFunction makeFallthrough() { return CppFunction(c10::KernelFunction::makeFallthrough()); }

  CppFunction(CppFunction&&) = default;
  CppFunction& operator=(CppFunction&&) = default;

 private:
  explicit CppFunction(c10::KernelFunction k) : kernel_(std::move(k)) {}
  friend class Library;
  template <typename F>
  friend CppFunction dispatch(DispatchKey key, F&& raw);

  c10::KernelFunction kernel_;
  std::optional<DispatchKey> key_;
};

// m.impl("op", torch::dispatch(DispatchKey::CPU, fn)): a kernel for one key.
template <typename F>
CppFunction dispatch(DispatchKey key, F&& raw) {
  CppFunction f = [&] {
    if constexpr (std::is_same_v<std::decay_t<F>, CppFunction>) {
      return std::move(raw);
    } else {
      return CppFunction(std::forward<F>(raw));
    }
  }();
  f.key_ = key;
  return f;
}
template <typename F>
CppFunction dispatch(c10::DeviceType type, F&& raw) {
  return dispatch(c10::backendDispatchKey(type, c10::Layout::Strided), std::forward<F>(raw));
}

class TORCH_API Library {
 public:
  enum Kind { DEF, IMPL, FRAGMENT };

  // ns "_" with IMPL registers fallbacks for `key` across all namespaces.
  Library(Kind kind, std::string ns, std::optional<DispatchKey> key, const char* file, uint32_t line);
  Library(Library&&) = default;
  Library& operator=(Library&&) = default;
  ~Library();

  // Declares an operator: "name.overload(args) -> returns"; the namespace is the
  // library's unless the schema names one.
  Library& def(const char* schema);
  Library& def(const std::string& schema) { return def(schema.c_str()); }
  // Declares it and registers a catch-all kernel (CompositeImplicitAutograd).
  template <typename F>
  Library& def(const char* schema, F&& f) {
    def(schema);
    return implFor(qualifiedName(schemaName(schema)), toCppFunction(std::forward<F>(f)));
  }

  // A kernel for "name" or "name.overload" (unqualified: this library's namespace).
  template <typename F>
  Library& impl(const char* name, F&& f) {
    return implFor(qualifiedName(name), toCppFunction(std::forward<F>(f)));
  }

  // The kernel every operator without one of its own uses for this library's key.
  Library& fallback(CppFunction&& f);

  // Registers custom class T as __torch__.torch.classes.<ns>.<name> (aten/core/CustomClass.h);
  // its methods go when this library does.
  template <class T>
  torch::class_<T> class_(const std::string& name) {
    TORCH_CHECK(kind_ != IMPL, "Cannot define a class inside of a TORCH_LIBRARY_IMPL block (", site(), ")");
    torch::class_<T> cls(ns_, name);
    c10::CustomClassType* type = &cls.type();
    registrations_.emplace_back([type] { c10::remove_custom_class_methods(*type); });
    return cls;
  }

  const std::string& ns() const { return ns_; }

 private:
  template <typename F>
  static CppFunction toCppFunction(F&& f) {
    if constexpr (std::is_same_v<std::decay_t<F>, CppFunction>) {
      return std::move(f);
    } else {
      return CppFunction(std::forward<F>(f));
    }
  }
  Library& implFor(std::string qualified, CppFunction&& f);
  std::string qualifiedName(std::string_view name) const;
  static std::string schemaName(const char* schema);
  std::string site() const;

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> key_;
  const char* file_;
  uint32_t line_;
  std::vector<c10::RegistrationHandleRAII> registrations_;
};

// Shared libraries of operators. dlopen runs a library's TORCH_LIBRARY blocks, but dlclose
// may leave the library mapped (a GNU_UNIQUE symbol makes it a no-op), and with it the
// blocks' registrations. load_library records the blocks a library runs while it loads;
// unload_library undoes them itself, and a later load_library runs them again if the
// library never left memory. Both throw c10::Error (Python: OSError for a failed dlopen).
// load_library refuses, before opening it, a library linked against PyTorch's libtorch or
// libc10, and one with no TORCH_LIBRARY block of its own (library_dependencies.h).
TORCH_API void load_library(const std::string& path);
TORCH_API void unload_library(const std::string& path);

namespace detail {
// Runs a TORCH_LIBRARY block when its (static) object is constructed, and again on demand
// (see load_library).
class TORCH_API TorchLibraryInit {
 public:
  TorchLibraryInit(Library::Kind kind, void (*init)(Library&), const char* ns, std::optional<DispatchKey> key,
                   const char* file, uint32_t line);
  ~TorchLibraryInit();
  TorchLibraryInit(const TorchLibraryInit&) = delete;
  TorchLibraryInit& operator=(const TorchLibraryInit&) = delete;

  void run();    // registers the block's operators and kernels (no-op when registered)
  void reset();  // removes them

 private:
  Library::Kind kind_;
  void (*init_)(Library&);
  const char* ns_;
  std::optional<DispatchKey> key_;
  const char* file_;
  uint32_t line_;
  std::optional<Library> lib_;
};
}  // namespace detail

}  // namespace torch::inline tessera

#define TORCH_LIBRARY(ns, m)                                                                                   \
  static void TORCH_LIBRARY_init_##ns(torch::Library&);                                                       \
  static const torch::detail::TorchLibraryInit TORCH_LIBRARY_static_init_##ns(                                \
      torch::Library::DEF, &TORCH_LIBRARY_init_##ns, #ns, std::nullopt, __FILE__, __LINE__);                  \
  void TORCH_LIBRARY_init_##ns(torch::Library& m)

#define TORCH_LIBRARY_FRAGMENT(ns, m) _TORCH_LIBRARY_FRAGMENT(ns, m, C10_UID)
#define _TORCH_LIBRARY_FRAGMENT(ns, m, uid)                                                                    \
  static void C10_CONCATENATE(TORCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(torch::Library&);                     \
  static const torch::detail::TorchLibraryInit C10_CONCATENATE(TORCH_LIBRARY_FRAGMENT_static_init_##ns##_,   \
                                                               uid)(                                          \
      torch::Library::FRAGMENT, &C10_CONCATENATE(TORCH_LIBRARY_FRAGMENT_init_##ns##_, uid), #ns, std::nullopt, \
      __FILE__, __LINE__);                                                                                    \
  void C10_CONCATENATE(TORCH_LIBRARY_FRAGMENT_init_##ns##_, uid)(torch::Library & m)

#define TORCH_LIBRARY_IMPL(ns, k, m) _TORCH_LIBRARY_IMPL(ns, k, m, C10_UID)
#define _TORCH_LIBRARY_IMPL(ns, k, m, uid)                                                                     \
  static void C10_CONCATENATE(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(torch::Library&);                   \
  static const torch::detail::TorchLibraryInit C10_CONCATENATE(TORCH_LIBRARY_IMPL_static_init_##ns##_##k##_, \
                                                               uid)(                                          \
      torch::Library::IMPL, &C10_CONCATENATE(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid), #ns,                \
      std::make_optional(c10::DispatchKey::k), __FILE__, __LINE__);                                           \
  void C10_CONCATENATE(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(torch::Library & m)
