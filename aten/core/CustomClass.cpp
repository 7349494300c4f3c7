#include <aten/core/CustomClass.h>

#include <c10/util/Demangle.h>

#include <dlfcn.h>

#include <memory>
#include <mutex>

namespace c10::inline tessera {

namespace {

constexpr std::string_view kPrefix = "__torch__.torch.classes.";

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<CustomClassType>, std::less<>> by_name;
  std::map<std::string, CustomClassType*, std::less<>> by_cpp_type;
};

Registry& registry() {
  static auto* r = new Registry();  // leaked: objects may be destroyed during static teardown
  return *r;
}

// Keeps the shared object holding `code` mapped for good (RTLD_NODELETE): unloading it
// would leave live objects with a destructor and a vtable in unmapped memory.
void keep_mapped(const void* code) {
  Dl_info info;
  if (code == nullptr || dladdr(code, &info) == 0 || info.dli_fname == nullptr) return;
  if (void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
    dlclose(handle);  // the flag stays; only the reference taken here goes
  }
}

}  // namespace

CustomClassType& register_custom_class(const std::string& ns, const std::string& name, const std::type_info& type,
                                       const void* code) {
  TORCH_CHECK(!ns.empty() && !name.empty() && ns.find('.') == std::string::npos && name.find('.') == std::string::npos,
              "a custom class is named by a namespace and a name without dots (got '", ns, "', '", name, "')");
  std::string qualified = std::string(kPrefix) + ns + "." + name;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  keep_mapped(code);
  if (auto it = r.by_name.find(qualified); it != r.by_name.end()) {
    CustomClassType& existing = *it->second;
    TORCH_CHECK(existing.cpp_type == type.name(), "Custom class with name ", qualified,
                " is already registered for another C++ class (", c10::demangle(existing.cpp_type.c_str()), ")");
    TORCH_CHECK(existing.owners == 0, "Custom class with name ", qualified, " is already registered");
    existing.owners = 1;
    return existing;
  }
  TORCH_CHECK(!r.by_cpp_type.contains(type.name()), "the C++ class ", c10::demangle(type.name()),
              " is already registered as ", r.by_cpp_type.find(type.name())->second->qualified_name);
  auto entry = std::make_unique<CustomClassType>(CustomClassType{qualified, type.name(), 1, {}, {}});
  CustomClassType* raw = entry.get();
  r.by_name.emplace(std::move(qualified), std::move(entry));
  r.by_cpp_type.emplace(type.name(), raw);
  return *raw;
}

// The callables replaced below are destroyed after the lock is released: their captures'
// destructors may box objects, which takes the lock.
void add_custom_class_method(CustomClassType& type, std::string name, BoxedMethod method) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  type.methods[std::move(name)].swap(method);
}

void set_custom_class_from_state(CustomClassType& type, BoxedMethod from_state) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  type.from_state.swap(from_state);
}

void remove_custom_class_methods(CustomClassType& type) {
  Registry& r = registry();
  std::map<std::string, BoxedMethod, std::less<>> gone;
  BoxedMethod gone_constructor;
  {  // destroyed outside the lock, as above
    std::lock_guard<std::mutex> lock(r.mutex);
    gone.swap(type.methods);
    gone_constructor.swap(type.from_state);
    type.owners = 0;
  }
}

const CustomClassType* find_custom_class(std::string_view qualified_name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(qualified_name);
  if (it == r.by_name.end()) it = r.by_name.find(std::string(kPrefix) + std::string(qualified_name));
  return it == r.by_name.end() ? nullptr : it->second.get();
}

BoxedMethod find_custom_class_method(const CustomClassType& type, std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = type.methods.find(name);
  return it == type.methods.end() ? BoxedMethod() : it->second;
}

BoxedMethod find_custom_class_from_state(const CustomClassType& type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return type.from_state;
}

const CustomClassType& custom_class_of(const std::type_info& type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_cpp_type.find(std::string_view(type.name()));
  if (it == r.by_cpp_type.end()) {
    TORCH_ERROR_WITH(TypeError, "the C++ class ", c10::demangle(type.name()),
                     " is not a registered custom class (register it with torch::class_)");
  }
  return *it->second;
}

}  // namespace c10::inline tessera
