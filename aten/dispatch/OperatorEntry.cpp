#include <aten/dispatch/Dispatcher.h>
#include <aten/dispatch/OperatorEntry.h>

#include <sstream>

namespace c10::inline tessera {

namespace {

// "strided cpu", "sparse_coo cuda", "quantized cpu", "meta": a backend in the user's terms.
std::string describeBackend(DispatchKey k) {
  switch (k) {
    case DispatchKey::Meta: return "meta";
    case DispatchKey::QuantizedCPU: return "quantized cpu";
    case DispatchKey::QuantizedCUDA: return "quantized cuda";
    case DispatchKey::QuantizedMeta: return "quantized meta";
    case DispatchKey::MkldnnCPU: return "mkldnn cpu";
    case DispatchKey::NestedTensorCPU: return "nested cpu";
    default: return c10::str(LayoutName(layoutOf(k)), " ", DeviceTypeName(deviceTypeOf(k)));
  }
}

// The compressed layout of the first such tensor among the arguments: one key
// (SparseCsrCPU) serves CSR, CSC, BSR and BSC, and a refusal names the one the user passed.
std::optional<Layout> compressedLayoutIn(const Stack* stack) {
  if (stack == nullptr) return std::nullopt;
  for (const IValue& v : *stack) {
    if (v.isTensor() && v.toTensor().defined() && isSparseCompressed(v.toTensor().layout())) {
      return v.toTensor().layout();
    }
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) {
        if (t.defined() && isSparseCompressed(t.layout())) return t.layout();
      }
    }
    if (v.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) {
        if (t && t->defined() && isSparseCompressed(t->layout())) return t->layout();
      }
    }
  }
  return std::nullopt;
}

// The same key described as a property of the tensors that led there.
std::string describeTensors(DispatchKey k, const Stack* stack) {
  if (layoutOf(k) == Layout::SparseCsr) {
    if (std::optional<Layout> layout = compressedLayoutIn(stack)) {
      return c10::str(LayoutName(*layout), " tensors on ", DeviceTypeName(deviceTypeOf(k)));
    }
  }
  switch (k) {
    case DispatchKey::Meta: return "meta tensors";
    case DispatchKey::QuantizedCPU: return "quantized tensors on cpu";
    case DispatchKey::QuantizedCUDA: return "quantized tensors on cuda";
    case DispatchKey::QuantizedMeta: return "quantized meta tensors";
    case DispatchKey::MkldnnCPU: return "mkldnn tensors on cpu";
    case DispatchKey::NestedTensorCPU: return "nested tensors on cpu";
    default: return c10::str(LayoutName(layoutOf(k)), " tensors on ", DeviceTypeName(deviceTypeOf(k)));
  }
}

std::string describeFunctionality(DispatchKey k) {
  switch (k) {
    case DispatchKey::AutogradCPU: return "autograd support for cpu tensors";
    case DispatchKey::AutogradCUDA: return "autograd support for cuda tensors";
    case DispatchKey::AutogradOther: return "autograd support for these tensors";
    case DispatchKey::AutocastCPU:
    case DispatchKey::AutocastCUDA: return "autocast support";
    case DispatchKey::ADInplaceOrView: return "in-place and view tracking";
    case DispatchKey::BackendSelect: return "backend selection";
    case DispatchKey::Python:
    case DispatchKey::PythonTLSSnapshot: return "Python tensor subclass support";
    case DispatchKey::Profiler: return "profiling support";
    case DispatchKey::Named: return "named tensor support";
    case DispatchKey::Conjugate: return "support for conjugate views (call resolve_conj() first)";
    case DispatchKey::Negative: return "support for negative views (call resolve_neg() first)";
    default: return c10::str("support for ", k);
  }
}

// The kernel that stands in every empty table slot: it raises the error, in the terms of
// the user's tensors, when a call lands there.
void reportMissingKernel(void* functor, const OperatorHandle&, DispatchKeySet ks, Stack* stack) {
  const auto& entry = *static_cast<const OperatorEntry*>(functor);
  DispatchKey key = ks.highestPriorityTypeId();
  std::vector<std::string> have;
  for (DispatchKey b : entry.backendsWithKernels()) have.push_back(describeBackend(b));
  std::string listed;
  for (size_t i = 0; i < have.size(); ++i) {
    listed += (i == 0 ? "" : i + 1 == have.size() ? " and " : ", ") + have[i];
  }
  std::string available = have.empty() ? "it has no kernel for any backend" : "it has kernels for " + listed + " tensors";
  std::string what;
  if (key == DispatchKey::Undefined) {
    what = "has no kernel for a call without tensor arguments";
  } else if (isBackendDispatchKey(key)) {
    what = "has no kernel for " + describeTensors(key, stack);
  } else {
    what = "has no " + describeFunctionality(key);
  }
  std::string trace = detail::g_dispatch_trace ? c10::str(" [dispatch key ", key, ", key set ", ks, "]") : "";
  TORCH_CHECK_NOT_IMPLEMENTED(false, entry.name(), " ", what, "; ", available, trace);
}

}  // namespace

OperatorEntry::OperatorEntry(OperatorName name)
    : name_(std::move(name)), missing_kernel_(KernelFunction::makeInternalBoxed(&reportMissingKernel, this)) {
  for (auto& slot : table_) slot.store(&missing_kernel_, std::memory_order_relaxed);
}

const FunctionSchema& OperatorEntry::schema() const {
  TORCH_CHECK(schema_.has_value(), "operator ", name_, " has kernels but no schema: no library def()ined it");
  return *schema_;
}

void OperatorEntry::setSchema(FunctionSchema schema, std::string site) {
  tensor_arguments_.clear();
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    const SchemaType& t = args[i].type();
    if (t.isTensorOrOptionalTensor() || t.isTensorList() || t.isOptionalTensorList()) tensor_arguments_.push_back(static_cast<uint16_t>(i));
  }
  num_arguments_ = static_cast<uint16_t>(args.size());
  schema_ = std::move(schema);
  schema_site_ = std::move(site);
}

void OperatorEntry::clearSchema() {
  schema_.reset();
  schema_site_.clear();
  tensor_arguments_.clear();
  num_arguments_ = 0;
}

DispatchKeySet OperatorEntry::boxedArgumentKeys(const Stack& stack) const {
  TORCH_CHECK(stack.size() >= num_arguments_, name_, " takes ", num_arguments_, " arguments but the stack holds ",
              stack.size());
  detail::KeySetCollector c;
  const IValue* args = stack.data() + (stack.size() - num_arguments_);
  for (uint16_t i : tensor_arguments_) {
    const IValue& v = args[i];
    if (v.isTensor()) {
      c.add(v.toTensor());
    } else if (v.isTensorList()) {
      c.add(v.toTensorList());
    } else if (v.isOptionalTensorList()) {
      c.add(v.toOptionalTensorList());
    } else if (v.isGenericList()) {
      for (const IValue& item : v.toList()) {
        if (item.isTensor()) c.add(item.toTensor());
      }
    }
  }
  return c.ks;
}

std::list<AnnotatedKernel>::iterator OperatorEntry::addKernel(DispatchKey key, KernelFunction kernel, std::string site) {
  auto& list = kernels_[key];
  if (!list.empty()) {
    TORCH_CHECK(false, "Registered a kernel for ", name_, " on ", key, " twice: first at ", list.front().site,
                ", again at ", site, ". Each key takes one kernel per operator.");
  }
  for (const auto& [k, others] : kernels_) {
    for (const auto& other : others) {
      if (!other.kernel.cppSignature() || !kernel.cppSignature()) continue;
      TORCH_CHECK(*other.kernel.cppSignature() == *kernel.cppSignature(), "the kernel for ", name_, " on ", key,
                  " registered at ", site, " has C++ signature ", kernel.cppSignature()->name(),
                  " but the kernel on ", k, " registered at ", other.site, " has ", other.kernel.cppSignature()->name());
    }
  }
  list.push_front(AnnotatedKernel{std::move(kernel), std::move(site)});
  return list.begin();
}

void OperatorEntry::removeKernel(DispatchKey key, std::list<AnnotatedKernel>::iterator it) {
  auto found = kernels_.find(key);
  TORCH_INTERNAL_ASSERT(found != kernels_.end());
  found->second.erase(it);
  if (found->second.empty()) kernels_.erase(found);
}

bool OperatorEntry::hasDirectKernel(DispatchKey k) const {
  auto it = kernels_.find(k);
  return it != kernels_.end() && !it->second.empty();
}

// The precedence for runtime key k: a kernel registered for k itself; for backends, a
// CompositeExplicitAutograd kernel; for backends and autograd keys, a
// CompositeImplicitAutograd kernel (for an autograd key only when its backends have no
// kernel of their own, which would otherwise be bypassed); for autograd keys, an
// Autograd kernel; then the key's backend fallback; else the missing-kernel reporter.
// A call without tensor arguments (Undefined) takes a composite kernel when there is one.
const KernelFunction* OperatorEntry::computeEntry(
    DispatchKey k, const std::array<std::list<AnnotatedKernel>, kDispatchTableSize>& fallbacks) const {
  auto first = [&](DispatchKey key) -> const KernelFunction* {
    auto it = kernels_.find(key);
    return it == kernels_.end() || it->second.empty() ? nullptr : &it->second.front().kernel;
  };
  if (k == DispatchKey::Undefined) {
    // No tensor argument to dispatch on (cat([]), stack([])): as in torch, a composite
    // kernel serves the call (and raises the op's own error), else the reporter.
    if (const KernelFunction* explicit_ = first(DispatchKey::CompositeExplicitAutograd)) return explicit_;
    if (const KernelFunction* implicit = first(DispatchKey::CompositeImplicitAutograd)) return implicit;
    return &missing_kernel_;
  }
  if (const KernelFunction* direct = first(k)) return direct;
  if (backend_dispatch_keyset.has(k)) {
    if (const KernelFunction* explicit_ = first(DispatchKey::CompositeExplicitAutograd)) return explicit_;
  }
  if (runtimeDispatchKeySetHas(DispatchKey::CompositeImplicitAutograd, k)) {
    bool backend_has_own = false;
    if (isAutogradKey(k)) {
      for (DispatchKey b : backend_dispatch_keyset) {
        if (autogradKeyForBackend(b) == k && (hasDirectKernel(b) || hasDirectKernel(DispatchKey::CompositeExplicitAutograd))) {
          backend_has_own = true;
        }
      }
    }
    if (!backend_has_own) {
      if (const KernelFunction* implicit = first(DispatchKey::CompositeImplicitAutograd)) return implicit;
    }
  }
  if (isAutogradKey(k)) {
    if (const KernelFunction* autograd = first(DispatchKey::Autograd)) return autograd;
  }
  const auto& fb = fallbacks[static_cast<size_t>(k)];
  if (!fb.empty()) return &fb.front().kernel;
  return &missing_kernel_;
}

void OperatorEntry::updateTable(const std::array<std::list<AnnotatedKernel>, kDispatchTableSize>& fallbacks) {
  uint64_t fallthrough = 0;
  for (size_t i = 0; i < kDispatchTableSize; ++i) {
    DispatchKey k = static_cast<DispatchKey>(i);
    const KernelFunction* entry = computeEntry(k, fallbacks);
    table_[i].store(entry, std::memory_order_release);
    if (k != DispatchKey::Undefined && entry->isFallthrough()) fallthrough |= DispatchKeySet(k).raw_repr();
  }
  fallthrough_keys_.store(fallthrough, std::memory_order_relaxed);
}

std::vector<DispatchKey> OperatorEntry::backendsWithKernels() const {
  std::vector<DispatchKey> out;
  for (DispatchKey b : all_backends_keyset) {
    const KernelFunction* k = table_[static_cast<size_t>(b)].load(std::memory_order_acquire);
    if (k != &missing_kernel_ && !k->isFallthrough()) out.push_back(b);
  }
  // Lowest priority first reads naturally: "strided cpu, strided cuda, meta".
  std::reverse(out.begin(), out.end());
  return out;
}

std::string OperatorEntry::dumpState() const {
  std::ostringstream os;
  os << "name: " << name_ << "\n";
  if (schema_) {
    os << "schema: " << *schema_ << "\n";
    os << "debug: registered at " << schema_site_ << "\n";
  } else {
    os << "schema: (none)\n";
  }
  for (const auto& [key, kernels] : kernels_) {
    for (const auto& k : kernels) {
      os << key << ": registered at " << k.site << (k.kernel.isFallthrough() ? " [fallthrough]" : " [kernel]") << "\n";
    }
  }
  return os.str();
}

}  // namespace c10::inline tessera
