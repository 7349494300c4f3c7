// OperatorEntry: everything the dispatcher knows about one operator: its schema, the
// kernels registered per dispatch key (alias keys included) with their sites, and the
// dense dispatch table computed from them. Calls only read the table.
#pragma once

#include <aten/dispatch/KernelFunction.h>
#include <aten/dispatch/OperatorName.h>
#include <aten/schema/FunctionSchema.h>

#include <array>
#include <atomic>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace c10::inline tessera {

// A kernel plus where it was registered ("FILE:LINE"), for error messages and dumps.
struct AnnotatedKernel {
  KernelFunction kernel;
  std::string site;
};

class TORCH_API OperatorEntry {
 public:
  explicit OperatorEntry(OperatorName name);
  C10_DISABLE_COPY_AND_ASSIGN(OperatorEntry);

  const OperatorName& name() const { return name_; }
  bool hasSchema() const { return schema_.has_value(); }
  const FunctionSchema& schema() const;
  const std::string& schemaSite() const { return schema_site_; }

  // The kernel for a fully computed key set (after TLS and fallthrough masking).
  const KernelFunction& lookup(DispatchKeySet ks) const {
    return *table_[static_cast<size_t>(ks.highestPriorityTypeId())].load(std::memory_order_acquire);
  }
  // Keys whose table entry is a fallthrough: callers remove them before the lookup.
  DispatchKeySet fallthroughKeys() const {
    return DispatchKeySet::from_raw_repr(fallthrough_keys_.load(std::memory_order_relaxed));
  }

  // The key set of the tensors among the last `n` arguments of a boxed call.
  DispatchKeySet boxedArgumentKeys(const Stack& stack) const;

  // Backends ("strided cpu", "meta") with a kernel that applies, for error messages.
  std::vector<DispatchKey> backendsWithKernels() const;
  // One line per registered key, "KEY: registered at FILE:LINE [kernel]".
  std::string dumpState() const;

 private:
  friend class Dispatcher;
  friend class OperatorHandle;

  // Called with the dispatcher's registration lock held.
  void setSchema(FunctionSchema schema, std::string site);
  void clearSchema();
  std::list<AnnotatedKernel>::iterator addKernel(DispatchKey key, KernelFunction kernel, std::string site);
  void removeKernel(DispatchKey key, std::list<AnnotatedKernel>::iterator it);
  void updateTable(const std::array<std::list<AnnotatedKernel>, kDispatchTableSize>& fallbacks);
  const KernelFunction* computeEntry(DispatchKey k,
                                     const std::array<std::list<AnnotatedKernel>, kDispatchTableSize>& fallbacks) const;
  bool hasDirectKernel(DispatchKey k) const;

  OperatorName name_;
  std::optional<FunctionSchema> schema_;
  std::string schema_site_;
  // Positions of Tensor, Tensor?, Tensor[] and Tensor?[] arguments, from the schema.
  std::vector<uint16_t> tensor_arguments_;
  uint16_t num_arguments_ = 0;
  // Registered kernels per key, newest first. Lists keep KernelFunction addresses stable,
  // so the table can point at them.
  std::map<DispatchKey, std::list<AnnotatedKernel>> kernels_;
  std::array<std::atomic<const KernelFunction*>, kDispatchTableSize> table_;
  std::atomic<uint64_t> fallthrough_keys_{0};
  KernelFunction missing_kernel_;
};

}  // namespace c10::inline tessera
