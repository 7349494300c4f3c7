// libFuzzer target for the schema parser: any input either parses or raises c10::Error
// (never crashes, hangs or trips a sanitizer), and what parses prints back to a schema
// that parses to the same thing and prints the same way.
#include <aten/schema/SchemaParser.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<c10::FunctionSchema> parsed;
  try {
    parsed = c10::parseSchema(text);
  } catch (const c10::Error&) {
    return 0;  // refused cleanly
  }
  const c10::FunctionSchema& schema = *parsed;
  const std::string printed = schema.toString();
  try {
    c10::FunctionSchema again = c10::parseSchema(printed);
    if (!(again == schema) || again.toString() != printed) {
      std::fprintf(stderr, "round trip changed the schema:\n  input:   %.*s\n  printed: %s\n  again:   %s\n",
                   static_cast<int>(size), text.data(), printed.c_str(), again.toString().c_str());
      std::abort();
    }
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "printed schema does not parse:\n  input:   %.*s\n  printed: %s\n  error: %s\n",
                 static_cast<int>(size), text.data(), printed.c_str(), e.what());
    std::abort();
  }
  return 0;
}
