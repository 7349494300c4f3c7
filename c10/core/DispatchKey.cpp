#include <c10/core/DispatchKey.h>

#include <c10/util/Exception.h>

#include <cctype>
#include <ostream>
#include <string>

namespace c10::inline tessera {

const char* toString(DispatchKey k) {
  switch (k) {
    case DispatchKey::Undefined: return "Undefined";
    case DispatchKey::CPU: return "CPU";
    case DispatchKey::CUDA: return "CUDA";
    case DispatchKey::Meta: return "Meta";
    case DispatchKey::SparseCPU: return "SparseCPU";
    case DispatchKey::SparseCUDA: return "SparseCUDA";
    case DispatchKey::SparseCsrCPU: return "SparseCsrCPU";
    case DispatchKey::SparseCsrCUDA: return "SparseCsrCUDA";
    case DispatchKey::QuantizedCPU: return "QuantizedCPU";
    case DispatchKey::QuantizedCUDA: return "QuantizedCUDA";
    case DispatchKey::MkldnnCPU: return "MkldnnCPU";
    case DispatchKey::NestedTensorCPU: return "NestedTensorCPU";
    case DispatchKey::SparseMeta: return "SparseMeta";
    case DispatchKey::SparseCsrMeta: return "SparseCsrMeta";
    case DispatchKey::QuantizedMeta: return "QuantizedMeta";
    case DispatchKey::BackendSelect: return "BackendSelect";
    case DispatchKey::Python: return "Python";
    case DispatchKey::Conjugate: return "Conjugate";
    case DispatchKey::Negative: return "Negative";
    case DispatchKey::ADInplaceOrView: return "ADInplaceOrView";
    case DispatchKey::AutogradCPU: return "AutogradCPU";
    case DispatchKey::AutogradCUDA: return "AutogradCUDA";
    case DispatchKey::AutogradOther: return "AutogradOther";
    case DispatchKey::Named: return "Named";
    case DispatchKey::AutocastCPU: return "AutocastCPU";
    case DispatchKey::AutocastCUDA: return "AutocastCUDA";
    case DispatchKey::Profiler: return "Profiler";
    case DispatchKey::PythonTLSSnapshot: return "PythonTLSSnapshot";
    case DispatchKey::EndOfRuntimeKeys: return "EndOfRuntimeKeys";
    case DispatchKey::Autograd: return "Autograd";
    case DispatchKey::CompositeImplicitAutograd: return "CompositeImplicitAutograd";
    case DispatchKey::CompositeExplicitAutograd: return "CompositeExplicitAutograd";
  }
  // A value cast from a corrupt or out-of-range integer.
  return "UNKNOWN_DISPATCH_KEY";
}

std::ostream& operator<<(std::ostream& os, DispatchKey k) { return os << toString(k); }

namespace {

bool isParsable(DispatchKey k) { return k != DispatchKey::EndOfRuntimeKeys; }

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// The name as it appears in a message: control bytes (a NUL would cut what() short) as \xNN.
std::string printable(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

DispatchKey parseDispatchKey(std::string_view name) {
  for (int i = 0; i < kNumDispatchKeyValues; ++i) {
    auto k = static_cast<DispatchKey>(i);
    if (isParsable(k) && name == toString(k)) return k;
  }
  // Unknown: name every valid spelling, and point out a near miss in case only ("cpu").
  std::string valid;
  const char* near_miss = nullptr;
  for (int i = 0; i < kNumDispatchKeyValues; ++i) {
    auto k = static_cast<DispatchKey>(i);
    if (!isParsable(k)) continue;
    if (!valid.empty()) valid += ", ";
    valid += toString(k);
    if (equalsIgnoringCase(name, toString(k))) near_miss = toString(k);
  }
  std::string hint = near_miss ? str(" (did you mean '", near_miss, "'? names are case sensitive)") : std::string();
  TORCH_ERROR_WITH(ValueError, "Unknown dispatch key '", printable(name), "'", hint, ". Valid dispatch keys are: ", valid);
}

namespace detail {

void throwNoBackendForDeviceLayout(DeviceType device, Layout layout) {
  TORCH_ERROR_WITH(NotImplementedError, "Tessera has no backend for tensors on device '", DeviceTypeName(device),
                   "' with layout '", LayoutName(layout), "'",
                   device == DeviceType::Meta ? " (meta tensors are strided or sparse)" : "");
}

void throwNotABackendKey(DispatchKey k, const char* function) {
  TORCH_ERROR_WITH(ValueError, function, "(): ", toString(k),
                   " is not a backend dispatch key (expected one of CPU, CUDA, Meta, SparseCPU, SparseCUDA, "
                   "SparseCsrCPU, SparseCsrCUDA, QuantizedCPU, QuantizedCUDA, MkldnnCPU, NestedTensorCPU, SparseMeta, "
                   "SparseCsrMeta, QuantizedMeta)");
}

}  // namespace detail

}  // namespace c10::inline tessera
