// A custom-op library loaded with dlopen: its operators appear, work through the
// dispatcher (typed and boxed), and vanish with their kernels when it is unloaded.
#include <aten/aten.h>

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace {

TEST(CustomOps, LoadCallUnload) {
  auto& d = c10::Dispatcher::singleton();
  c10::OperatorName scale{"myops::scale", ""};
  ASSERT_FALSE(d.findSchema(scale).has_value());

  void* lib = dlopen(TESSERA_MYOPS_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto handle = d.findSchema(scale);
  ASSERT_TRUE(handle.has_value());
  EXPECT_EQ(handle->schema().toString(), "myops::scale(Tensor x, float factor) -> Tensor");

  at::Tensor x = at::empty({3});
  x.fill_(1.5);
  at::Tensor y = handle->typed<at::Tensor(const at::Tensor&, double)>().call(x, 2.0);
  EXPECT_FLOAT_EQ(y.data_ptr<float>()[2], 3.0f);

  c10::Stack stack{c10::IValue(x)};
  d.findSchemaOrThrow("myops::total", "").callBoxed(&stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_DOUBLE_EQ(stack[0].toDouble(), 4.5);

  std::string dump = d.dumpState("myops::scale");
  EXPECT_NE(dump.find("myops.cpp"), std::string::npos) << dump;

  ASSERT_EQ(dlclose(lib), 0);
  EXPECT_FALSE(d.findSchema(scale).has_value()) << "unloading must remove the schema";
  // The kernels went too: the entry that remains has no CPU kernel registered.
  EXPECT_EQ(d.dumpState("myops::scale").find("CPU:"), std::string::npos);
}

TEST(CustomOps, EveryNativeOperatorIsRegistered) {
  // Static registration in libaten survives linking: all ops.yaml operators are present.
  auto names = c10::Dispatcher::singleton().allOperatorNames();
  auto has = [&](const char* n, const char* o) {
    return std::find(names.begin(), names.end(), c10::OperatorName{n, o}) != names.end();
  };
  for (auto [n, o] : std::vector<std::pair<const char*, const char*>>{
           {"aten::empty", "memory_format"}, {"aten::empty_strided", ""}, {"aten::fill_", "Scalar"},
           {"aten::copy_", ""}, {"aten::add", "Tensor"}, {"aten::add", "out"}, {"aten::add_", "Tensor"},
           {"aten::mul", "Tensor"}, {"aten::view", ""}, {"aten::as_strided", ""}}) {
    EXPECT_TRUE(has(n, o)) << n << "." << o;
  }
}

}  // namespace
