#include <c10/core/DeviceType.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/util/Exception.h>

namespace c10::inline tessera {

const char* DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::Meta: return "meta";
  }
  TORCH_INTERNAL_ASSERT(false, "unknown DeviceType ", static_cast<int>(type));
}
std::ostream& operator<<(std::ostream& os, DeviceType type) { return os << DeviceTypeName(type); }

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::Strided: return "strided";
    case Layout::SparseCoo: return "sparse_coo";
    case Layout::SparseCsr: return "sparse_csr";
    case Layout::Mkldnn: return "_mkldnn";
    case Layout::SparseCsc: return "sparse_csc";
    case Layout::SparseBsr: return "sparse_bsr";
    case Layout::SparseBsc: return "sparse_bsc";
  }
  TORCH_INTERNAL_ASSERT(false, "unknown Layout ", static_cast<int>(layout));
}
std::ostream& operator<<(std::ostream& os, Layout layout) { return os << "torch." << LayoutName(layout); }

const char* MemoryFormatName(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::Preserve: return "preserve_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
  }
  TORCH_INTERNAL_ASSERT(false, "unknown MemoryFormat ", static_cast<int>(format));
}
std::ostream& operator<<(std::ostream& os, MemoryFormat format) {
  return os << "torch." << MemoryFormatName(format);
}

}  // namespace c10::inline tessera
