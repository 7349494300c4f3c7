// Reading a shared library's direct dependencies as the dynamic loader finds them: the
// PT_DYNAMIC segment's DT_NEEDED entries, offsets into the string table that DT_STRTAB
// addresses (a virtual address, mapped to the file through the PT_LOAD segments). Every
// offset and size comes from the file, so each is checked against the file's length
// before it is used (the same discipline as tessera.load's storage bounds).
#include <aten/library_dependencies.h>

#include <elf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>

namespace torch::inline tessera {
namespace {

// More than this is not a real dynamic segment; a dependency's name is read in one piece.
constexpr uint64_t kMaxDynamicBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxNameBytes = 4096;

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
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0) {
    return std::nullopt;
  }
  std::vector<Elf64_Phdr> segments(header.e_phnum);  // e_phnum is 16 bits: at most 3.5 MB
  if (!file.read(header.e_phoff, sizeof(Elf64_Phdr) * segments.size(), segments.data())) return std::nullopt;
  const Elf64_Phdr* dynamic = nullptr;
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type == PT_DYNAMIC) dynamic = &segment;
  }
  if (dynamic == nullptr) return std::vector<std::string>{};  // statically linked: needs nothing
  if (dynamic->p_filesz > kMaxDynamicBytes) return std::nullopt;
  std::vector<Elf64_Dyn> entries(dynamic->p_filesz / sizeof(Elf64_Dyn));
  if (!file.read(dynamic->p_offset, sizeof(Elf64_Dyn) * entries.size(), entries.data())) return std::nullopt;
  uint64_t strtab = 0, strsz = 0;
  bool has_strtab = false;
  for (const Elf64_Dyn& entry : entries) {
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_STRTAB) {
      strtab = entry.d_un.d_ptr;
      has_strtab = true;
    }
    if (entry.d_tag == DT_STRSZ) strsz = entry.d_un.d_val;
  }
  if (!has_strtab) return std::nullopt;
  // The string table's file offset: the PT_LOAD segment whose file image holds it.
  std::optional<uint64_t> strtab_offset;
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type == PT_LOAD && strtab >= segment.p_vaddr && strtab - segment.p_vaddr < segment.p_filesz) {
      strtab_offset = segment.p_offset + (strtab - segment.p_vaddr);
      break;
    }
  }
  if (!strtab_offset) return std::nullopt;
  std::vector<std::string> needed;
  for (const Elf64_Dyn& entry : entries) {
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag != DT_NEEDED) continue;
    const uint64_t at = entry.d_un.d_val;
    if (at >= strsz || *strtab_offset > UINT64_MAX - at) return std::nullopt;
    // Up to kMaxNameBytes, within the table and the file; the name must end inside.
    std::vector<char> name(static_cast<size_t>(std::min<uint64_t>(kMaxNameBytes, strsz - at)));
    size_t got = name.size();
    while (got > 0 && !file.read(*strtab_offset + at, got, name.data())) got /= 2;
    const void* end = got > 0 ? std::memchr(name.data(), '\0', got) : nullptr;
    if (end == nullptr) return std::nullopt;
    needed.emplace_back(static_cast<const char*>(name.data()), static_cast<const char*>(end));
  }
  return needed;
}

bool is_pytorch_library_name(const std::string& needed) {
  static const std::array<const char*, 17> kStems = {
      "libc10",         "libc10_cuda",     "libc10_hip",        "libc10_xpu",           "libtorch",
      "libtorch_cpu",   "libtorch_cuda",   "libtorch_hip",      "libtorch_xpu",         "libtorch_cuda_cpp",
      "libtorch_cuda_cu", "libtorch_cuda_linalg", "libtorch_python", "libtorch_global_deps", "libshm",
      "libcaffe2_nvrtc", "libtorch_nvshmem"};
  // a name linked by path (no SONAME) counts by its file name
  const auto slash = needed.rfind('/');
  const std::string file = slash == std::string::npos ? needed : needed.substr(slash + 1);
  const auto dot = file.find(".so");
  if (dot == std::string::npos) return false;
  const std::string stem = file.substr(0, dot);
  for (const char* s : kStems) {
    if (stem == s) return true;
  }
  return false;
}

}  // namespace torch::inline tessera
