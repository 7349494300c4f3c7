// The Dispatcher: the registry of operators and the router of every op call. A call
// computes its key set once (tensor arguments | TLS include) - TLS exclude - the op's
// fallthrough keys, and takes the highest key's kernel from the op's dense table. The call
// path reads only atomics; registration (RAII, thread-safe) rebuilds tables under a lock.
#pragma once

#include <aten/dispatch/OperatorEntry.h>
#include <c10/core/ThreadLocalState.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace c10::inline tessera {

template <typename Sig>
class TypedOperatorHandle;

// A cheap, copyable reference to a registered operator (entries are never freed).
class TORCH_API OperatorHandle {
 public:
  const OperatorName& operator_name() const { return entry_->name(); }
  const FunctionSchema& schema() const { return entry_->schema(); }
  bool hasSchema() const { return entry_->hasSchema(); }
  OperatorEntry& entry() const { return *entry_; }
  std::string dumpState() const { return entry_->dumpState(); }

  // Checks once that Sig matches the registered kernels' C++ signature.
  template <typename Sig>
  TypedOperatorHandle<Sig> typed() const {
    checkSignature(CppSignature::make<Sig>());
    return TypedOperatorHandle<Sig>(entry_);
  }

  void callBoxed(Stack* stack) const;
  void callBoxed(Stack& stack) const { callBoxed(&stack); }
  void redispatchBoxed(DispatchKeySet ks, Stack* stack) const;

  bool operator==(const OperatorHandle& o) const { return entry_ == o.entry_; }

 protected:
  explicit OperatorHandle(OperatorEntry* entry) : entry_(entry) {}
  void checkSignature(const CppSignature& sig) const;
  OperatorEntry* entry_;
  friend class Dispatcher;
};

namespace detail {

// ORs the key sets of every tensor among the arguments; other arguments add nothing.
struct KeySetCollector {
  DispatchKeySet ks;
  void add(const at::Tensor& t) {
    if (t.defined()) ks = ks | t.key_set();
  }
  void add(const std::optional<at::Tensor>& t) {
    if (t) add(*t);
  }
  void add(ArrayRef<at::Tensor> ts) {
    for (const auto& t : ts) add(t);
  }
  void add(const std::vector<at::Tensor>& ts) { add(ArrayRef<at::Tensor>(ts)); }
  void add(ArrayRef<std::optional<at::Tensor>> ts) {
    for (const auto& t : ts) add(t);
  }
  template <typename T>
  void add(const T&) {}
};

template <typename... Args>
C10_ALWAYS_INLINE DispatchKeySet argumentKeys(const Args&... args) {
  KeySetCollector c;
  (c.add(args), ...);
  return c.ks;
}

// Keys every call considers even without tensors carrying them: BackendSelect lets
// factory functions pick a backend from their device/dtype/layout arguments.
constexpr DispatchKeySet kAlwaysIncluded = DispatchKeySet(DispatchKey::BackendSelect);

// Dispatch trace (TESSERA_DISPATCH_TRACE=1): read once at load; one branch when off.
TORCH_API extern const bool g_dispatch_trace;
TORCH_API void traceDispatch(const OperatorHandle& op, DispatchKeySet ks, const std::string& arguments);
TORCH_API std::string describeArgument(const at::Tensor& t);
template <typename T>
std::string describeArgument(const T& value) {
  if constexpr (std::is_constructible_v<IValue, const T&>) {
    return c10::str(IValue(value));
  } else {
    return "?";
  }
}
template <typename... Args>
std::string describeArguments(const Args&... args) {
  std::string out;
  ((out += (out.empty() ? "" : ", ") + describeArgument(args)), ...);
  return out;
}

}  // namespace detail

template <typename R, typename... Args>
class TypedOperatorHandle<R(Args...)> : public OperatorHandle {
 public:
  C10_ALWAYS_INLINE R call(Args... args) const {
    const ThreadLocalState& tls = thread_local_state();
    DispatchKeySet ks = ((detail::argumentKeys(args...) | tls.included | detail::kAlwaysIncluded) - tls.excluded) -
                        entry_->fallthroughKeys();
    return callWithKeys(ks, std::forward<Args>(args)...);
  }
  // Continues dispatch below the caller's key: `ks` is the caller's set minus its own keys.
  C10_ALWAYS_INLINE R redispatch(DispatchKeySet ks, Args... args) const {
    return callWithKeys(ks - entry_->fallthroughKeys(), std::forward<Args>(args)...);
  }

 private:
  friend class OperatorHandle;
  explicit TypedOperatorHandle(OperatorEntry* entry) : OperatorHandle(entry) {}

  C10_ALWAYS_INLINE R callWithKeys(DispatchKeySet ks, Args... args) const {
    if (C10_UNLIKELY(detail::g_dispatch_trace)) detail::traceDispatch(*this, ks, detail::describeArguments(args...));
    return entry_->lookup(ks).template call<R, Args...>(*this, ks, std::forward<Args>(args)...);
  }
};

// Undoes one registration when destroyed (a library unloading removes its kernels).
class TORCH_API RegistrationHandleRAII {
 public:
  RegistrationHandleRAII() = default;
  explicit RegistrationHandleRAII(std::function<void()> on_destroy) : on_destroy_(std::move(on_destroy)) {}
  RegistrationHandleRAII(RegistrationHandleRAII&& other) noexcept : on_destroy_(std::move(other.on_destroy_)) {
    other.on_destroy_ = nullptr;
  }
  RegistrationHandleRAII& operator=(RegistrationHandleRAII&& other) noexcept;
  ~RegistrationHandleRAII();
  C10_DISABLE_COPY_AND_ASSIGN(RegistrationHandleRAII);

 private:
  std::function<void()> on_destroy_;
};

class TORCH_API Dispatcher {
 public:
  static Dispatcher& singleton();

  // Lookup by name; "not found" also when only kernels (no schema) are registered.
  std::optional<OperatorHandle> findSchema(const OperatorName& name);
  OperatorHandle findSchemaOrThrow(const char* name, const char* overload_name);
  // Every operator with a schema, by name.
  std::vector<OperatorName> allOperatorNames();

  RegistrationHandleRAII registerDef(FunctionSchema schema, std::string site);
  // key == nullopt registers a catch-all (CompositeImplicitAutograd) kernel.
  RegistrationHandleRAII registerImpl(const OperatorName& op, std::optional<DispatchKey> key, KernelFunction kernel,
                                      std::string site);
  RegistrationHandleRAII registerFallback(DispatchKey key, KernelFunction kernel, std::string site);
  // Namespaces claimed by TORCH_LIBRARY (one block per namespace).
  RegistrationHandleRAII registerLibrary(const std::string& ns, std::string site);

  // Changes whenever an operator's schema is defined or removed: callers that cache
  // schemas (the Python op objects) rebuild when it moves.
  uint64_t schemaGeneration() const { return schema_generation_.load(std::memory_order_acquire); }

  // The registration table of one op ("aten::add.Tensor"), as torch._C._dispatch_dump.
  std::string dumpState(const std::string& qualified_name);

 private:
  friend class OperatorHandle;
  void checkSignature(const OperatorEntry& entry, const CppSignature& sig);
  Dispatcher();
  OperatorEntry& findOrCreate(const OperatorName& name);  // lock held
  void updateAllTables();                                  // lock held

  std::mutex mutex_;
  std::list<OperatorEntry> operators_;
  std::unordered_map<OperatorName, OperatorEntry*> lookup_;
  std::array<std::list<AnnotatedKernel>, kDispatchTableSize> fallbacks_;
  std::unordered_map<std::string, std::string> libraries_;
  std::atomic<uint64_t> schema_generation_{0};
};

// Parses "aten::add.Tensor" into name and overload.
TORCH_API OperatorName parseOperatorName(std::string_view qualified);

}  // namespace c10::inline tessera
