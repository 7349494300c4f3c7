#include <aten/dispatch/Dispatcher.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace c10::inline tessera {

namespace detail {

const bool g_dispatch_trace = [] {
  const char* v = std::getenv("TESSERA_DISPATCH_TRACE");
  return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}();

void traceDispatch(const OperatorHandle& op, DispatchKeySet ks, const std::string& arguments) {
  std::string line = c10::str("[dispatch] ", op.operator_name(), " -> ", ks.highestPriorityTypeId(), " (", arguments, ")\n");
  std::fputs(line.c_str(), stderr);
}

std::string describeArgument(const at::Tensor& t) {
  if (!t.defined()) return "undefined";
  return c10::str(t.scalar_type(), t.sizes(), (t.is_cpu() ? "" : c10::str("@", t.device())));
}

}  // namespace detail

RegistrationHandleRAII& RegistrationHandleRAII::operator=(RegistrationHandleRAII&& other) noexcept {
  if (this != &other) {
    if (on_destroy_) on_destroy_();
    on_destroy_ = std::move(other.on_destroy_);
    other.on_destroy_ = nullptr;
  }
  return *this;
}

RegistrationHandleRAII::~RegistrationHandleRAII() {
  if (on_destroy_) on_destroy_();
}

void OperatorHandle::checkSignature(const CppSignature& sig) const {
  Dispatcher::singleton().checkSignature(*entry_, sig);
}

void Dispatcher::checkSignature(const OperatorEntry& entry, const CppSignature& sig) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, kernels] : entry.kernels_) {
    for (const auto& k : kernels) {
      if (k.kernel.cppSignature() && !(*k.kernel.cppSignature() == sig)) {
        TORCH_CHECK(false, "calling ", entry.name(), " with C++ signature ", sig.name(), " but its kernel for ", key,
                    " (registered at ", k.site, ") has signature ", k.kernel.cppSignature()->name());
      }
    }
  }
}

void OperatorHandle::callBoxed(Stack* stack) const {
  const ThreadLocalState& tls = thread_local_state();
  DispatchKeySet ks = ((entry_->boxedArgumentKeys(*stack) | tls.included | detail::kAlwaysIncluded) - tls.excluded) -
                      entry_->fallthroughKeys();
  redispatchBoxed(ks, stack);
}

void OperatorHandle::redispatchBoxed(DispatchKeySet ks, Stack* stack) const {
  ks = ks - entry_->fallthroughKeys();
  if (C10_UNLIKELY(detail::g_dispatch_trace)) {
    size_t n = std::min<size_t>(stack->size(), entry_->num_arguments_);
    std::string args;
    for (size_t i = stack->size() - n; i < stack->size(); ++i) {
      const IValue& v = (*stack)[i];
      args += (args.empty() ? "" : ", ") + (v.isTensor() ? detail::describeArgument(v.toTensor()) : c10::str(v));
    }
    detail::traceDispatch(*this, ks, args);
  }
  entry_->lookup(ks).callBoxed(*this, ks, stack);
}

OperatorName parseOperatorName(std::string_view qualified) {
  size_t sep = qualified.find("::");
  TORCH_CHECK(sep != std::string_view::npos && sep > 0, "operator names are qualified as 'namespace::name': got '",
              qualified, "'");
  size_t dot = qualified.find('.', sep + 2);
  if (dot == std::string_view::npos) return OperatorName{std::string(qualified), ""};
  return OperatorName{std::string(qualified.substr(0, dot)), std::string(qualified.substr(dot + 1))};
}

Dispatcher::Dispatcher() = default;

Dispatcher& Dispatcher::singleton() {
  // Never destroyed: libraries unloading at exit deregister into it after statics die.
  static Dispatcher* instance = new Dispatcher();
  return *instance;
}

OperatorEntry& Dispatcher::findOrCreate(const OperatorName& name) {
  auto it = lookup_.find(name);
  if (it != lookup_.end()) return *it->second;
  OperatorEntry& entry = operators_.emplace_back(name);
  lookup_.emplace(name, &entry);
  entry.updateTable(fallbacks_);
  return entry;
}

void Dispatcher::updateAllTables() {
  for (auto& op : operators_) op.updateTable(fallbacks_);
}

std::optional<OperatorHandle> Dispatcher::findSchema(const OperatorName& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = lookup_.find(name);
  if (it == lookup_.end() || !it->second->hasSchema()) return std::nullopt;
  return OperatorHandle(it->second);
}

OperatorHandle Dispatcher::findSchemaOrThrow(const char* name, const char* overload_name) {
  OperatorName op{name, overload_name};
  auto handle = findSchema(op);
  TORCH_CHECK(handle.has_value(), "Could not find schema for ", op, ": no library defines it");
  return *handle;
}

std::vector<OperatorName> Dispatcher::allOperatorNames() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<OperatorName> out;
  for (const auto& op : operators_) {
    if (op.hasSchema()) out.push_back(op.name());
  }
  return out;
}

RegistrationHandleRAII Dispatcher::registerDef(FunctionSchema schema, std::string site) {
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorName name = schema.operator_name();
  OperatorEntry& entry = findOrCreate(name);
  TORCH_CHECK(!entry.hasSchema(), "Tried to register operator ", name,
              " more than once: each overload's schema takes a single def(). Duplicate registration at ", site,
              "; original registration at ", entry.schemaSite());
  entry.setSchema(std::move(schema), std::move(site));
  schema_generation_.fetch_add(1, std::memory_order_acq_rel);
  return RegistrationHandleRAII([this, &entry] {
    std::lock_guard<std::mutex> lock(mutex_);
    entry.clearSchema();
    schema_generation_.fetch_add(1, std::memory_order_acq_rel);
  });
}

RegistrationHandleRAII Dispatcher::registerImpl(const OperatorName& op, std::optional<DispatchKey> key,
                                                KernelFunction kernel, std::string site) {
  DispatchKey k = key.value_or(DispatchKey::CompositeImplicitAutograd);
  TORCH_CHECK(k != DispatchKey::Undefined && k != DispatchKey::EndOfRuntimeKeys, "cannot register a kernel for ", k);
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& entry = findOrCreate(op);
  auto it = entry.addKernel(k, std::move(kernel), std::move(site));
  entry.updateTable(fallbacks_);
  return RegistrationHandleRAII([this, &entry, k, it] {
    std::lock_guard<std::mutex> lock(mutex_);
    entry.removeKernel(k, it);
    entry.updateTable(fallbacks_);
  });
}

RegistrationHandleRAII Dispatcher::registerFallback(DispatchKey key, KernelFunction kernel, std::string site) {
  TORCH_CHECK(isRuntimeDispatchKey(key) && key != DispatchKey::Undefined,
              "a backend fallback takes a runtime dispatch key, not ", key);
  std::lock_guard<std::mutex> lock(mutex_);
  auto& list = fallbacks_[static_cast<size_t>(key)];
  TORCH_CHECK(list.empty(), "Registered a fallback for ", key, " twice: first at ", list.front().site, ", again at ",
              site);
  list.push_front(AnnotatedKernel{std::move(kernel), std::move(site)});
  auto it = list.begin();
  updateAllTables();
  return RegistrationHandleRAII([this, key, it] {
    std::lock_guard<std::mutex> lock(mutex_);
    fallbacks_[static_cast<size_t>(key)].erase(it);
    updateAllTables();
  });
}

RegistrationHandleRAII Dispatcher::registerLibrary(const std::string& ns, std::string site) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = libraries_.emplace(ns, site);
  TORCH_CHECK(inserted, "Only a single TORCH_LIBRARY can define the namespace ", ns,
              "; put all its definitions in one TORCH_LIBRARY block, or use TORCH_LIBRARY_FRAGMENT. "
              "Previous definition at ", it->second, ", this one at ", site);
  return RegistrationHandleRAII([this, ns] {
    std::lock_guard<std::mutex> lock(mutex_);
    libraries_.erase(ns);
  });
}

std::string Dispatcher::dumpState(const std::string& qualified_name) {
  OperatorName name = parseOperatorName(qualified_name);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = lookup_.find(name);
  TORCH_CHECK(it != lookup_.end(), "no operator named ", qualified_name, " is registered");
  return it->second->dumpState();
}

}  // namespace c10::inline tessera
