// Loading and unloading shared libraries of operators, with the registrations each one
// makes tracked here rather than left to the dynamic loader (see load_library in library.h).
#include <aten/library.h>
#include <aten/library_dependencies.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace torch::inline tessera {
namespace {

struct LoadedLibrary {
  void* handle = nullptr;  // null while unloaded but still mapped (dormant)
  std::vector<detail::TorchLibraryInit*> blocks;
};

// Leaked on purpose: TorchLibraryInit destructors consult it during static destruction.
std::mutex& registry_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<std::string, LoadedLibrary>& registry() {
  static auto* r = new std::map<std::string, LoadedLibrary>;
  return *r;
}
// Serializes load_library / unload_library; never held by a block's constructor or destructor.
std::mutex& loader_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
// The blocks constructed by the dlopen this thread is running inside load_library.
thread_local std::vector<detail::TorchLibraryInit*>* t_capturing = nullptr;
// Every block alive in the process, whoever loaded its library (guarded by registry_mutex).
std::set<const void*>& live_blocks() {
  static auto* s = new std::set<const void*>;
  return *s;
}

// Whether a block alive in the process lives in the library `handle` opened: whatever
// mapped it first (load_library, ctypes, a link), its blocks ran and registered.
bool library_has_blocks(void* handle) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return false;
  std::lock_guard<std::mutex> guard(registry_mutex());
  for (const void* block : live_blocks()) {
    Dl_info info;
    if (dladdr(block, &info) != 0 && info.dli_fname != nullptr && map->l_name != nullptr &&
        std::strcmp(info.dli_fname, map->l_name) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

namespace detail {

TorchLibraryInit::TorchLibraryInit(Library::Kind kind, void (*init)(Library&), const char* ns,
                                   std::optional<DispatchKey> key, const char* file, uint32_t line)
    : kind_(kind), init_(init), ns_(ns), key_(key), file_(file), line_(line) {
  run();
  if (t_capturing) t_capturing->push_back(this);
  std::lock_guard<std::mutex> guard(registry_mutex());
  live_blocks().insert(this);
}

TorchLibraryInit::~TorchLibraryInit() {
  // A library the loader really unmaps destroys its blocks: forget them.
  std::lock_guard<std::mutex> guard(registry_mutex());
  live_blocks().erase(this);
  for (auto& [path, lib] : registry()) std::erase(lib.blocks, this);
}

void TorchLibraryInit::run() {
  if (lib_) return;
  lib_.emplace(kind_, ns_, key_, file_, line_);
  try {
    init_(*lib_);
  } catch (...) {
    lib_.reset();
    throw;
  }
}

void TorchLibraryInit::reset() { lib_.reset(); }

}  // namespace detail

void load_library(const std::string& path) {
  std::lock_guard<std::mutex> serial(loader_mutex());
  {
    std::lock_guard<std::mutex> guard(registry_mutex());
    auto it = registry().find(path);
    if (it != registry().end() && it->second.handle) return;  // loaded already
  }
  // A library built for PyTorch would map libtorch beside us, register its operators in
  // PyTorch's dispatcher and appear to work: refuse it before dlopen maps anything. (A bare
  // name is searched for by dlopen, not read here: only the name itself is checked.)
  const bool bare_name = path.find('/') == std::string::npos;
  std::vector<std::string> needed;
  if (bare_name) {
    needed.push_back(path);
  } else if (auto listed = elf_needed_libraries(path)) {
    needed = std::move(*listed);
  }
  for (const std::string& name : needed) {
    TORCH_CHECK(!is_pytorch_library_name(name), "Could not load library ", path, ": it ",
                bare_name ? "is" : "is linked against", " PyTorch's ", name,
                ", so it was built for PyTorch, not tessera; loading it would map a second tensor library into "
                "this process and register its operators there. Rebuild it against tessera (Tessera::aten).");
  }
  std::vector<detail::TorchLibraryInit*> captured;
  t_capturing = &captured;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  t_capturing = nullptr;
  TORCH_CHECK(handle != nullptr, "Could not load library ", path, ": ", dlerror());
  std::vector<detail::TorchLibraryInit*> dormant;
  {
    std::lock_guard<std::mutex> guard(registry_mutex());
    auto it = registry().find(path);
    if (it != registry().end()) dormant = it->second.blocks;  // still mapped since its unload
  }
  if (captured.empty() && dormant.empty() && !library_has_blocks(handle)) {
    // Its handle goes; the loader may keep it mapped (then a later call asks again).
    dlclose(handle);
    TORCH_CHECK(false, "Could not load library ", path, ": it registers nothing with tessera (it has no "
                "TORCH_LIBRARY, TORCH_LIBRARY_FRAGMENT or TORCH_LIBRARY_IMPL block)");
  }
  {
    std::lock_guard<std::mutex> guard(registry_mutex());
    LoadedLibrary& lib = registry()[path];
    lib.handle = handle;
    lib.blocks.insert(lib.blocks.end(), captured.begin(), captured.end());
  }
  for (detail::TorchLibraryInit* block : dormant) block->run();
}

void unload_library(const std::string& path) {
  std::lock_guard<std::mutex> serial(loader_mutex());
  void* handle = nullptr;
  std::vector<detail::TorchLibraryInit*> blocks;
  {
    std::lock_guard<std::mutex> guard(registry_mutex());
    auto it = registry().find(path);
    TORCH_CHECK(it != registry().end() && it->second.handle, "library ", path,
                " was not loaded with load_library");
    handle = std::exchange(it->second.handle, nullptr);
    blocks = it->second.blocks;
  }
  // Kernels before the schemas they implement: undo in reverse order of registration.
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) (*b)->reset();
  const bool closed = dlclose(handle) == 0;
  const char* why = closed ? nullptr : dlerror();
  // Still mapped (GNU_UNIQUE, or another dlopen holds it)? Then its blocks live on, dormant.
  void* still = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (still) dlclose(still);
  {
    std::lock_guard<std::mutex> guard(registry_mutex());
    if (!still) registry().erase(path);
  }
  TORCH_CHECK(closed, "Could not unload library ", path, ": ", why);
}

}  // namespace torch::inline tessera
