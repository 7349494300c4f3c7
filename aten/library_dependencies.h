// What a shared library links against, read from its ELF file without loading it:
// load_library refuses a library built for PyTorch (linked to libtorch / libc10) before
// dlopen could map a second tensor library into the process.
#pragma once

#include <c10/macros/Export.h>

#include <optional>
#include <string>
#include <vector>

namespace torch::inline tessera {

// The DT_NEEDED names of a 64-bit little-endian ELF file (its direct dependencies), or
// nullopt when the file cannot be read as one (missing, truncated, another format); never
// throws on hostile contents.
TORCH_API std::optional<std::vector<std::string>> elf_needed_libraries(const std::string& path);

// Whether a DT_NEEDED name is one of PyTorch's own libraries (libc10.so.1.13,
// libtorch_cpu.so, libtorch_python.so, ...); tessera's are libtessera_c10, libaten and
// libtessera_autograd.
TORCH_API bool is_pytorch_library_name(const std::string& needed);

}  // namespace torch::inline tessera
