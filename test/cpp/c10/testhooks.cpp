// extern "C" entry points into c10 for Python tests that load it next to torch (ctypes).
#include <c10/util/Exception.h>

#include <cstring>

#define TESTHOOK extern "C" __attribute__((visibility("default")))

// Raises a c10::ValueError inside c10 and catches it here, across the library boundary:
// returns 1 when the exception's type survived, and copies its message into buf.
TESTHOOK int tessera_test_error_roundtrip(char* buf, size_t len) {
  try {
    TORCH_CHECK_VALUE(len == 0, "buffer of ", len, " bytes");
  } catch (const c10::ValueError& e) {
    std::strncpy(buf, e.what(), len - 1);
    buf[len - 1] = '\0';
    return 1;
  } catch (...) {
  }
  return 0;
}
