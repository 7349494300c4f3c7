// DispatchKey: the small closed set of keys the dispatcher chooses kernels by. A key's
// numeric value is its priority (higher wins), so a tensor's key set picks its kernel with
// one count-leading-zeros. Alias keys name groups of runtime keys and exist only while
// registering kernels; they never appear in a tensor's key set or a dispatch table.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/Layout.h>
#include <c10/macros/Macros.h>

#include <cstdint>
#include <iosfwd>
#include <string_view>

namespace c10::inline tessera {

// Lowest priority first. The order is load-bearing: backends sit below every wrapper key
// (BackendSelect, Python, Named, the math bits Conjugate/Negative, ADInplaceOrView,
// Autograd*, Autocast*, Profiler), so a call first
// passes through the wrappers, each of which redispatches below itself, and ends at a backend.
enum class DispatchKey : uint8_t {
  Undefined = 0,  // "no key": the highest key of an empty set; never a real key.

  // Backends: where and how the data lives (see backendDispatchKey).
  CPU,
  CUDA,
  Meta,
  SparseCPU,
  SparseCUDA,
  SparseCsrCPU,
  SparseCsrCUDA,
  QuantizedCPU,
  QuantizedCUDA,
  MkldnnCPU,        // layout _mkldnn: an opaque oneDNN-owned tensor (to_mkldnn)
  NestedTensorCPU,  // a nested tensor: a list of tensors of one rank in one buffer
  SparseMeta,       // sparse tensors on the meta device: members are meta tensors
  SparseCsrMeta,
  QuantizedMeta,    // quantized tensors on the meta device: dtype, shape and quantizer

  // Wrappers, lowest priority first.
  BackendSelect,
  Python,
  // A tensor with dim names. Below autograd as in torch, so composite operators decompose
  // first; one boxed fallback (aten/native/named) propagates names around the rest.
  Named,
  Conjugate,  // math bits: a lazy conj()/negation view; a boxed fallback materialises
  Negative,   // it for every op that is not a view or a bit-aware kernel.
  ADInplaceOrView,
  AutogradCPU,
  AutogradCUDA,
  AutogradOther,
  AutocastCPU,
  AutocastCUDA,
  Profiler,
  PythonTLSSnapshot,

  // Not a key: values below it are runtime keys (dispatch tables are this long).
  EndOfRuntimeKeys,

  // Alias keys: registration-time names for groups of runtime keys
  // (getRuntimeDispatchKeySet in DispatchKeySet.h expands them).
  Autograd,
  CompositeImplicitAutograd,
  CompositeExplicitAutograd,
};

// Real runtime keys, Undefined excluded: CPU .. PythonTLSSnapshot.
constexpr int kNumRuntimeDispatchKeys = static_cast<int>(DispatchKey::EndOfRuntimeKeys) - 1;
// Entries in a table indexed by a runtime key's value (slot 0 is Undefined).
constexpr int kDispatchTableSize = static_cast<int>(DispatchKey::EndOfRuntimeKeys);
// Every enumerator, marker included; one past the last alias key.
constexpr int kNumDispatchKeyValues = static_cast<int>(DispatchKey::CompositeExplicitAutograd) + 1;

// PyTorch's spelling: "CPU", "AutogradCPU", "CompositeImplicitAutograd", ...
C10_API const char* toString(DispatchKey k);
C10_API std::ostream& operator<<(std::ostream& os, DispatchKey k);

// Inverse of toString for Undefined, every runtime key and every alias key (exact, case
// sensitive, as in PyTorch). Anything else raises ValueError listing the valid names.
C10_API DispatchKey parseDispatchKey(std::string_view name);

constexpr bool isAliasDispatchKey(DispatchKey k) {
  return k >= DispatchKey::Autograd && k <= DispatchKey::CompositeExplicitAutograd;
}

constexpr bool isRuntimeDispatchKey(DispatchKey k) {
  return k > DispatchKey::Undefined && k < DispatchKey::EndOfRuntimeKeys;
}

// The last backend key: CPU .. kLastBackendKey are the keys a tensor's storage determines.
constexpr DispatchKey kLastBackendKey = DispatchKey::QuantizedMeta;
constexpr bool isBackendDispatchKey(DispatchKey k) { return k >= DispatchKey::CPU && k <= kLastBackendKey; }

// The runtime autograd keys, and the Autograd alias that registers for all of them.
constexpr bool isAutogradKey(DispatchKey k) {
  return k == DispatchKey::AutogradCPU || k == DispatchKey::AutogradCUDA || k == DispatchKey::AutogradOther ||
         k == DispatchKey::Autograd;
}

namespace detail {
// Cold paths of the constexpr functions below, kept out of line so they stay inlinable.
[[noreturn]] C10_API void throwNoBackendForDeviceLayout(DeviceType device, Layout layout);
[[noreturn]] C10_API void throwNotABackendKey(DispatchKey k, const char* function);
}  // namespace detail

// The backend key of a tensor on `device` with `layout`. Meta tensors are strided or sparse
// (SparseMeta, SparseCsrMeta: shapes and member shapes without data).
constexpr DispatchKey backendDispatchKey(DeviceType device, Layout layout) {
  switch (layout) {
    case Layout::Strided:
      switch (device) {
        case DeviceType::CPU:
          return DispatchKey::CPU;
        case DeviceType::CUDA:
          return DispatchKey::CUDA;
        case DeviceType::Meta:
          return DispatchKey::Meta;
      }
      break;
    case Layout::SparseCoo:
      if (device == DeviceType::CPU) return DispatchKey::SparseCPU;
      if (device == DeviceType::CUDA) return DispatchKey::SparseCUDA;
      if (device == DeviceType::Meta) return DispatchKey::SparseMeta;
      break;
    case Layout::SparseCsr:
    case Layout::SparseCsc:
    case Layout::SparseBsr:
    case Layout::SparseBsc:
      if (device == DeviceType::CPU) return DispatchKey::SparseCsrCPU;
      if (device == DeviceType::CUDA) return DispatchKey::SparseCsrCUDA;
      if (device == DeviceType::Meta) return DispatchKey::SparseCsrMeta;
      break;
    case Layout::Mkldnn:
      if (device == DeviceType::CPU) return DispatchKey::MkldnnCPU;
      break;
  }
  detail::throwNoBackendForDeviceLayout(device, layout);
}

// The autograd key a tensor with this backend carries. Only CPU and CUDA have their own;
// everything else (Meta, sparse, quantized) shares AutogradOther, as in PyTorch.
constexpr DispatchKey autogradKeyForBackend(DispatchKey backend) {
  switch (backend) {
    case DispatchKey::CPU:
      return DispatchKey::AutogradCPU;
    case DispatchKey::CUDA:
      return DispatchKey::AutogradCUDA;
    default:
      return DispatchKey::AutogradOther;
  }
}

// Device and layout of a backend key, so that "no kernel for SparseCUDA" can be reported to
// the user as "cuda, sparse_coo". Raises for a key that is not a backend key.
constexpr DeviceType deviceTypeOf(DispatchKey backend) {
  switch (backend) {
    case DispatchKey::CPU:
    case DispatchKey::SparseCPU:
    case DispatchKey::SparseCsrCPU:
    case DispatchKey::QuantizedCPU:
    case DispatchKey::MkldnnCPU:
    case DispatchKey::NestedTensorCPU:
      return DeviceType::CPU;
    case DispatchKey::CUDA:
    case DispatchKey::SparseCUDA:
    case DispatchKey::SparseCsrCUDA:
    case DispatchKey::QuantizedCUDA:
      return DeviceType::CUDA;
    case DispatchKey::Meta:
    case DispatchKey::SparseMeta:
    case DispatchKey::SparseCsrMeta:
    case DispatchKey::QuantizedMeta:
      return DeviceType::Meta;
    default:
      detail::throwNotABackendKey(backend, "deviceTypeOf");
  }
}

// Quantized and nested tensors are strided, as in torch (their difference is the dtype and
// quantizer, or the list of component shapes).
constexpr Layout layoutOf(DispatchKey backend) {
  switch (backend) {
    case DispatchKey::CPU:
    case DispatchKey::CUDA:
    case DispatchKey::Meta:
    case DispatchKey::QuantizedCPU:
    case DispatchKey::QuantizedCUDA:
    case DispatchKey::QuantizedMeta:
    case DispatchKey::NestedTensorCPU:
      return Layout::Strided;
    case DispatchKey::MkldnnCPU:
      return Layout::Mkldnn;
    case DispatchKey::SparseCPU:
    case DispatchKey::SparseCUDA:
    case DispatchKey::SparseMeta:
      return Layout::SparseCoo;
    case DispatchKey::SparseCsrCPU:
    case DispatchKey::SparseCsrCUDA:
    case DispatchKey::SparseCsrMeta:
      return Layout::SparseCsr;
    default:
      detail::throwNotABackendKey(backend, "layoutOf");
  }
}

}  // namespace c10::inline tessera
