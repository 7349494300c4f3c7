// The error types and check macros of Tessera.
// TORCH_CHECK reports a user's mistake (its arguments are concatenated into the message
// as PyTorch's are); TORCH_INTERNAL_ASSERT reports a bug in Tessera itself. Each class
// below maps to one Python exception: Error -> RuntimeError, IndexError -> IndexError,
// ValueError -> ValueError, TypeError -> TypeError, NotImplementedError ->
// NotImplementedError, OutOfMemoryError -> RuntimeError (torch's OutOfMemoryError).
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/StringUtil.h>

#include <exception>
#include <string>
#include <vector>

namespace c10::inline tessera {

struct SourceLocation {
  const char* function;
  const char* file;
  int line;
};

class C10_API Error : public std::exception {
 public:
  Error(std::string msg, SourceLocation where);
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  ~Error() override;

  // The message followed by any context lines added while the error propagated.
  const char* what() const noexcept override { return what_.c_str(); }
  // The message alone, as first raised.
  const std::string& msg() const { return msg_; }
  const std::vector<std::string>& context() const { return context_; }
  const SourceLocation& where() const { return where_; }

  // Appends a line of context ("while calling aten::add ...") to what().
  void add_context(std::string line);

 private:
  void refresh_what();

  std::string msg_;
  std::vector<std::string> context_;
  std::string what_;
  SourceLocation where_;
};

#define TESSERA_DECLARE_ERROR(Name)          \
  class C10_API Name : public Error {        \
   public:                                   \
    using Error::Error;                      \
    ~Name() override;                        \
  }
TESSERA_DECLARE_ERROR(IndexError);
TESSERA_DECLARE_ERROR(ValueError);
TESSERA_DECLARE_ERROR(TypeError);
TESSERA_DECLARE_ERROR(NotImplementedError);
TESSERA_DECLARE_ERROR(OutOfMemoryError);
#undef TESSERA_DECLARE_ERROR

namespace detail {

// Out of line and cold so that a check costs one compare and branch at its call site.
template <typename E>
[[noreturn]] C10_NOINLINE __attribute__((cold)) void throw_error(SourceLocation where, std::string msg) {
  throw E(std::move(msg), where);
}

// The message of a failed check: the caller's arguments, or a default naming the condition.
inline std::string check_message(const char* condition) {
  return str("Expected ", condition, " to be true, but got false.");
}
template <typename... Args>
std::string check_message(const char* /*condition*/, const Args&... args) {
  return str(args...);
}

[[noreturn]] C10_API void internal_assert_fail(SourceLocation where, const char* condition, std::string msg);

}  // namespace detail
}  // namespace c10::inline tessera

#define C10_HERE_ ::c10::SourceLocation{__func__, __FILE__, __LINE__}

#define TORCH_CHECK_WITH(error_type, cond, ...)                                              \
  do {                                                                                       \
    if (C10_UNLIKELY(!(cond))) {                                                             \
      ::c10::detail::throw_error<::c10::error_type>(                                         \
          C10_HERE_, ::c10::detail::check_message(#cond __VA_OPT__(, ) __VA_ARGS__));       \
    }                                                                                        \
  } while (false)

#define TORCH_CHECK(cond, ...) TORCH_CHECK_WITH(Error, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) TORCH_CHECK_WITH(IndexError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) TORCH_CHECK_WITH(ValueError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) TORCH_CHECK_WITH(TypeError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) \
  TORCH_CHECK_WITH(NotImplementedError, cond __VA_OPT__(, ) __VA_ARGS__)

// Raises unconditionally; the message is the concatenated arguments.
#define TORCH_ERROR_WITH(error_type, ...) \
  ::c10::detail::throw_error<::c10::error_type>(C10_HERE_, ::c10::str(__VA_ARGS__))

// An invariant of Tessera itself; failure is our bug, and the message says where.
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                 \
  do {                                                                                   \
    if (C10_UNLIKELY(!(cond))) {                                                         \
      ::c10::detail::internal_assert_fail(C10_HERE_, #cond, ::c10::str(__VA_ARGS__));    \
    }                                                                                    \
  } while (false)
