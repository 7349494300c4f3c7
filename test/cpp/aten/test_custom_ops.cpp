// A custom-op library loaded with torch::load_library: its operators appear, work through
// the dispatcher (typed and boxed), and vanish with their kernels when it is unloaded, even
// when the dynamic loader keeps the library mapped.
#include <aten/aten.h>

#include <dlfcn.h>
#include <sstream>
#include <gtest/gtest.h>

namespace {

TEST(CustomOps, LoadCallUnload) {
  auto& d = c10::Dispatcher::singleton();
  c10::OperatorName scale{"myops::scale", ""};
  ASSERT_FALSE(d.findSchema(scale).has_value());

  torch::load_library(TESSERA_MYOPS_PATH);
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

  torch::unload_library(TESSERA_MYOPS_PATH);
  EXPECT_FALSE(d.findSchema(scale).has_value()) << "unloading must remove the schema";
  // The kernels went too: the entry that remains has no CPU kernel registered.
  EXPECT_EQ(d.dumpState("myops::scale").find("CPU:"), std::string::npos);
}

// A library the loader cannot unmap (here: another dlopen holds it; in a Release build a
// GNU_UNIQUE symbol has the same effect) still loses its registrations on unload, and gets
// them back when loaded again although its static constructors do not run twice.
TEST(CustomOps, UnloadRemovesRegistrationsOfALibraryThatStaysMapped) {
  auto& d = c10::Dispatcher::singleton();
  c10::OperatorName scale{"myops::scale", ""};
  torch::load_library(TESSERA_MYOPS_PATH);
  void* pin = dlopen(TESSERA_MYOPS_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(pin, nullptr) << dlerror();
  ASSERT_TRUE(d.findSchema(scale).has_value());
  torch::unload_library(TESSERA_MYOPS_PATH);
  EXPECT_FALSE(d.findSchema(scale).has_value());
  for (int round = 0; round < 2; ++round) {
    torch::load_library(TESSERA_MYOPS_PATH);
    auto handle = d.findSchema(scale);
    ASSERT_TRUE(handle.has_value()) << "round " << round;
    at::Tensor x = at::empty({2});
    x.fill_(2.0);
    at::Tensor y = handle->typed<at::Tensor(const at::Tensor&, double)>().call(x, 3.0);
    EXPECT_FLOAT_EQ(y.data_ptr<float>()[1], 6.0f);
    EXPECT_NE(d.dumpState("myops::scale").find("CPU:"), std::string::npos);
    torch::unload_library(TESSERA_MYOPS_PATH);
    EXPECT_FALSE(d.findSchema(scale).has_value()) << "round " << round;
  }
  ASSERT_EQ(dlclose(pin), 0);
}

// A custom class of the library: operators return and take its objects (boxed as IValue
// Objects), its methods are found by name, and unloading removes them (the class entry
// stays, so a boxed object never points at a freed type) until the library is loaded again.
TEST(CustomOps, CustomClassObjectsAndMethods) {
  auto& d = c10::Dispatcher::singleton();
  torch::load_library(TESSERA_MYOPS_PATH);
  const c10::CustomClassType* type = c10::find_custom_class("__torch__.torch.classes.myops.Counter");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type, c10::find_custom_class("myops.Counter"));
  {
    c10::Stack stack{c10::IValue(int64_t{5})};
    d.findSchemaOrThrow("myops::make_counter", "").callBoxed(&stack);
    ASSERT_EQ(stack.size(), 1u);
    c10::IValue counter = stack[0];
    ASSERT_TRUE(counter.isObject());
    EXPECT_EQ(&counter.objectType(), type);
    std::ostringstream printed;
    printed << counter;
    EXPECT_EQ(printed.str(), "<__torch__.torch.classes.myops.Counter object>");

    c10::Stack call{counter};
    c10::find_custom_class_method(*type, "get")(call);
    EXPECT_EQ(call.at(0).toInt(), 5);
    call = {counter};
    c10::find_custom_class_method(*type, "doubled")(call);
    ASSERT_TRUE(call.at(0).isObject());
    EXPECT_FALSE(call.at(0).equals(counter));
    EXPECT_TRUE(counter.equals(c10::IValue(counter)));
    c10::Stack get{call.at(0)};
    c10::find_custom_class_method(*type, "get")(get);
    EXPECT_EQ(get.at(0).toInt(), 10);

    at::Tensor x = at::empty({2});
    x.fill_(1.0);
    c10::Stack add{counter, c10::IValue(x)};
    d.findSchemaOrThrow("myops::counter_add", "").callBoxed(&add);
    EXPECT_FLOAT_EQ(add.at(0).toTensor().data_ptr<float>()[1], 6.0f);

    // another class's object, or a tensor, in the counter's slot is a TypeError
    c10::Stack wrong{c10::IValue(x), c10::IValue(x)};
    EXPECT_THROW(d.findSchemaOrThrow("myops::counter_add", "").callBoxed(&wrong), c10::TypeError);
  }
  torch::unload_library(TESSERA_MYOPS_PATH);
  EXPECT_EQ(c10::find_custom_class("myops.Counter"), type);
  EXPECT_FALSE(c10::find_custom_class_method(*type, "get"));
  EXPECT_FALSE(c10::find_custom_class_from_state(*type));
  torch::load_library(TESSERA_MYOPS_PATH);
  EXPECT_TRUE(c10::find_custom_class_method(*type, "get"));
  torch::unload_library(TESSERA_MYOPS_PATH);
}

// A class registered in-process: boxing needs the registration, unboxing checks the class.
struct Registered : torch::CustomClassHolder {};
struct Unregistered : torch::CustomClassHolder {};

TEST(CustomOps, BoxingChecksTheClass) {
  static torch::class_<Registered> registered("tessera_test", "Registered");
  c10::IValue boxed(c10::make_intrusive<Registered>());
  EXPECT_EQ(boxed.objectType().qualified_name, "__torch__.torch.classes.tessera_test.Registered");
  EXPECT_NO_THROW(boxed.to<c10::intrusive_ptr<Registered>>());
  EXPECT_EQ(boxed.use_count(), 1u);
  EXPECT_THROW(c10::IValue(c10::make_intrusive<Unregistered>()), c10::TypeError);
  EXPECT_THROW(boxed.to<c10::intrusive_ptr<Unregistered>>(), c10::TypeError);
  EXPECT_THROW(boxed.toTensor(), c10::TypeError);
  EXPECT_THROW(torch::class_<Registered>("tessera_test", "Other"), c10::Error);
  EXPECT_THROW(torch::class_<Unregistered>("tessera_test", "Registered"), c10::Error);
  // a second live registration of the same class is refused, as torch refuses it
  EXPECT_THROW(torch::class_<Registered>("tessera_test", "Registered"), c10::Error);
}

TEST(CustomOps, LoadErrorsNameTheLibrary) {
  try {
    torch::load_library("/nonexistent/libnothing.so");
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Could not load library /nonexistent/libnothing.so"), std::string::npos);
  }
  EXPECT_THROW(torch::unload_library("/nonexistent/libnothing.so"), c10::Error);
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
