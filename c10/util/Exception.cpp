#include <c10/util/Exception.h>

namespace c10::inline tessera {

Error::Error(std::string msg, SourceLocation where) : msg_(std::move(msg)), where_(where) {
  refresh_what();
}
Error::~Error() = default;

void Error::add_context(std::string line) {
  context_.push_back(std::move(line));
  refresh_what();
}

void Error::refresh_what() {
  what_ = msg_;
  for (const auto& line : context_) {
    what_ += '\n';
    what_ += line;
  }
}

// Out-of-line destructors anchor each class's vtable and typeinfo in this library, so a
// catch in another library (the Python extension, a custom-op library) matches it.
IndexError::~IndexError() = default;
ValueError::~ValueError() = default;
TypeError::~TypeError() = default;
NotImplementedError::~NotImplementedError() = default;
OutOfMemoryError::~OutOfMemoryError() = default;

namespace detail {
void internal_assert_fail(SourceLocation where, const char* condition, std::string msg) {
  std::string full = str(where.function, " INTERNAL ASSERT FAILED at \"", where.file, "\":", where.line,
                         ", please report a bug to Tessera. Expected ", condition, " to be true.");
  if (!msg.empty()) full += " " + msg;
  throw Error(std::move(full), where);
}
}  // namespace detail

}  // namespace c10::inline tessera
