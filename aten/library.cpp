#include <aten/library.h>
#include <aten/schema/SchemaParser.h>

namespace torch::inline tessera {

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> key, const char* file, uint32_t line)
    : kind_(kind), ns_(std::move(ns)), key_(key), file_(file), line_(line) {
  TORCH_CHECK(kind == IMPL || ns_ != "_", "the namespace '_' (every namespace) is only for TORCH_LIBRARY_IMPL");
  if (kind == DEF) registrations_.push_back(c10::Dispatcher::singleton().registerLibrary(ns_, site()));
}

Library::~Library() {
  // Undo in reverse order: kernels before the schemas they implement.
  while (!registrations_.empty()) registrations_.pop_back();
}

std::string Library::site() const { return c10::str(file_, ":", line_); }

std::string Library::qualifiedName(std::string_view name) const {
  TORCH_CHECK(ns_ != "_", "operators registered in TORCH_LIBRARY_IMPL(_, ...) must be qualified: got '", name, "'");
  if (name.find("::") != std::string_view::npos) {
    TORCH_CHECK(name.substr(0, name.find("::")) == ns_, "the library for namespace ", ns_,
                " cannot register operator ", name, " of another namespace");
    return std::string(name);
  }
  return ns_ + "::" + std::string(name);
}

std::string Library::schemaName(const char* schema) {
  std::string_view s(schema);
  return std::string(s.substr(0, s.find('(')));
}

Library& Library::def(const char* schema) {
  TORCH_CHECK(kind_ != IMPL, "def() is for TORCH_LIBRARY and TORCH_LIBRARY_FRAGMENT, not TORCH_LIBRARY_IMPL (",
              site(), ")");
  std::string text(schema);
  std::string name = schemaName(schema);
  if (name.find("::") == std::string::npos) text = ns_ + "::" + text;
  c10::FunctionSchema parsed = c10::parseSchema(text);
  TORCH_CHECK(parsed.ns() == ns_, "the library for namespace ", ns_,
              " cannot define operator ", parsed.operator_name(), " of another namespace");
  registrations_.push_back(c10::Dispatcher::singleton().registerDef(std::move(parsed), site()));
  return *this;
}

Library& Library::implFor(std::string qualified, CppFunction&& f) {
  std::optional<DispatchKey> key = f.key_ ? f.key_ : key_;
  TORCH_CHECK(!(f.key_ && key_ && *f.key_ != *key_), "impl() in a TORCH_LIBRARY_IMPL block for ", *key_,
              " was given a kernel for ", *f.key_, " (", site(), ")");
  registrations_.push_back(c10::Dispatcher::singleton().registerImpl(c10::parseOperatorName(qualified), key,
                                                                     std::move(f.kernel_), site()));
  return *this;
}

Library& Library::fallback(CppFunction&& f) {
  TORCH_CHECK(kind_ == IMPL && key_.has_value(), "fallback() is for TORCH_LIBRARY_IMPL blocks (", site(), ")");
  TORCH_CHECK(ns_ == "_", "fallbacks apply to every namespace: register them in TORCH_LIBRARY_IMPL(_, ", *key_,
              ", m), not for namespace ", ns_);
  registrations_.push_back(c10::Dispatcher::singleton().registerFallback(*key_, std::move(f.kernel_), site()));
  return *this;
}

}  // namespace torch::inline tessera
