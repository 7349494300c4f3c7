// Reading a shared library's direct dependencies from its section headers: the SHT_DYNAMIC
// section's DT_NEEDED entries, as offsets into the string table its sh_link names. Every
// offset and size comes from the file, so each is checked against the file's length
// before it is used (the same discipline as tessera.load's storage bounds).
#include <aten/library_dependencies.h>

#include <elf.h>

#include <array>
#include <cstring>
#include <fstream>

namespace torch::inline tessera {
namespace {

// Sections larger than these are not a real dynamic section or its names.
constexpr uint64_t kMaxDynamicBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxStringBytes = uint64_t{16} << 20;

class FileBytes {
 public:
  explicit FileBytes(const std::string& path) : in_(path, std::ios::binary) {
    if (in_) {
      in_.seekg(0, std::ios::end);
      const auto end = in_.tellg();
      size_ = end < 0 ? 0 : static_cast<uint64_t>(end);
    }
  }
  bool ok() const { return static_cast<bool>(in_); }
  // Reads [offset, offset + count) when it lies inside the file.
  bool read(uint64_t offset, uint64_t count, void* out) {
    if (offset > size_ || count > size_ - offset) return false;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(count));
    return static_cast<uint64_t>(in_.gcount()) == count;
  }

 private:
  std::ifstream in_;
  uint64_t size_ = 0;
};

}  // namespace

std::optional<std::vector<std::string>> elf_needed_libraries(const std::string& path) {
  FileBytes file(path);
  if (!file.ok()) return std::nullopt;
  Elf64_Ehdr header;
  if (!file.read(0, sizeof(header), &header)) return std::nullopt;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0) {
    return std::nullopt;
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!file.read(header.e_shoff, sizeof(Elf64_Shdr) * sections.size(), sections.data())) return std::nullopt;
  std::vector<std::string> needed;
  for (const Elf64_Shdr& dynamic : sections) {
    if (dynamic.sh_type != SHT_DYNAMIC) continue;
    if (dynamic.sh_link >= sections.size() || dynamic.sh_size > kMaxDynamicBytes) return std::nullopt;
    const Elf64_Shdr& strings = sections[dynamic.sh_link];
    if (strings.sh_type != SHT_STRTAB || strings.sh_size > kMaxStringBytes) return std::nullopt;
    std::vector<Elf64_Dyn> entries(dynamic.sh_size / sizeof(Elf64_Dyn));
    std::vector<char> names(strings.sh_size);
    if (!file.read(dynamic.sh_offset, sizeof(Elf64_Dyn) * entries.size(), entries.data()) ||
        !file.read(strings.sh_offset, names.size(), names.data())) {
      return std::nullopt;
    }
    for (const Elf64_Dyn& entry : entries) {
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag != DT_NEEDED) continue;
      if (entry.d_un.d_val >= names.size()) return std::nullopt;
      const char* name = names.data() + entry.d_un.d_val;
      const void* end = std::memchr(name, '\0', names.size() - entry.d_un.d_val);
      if (!end) return std::nullopt;
      needed.emplace_back(name, static_cast<const char*>(end));
    }
  }
  return needed;
}

bool is_pytorch_library_name(const std::string& needed) {
  static const std::array<const char*, 12> kStems = {
      "libc10",       "libc10_cuda",       "libc10_hip",        "libtorch",       "libtorch_cpu", "libtorch_cuda",
      "libtorch_hip", "libtorch_cuda_cpp", "libtorch_cuda_cu", "libtorch_python", "libshm",       "libtorch_global_deps"};
  const auto dot = needed.find(".so");
  if (dot == std::string::npos) return false;
  const std::string stem = needed.substr(0, dot);
  for (const char* s : kStems) {
    if (stem == s) return true;
  }
  return false;
}

}  // namespace torch::inline tessera
