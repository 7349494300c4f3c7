#include <aten/library.h>
#include <aten/ops/RedispatchFunctions.h>

#include "tensor_factory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

using at::Tensor;
using c10::DispatchKey;
using tessera_test::make_tensor;

std::string g_ran;  // which kernel ran last

Tensor twice_cpu(const Tensor& a, const Tensor& b) {
  g_ran = "cpu";
  return a;
}

TORCH_LIBRARY(tdisp, m) {
  m.def("pick(Tensor a, Tensor b) -> Tensor");
  m.def("scaled(Tensor a, float s, *, int repeat=1) -> float");
  m.def("implicit(Tensor a) -> Tensor");
  m.def("explicit_(Tensor a) -> Tensor");
  m.def("boxed_only(Tensor a, int k) -> int");
  m.def("inplace_(Tensor(a!) self) -> Tensor(a!)");
  m.def("with_keys(Tensor a) -> Tensor");
  m.def("nothing(int n) -> int");
  m.def("composite_nothing(int n) -> int");
  m.def("pair_out(Tensor a, *, Tensor(a!) v, Tensor(b!) i) -> (Tensor(a!) v, Tensor(b!) i)");
  m.def("pair_unboxed(Tensor a, *, Tensor(a!) v, Tensor(b!) i) -> (Tensor(a!) v, Tensor(b!) i)");
}

TORCH_LIBRARY_IMPL(tdisp, CPU, m) {
  m.impl("pick", TORCH_FN(twice_cpu));
  m.impl("scaled", [](const Tensor& a, double s, int64_t repeat) { return s * static_cast<double>(repeat * a.numel()); });
  m.impl("with_keys", [](c10::DispatchKeySet ks, const Tensor& a) {
    g_ran = c10::toString(ks.highestPriorityTypeId());
    return a;
  });
}

TORCH_LIBRARY_IMPL(tdisp, Meta, m) {
  m.impl("pick", [](const Tensor& a, const Tensor& b) {
    g_ran = "meta";
    return b;
  });
}

TORCH_LIBRARY_IMPL(tdisp, CompositeImplicitAutograd, m) {
  m.impl("implicit", [](const Tensor& a) {
    g_ran = "implicit";
    return a;
  });
}

TORCH_LIBRARY_IMPL(tdisp, CompositeExplicitAutograd, m) {
  m.impl("explicit_", [](const Tensor& a) {
    g_ran = "explicit";
    return a;
  });
}

void boxed_only_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet, c10::Stack* stack) {
  int64_t k = c10::pop(*stack).toInt();
  Tensor a = c10::pop(*stack).toTensor();
  c10::push(*stack, a.numel() * k + static_cast<int64_t>(op.schema().arguments().size()));
}

TORCH_LIBRARY_IMPL(tdisp, CPU, m) {
  m.impl("boxed_only", torch::CppFunction::makeFromBoxedFunction(&boxed_only_kernel));
  m.impl("inplace_", torch::CppFunction::makeFromBoxedFunction([](const c10::OperatorHandle&, c10::DispatchKeySet,
                                                                   c10::Stack* stack) {
    g_ran = "inplace";  // leaves self on the stack as the result
  }));
}

// Several out= tensors: a boxed-only kernel (leaves nothing useful on the stack; the
// unboxed caller gets its own Tensor& arguments back) and an unboxed one.
TORCH_LIBRARY_IMPL(tdisp, CPU, m) {
  m.impl("pair_out", torch::CppFunction::makeFromBoxedFunction([](const c10::OperatorHandle&, c10::DispatchKeySet,
                                                                    c10::Stack* stack) { g_ran = "pair_out"; }));
  m.impl("pair_unboxed", [](const Tensor& a, Tensor& v, Tensor& i) -> std::tuple<Tensor&, Tensor&> {
    g_ran = "pair_unboxed";
    return {v, i};
  });
}

// A call without tensor arguments reaches a composite kernel, as in torch.
TORCH_LIBRARY_IMPL(tdisp, CompositeImplicitAutograd, m) {
  m.impl("composite_nothing", [](int64_t n) -> int64_t { return n + 1; });
}

c10::OperatorHandle op(const char* name, const char* overload = "") {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

TEST(Dispatcher, RoutesByBackendOfTheTensorArguments) {
  auto pick = op("tdisp::pick").typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor a = make_tensor({2}), b = make_tensor({3});
  EXPECT_TRUE(pick.call(a, b).is_same(a));
  EXPECT_EQ(g_ran, "cpu");
  Tensor ma = make_tensor({2}, c10::kFloat, c10::DeviceType::Meta), mb = make_tensor({3}, c10::kFloat, c10::DeviceType::Meta);
  EXPECT_TRUE(pick.call(ma, mb).is_same(mb));
  EXPECT_EQ(g_ran, "meta");
}

TEST(Dispatcher, MissingKernelSpeaksTheUsersTerms) {
  auto pick = op("tdisp::pick").typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor s = make_tensor({2}, c10::kFloat, c10::DeviceType::CPU, c10::kSparse);
  try {
    pick.call(s, s);
    FAIL() << "sparse tensors have no kernel";
  } catch (const c10::NotImplementedError& e) {
    EXPECT_STREQ(e.what(),
                 "tdisp::pick has no kernel for sparse_coo tensors on cpu; it has kernels for strided cpu and meta tensors");
  }
  auto nothing = op("tdisp::nothing").typed<int64_t(int64_t)>();
  try {
    nothing.call(3);
    FAIL();
  } catch (const c10::NotImplementedError& e) {
    EXPECT_STREQ(e.what(),
                 "tdisp::nothing has no kernel for a call without tensor arguments; it has no kernel for any backend");
  }
}

TEST(Dispatcher, UnboxedCallPassesScalarsAndDefaultsNothing) {
  auto scaled = op("tdisp::scaled").typed<double(const Tensor&, double, int64_t)>();
  EXPECT_DOUBLE_EQ(scaled.call(make_tensor({4}), 0.5, 3), 6.0);
}

TEST(Dispatcher, BoxedCallOfAnUnboxedKernel) {
  c10::Stack stack;
  c10::push(stack, make_tensor({4}), 0.5, int64_t{3});
  op("tdisp::scaled").callBoxed(&stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_DOUBLE_EQ(stack[0].toDouble(), 6.0);
}

TEST(Dispatcher, BoxedOnlyKernelCallableBothWays) {
  c10::Stack stack;
  c10::push(stack, make_tensor({5}), int64_t{2});
  op("tdisp::boxed_only").callBoxed(&stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(stack[0].toInt(), 12);  // 5 * 2 + two arguments in the schema
  auto typed = op("tdisp::boxed_only").typed<int64_t(const Tensor&, int64_t)>();
  EXPECT_EQ(typed.call(make_tensor({5}), 3), 17);
}

TEST(Dispatcher, BoxedOnlyInPlaceKernelReturnsSelfByReference) {
  auto inplace = op("tdisp::inplace_").typed<Tensor&(Tensor&)>();
  Tensor a = make_tensor({2});
  Tensor& r = inplace.call(a);
  EXPECT_EQ(&r, &a);
  EXPECT_EQ(g_ran, "inplace");
}

TEST(Dispatcher, SeveralOutTensorsComeBackByReference) {
  Tensor a = make_tensor({2}), v = make_tensor({2}), i = make_tensor({2});
  auto boxed_only = op("tdisp::pair_out").typed<std::tuple<Tensor&, Tensor&>(const Tensor&, Tensor&, Tensor&)>();
  auto r = boxed_only.call(a, v, i);
  EXPECT_EQ(&std::get<0>(r), &v);
  EXPECT_EQ(&std::get<1>(r), &i);
  EXPECT_EQ(g_ran, "pair_out");
  // the boxed call of an unboxed kernel keeps the tensors (not references to its arguments)
  c10::Stack stack;
  c10::push(stack, a, v, i);
  op("tdisp::pair_unboxed").callBoxed(&stack);
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_TRUE(stack[0].toTensor().is_same(v));
  EXPECT_TRUE(stack[1].toTensor().is_same(i));
  EXPECT_EQ(g_ran, "pair_unboxed");
}

TEST(Dispatcher, CallWithoutTensorsTakesACompositeKernel) {
  EXPECT_EQ(op("tdisp::composite_nothing").typed<int64_t(int64_t)>().call(4), 5);
}

TEST(Dispatcher, KernelMayTakeTheKeySet) {
  auto with_keys = op("tdisp::with_keys").typed<Tensor(const Tensor&)>();
  with_keys.call(make_tensor({1}));
  // Autograd and ADInplaceOrView fell through, so the kernel sees CPU on top.
  EXPECT_EQ(g_ran, "CPU");
}

TEST(Dispatcher, AliasKeysFillBackendSlots) {
  auto implicit = op("tdisp::implicit").typed<Tensor(const Tensor&)>();
  implicit.call(make_tensor({1}));
  EXPECT_EQ(g_ran, "implicit");
  implicit.call(make_tensor({1}, c10::kFloat, c10::DeviceType::Meta));
  EXPECT_EQ(g_ran, "implicit");
  auto explicit_ = op("tdisp::explicit_").typed<Tensor(const Tensor&)>();
  explicit_.call(make_tensor({1}, c10::kFloat, c10::DeviceType::Meta));
  EXPECT_EQ(g_ran, "explicit");
}

TEST(Dispatcher, TlsExcludeAndIncludeSteerTheCall) {
  auto pick = op("tdisp::pick").typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor a = make_tensor({2});
  {
    // Excluding CPU leaves no backend: the call reports the autograd-free remainder.
    c10::impl::ExcludeDispatchKeyGuard no_cpu(DispatchKey::CPU);
    EXPECT_THROW(pick.call(a, a), c10::NotImplementedError);
  }
  {
    // Meta ranks above CPU, so forcing it in sends CPU tensors to the meta kernel.
    c10::impl::IncludeDispatchKeyGuard meta(DispatchKey::Meta);
    pick.call(a, a);
    EXPECT_EQ(g_ran, "meta");
  }
}

TEST(Dispatcher, SignatureMismatchIsAnError) {
  EXPECT_THROW((op("tdisp::pick").typed<Tensor(const Tensor&)>()), c10::Error);
}

TEST(Dispatcher, DuplicateKernelNamesBothSites) {
  try {
    torch::Library lib(torch::Library::IMPL, "tdisp", DispatchKey::CPU, "dup_site.cpp", 7);
    lib.impl("pick", TORCH_FN(twice_cpu));
    FAIL();
  } catch (const c10::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("test_dispatcher.cpp:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dup_site.cpp:7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tdisp::pick"), std::string::npos) << msg;
  }
  // The failed registration left the original kernel in place.
  auto pick = op("tdisp::pick").typed<Tensor(const Tensor&, const Tensor&)>();
  pick.call(make_tensor({1}), make_tensor({1}));
  EXPECT_EQ(g_ran, "cpu");
}

TEST(Dispatcher, DuplicateDefAndLibraryAreErrors) {
  EXPECT_THROW(torch::Library(torch::Library::DEF, "tdisp", std::nullopt, "again.cpp", 1), c10::Error);
  torch::Library frag(torch::Library::FRAGMENT, "tdisp", std::nullopt, "frag.cpp", 2);
  try {
    frag.def("pick(Tensor a, Tensor b) -> Tensor");
    FAIL();
  } catch (const c10::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("frag.cpp:2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("test_dispatcher.cpp"), std::string::npos) << msg;
  }
}

TEST(Dispatcher, RegistrationIsUndoneWhenTheLibraryDies) {
  c10::OperatorName name{"tscoped::f", ""};
  {
    torch::Library lib(torch::Library::DEF, "tscoped", std::nullopt, "scoped.cpp", 1);
    lib.def("f(Tensor x) -> Tensor", [](const Tensor& x) { return x; });
    auto handle = c10::Dispatcher::singleton().findSchema(name);
    ASSERT_TRUE(handle.has_value());
    Tensor t = make_tensor({1});
    EXPECT_TRUE(handle->typed<Tensor(const Tensor&)>().call(t).is_same(t));
  }
  EXPECT_FALSE(c10::Dispatcher::singleton().findSchema(name).has_value());
  // And the namespace can be claimed again.
  torch::Library again(torch::Library::DEF, "tscoped", std::nullopt, "scoped.cpp", 2);
}

TEST(Dispatcher, BoxedFallbackSeesEveryOpAndRedispatches) {
  static std::vector<std::string> seen;
  seen.clear();
  // (PythonTLSSnapshot: a wrapper key no library registers a fallback for)
  torch::Library lib(torch::Library::IMPL, "_", DispatchKey::PythonTLSSnapshot, "snapshot.cpp", 3);
  lib.fallback(torch::CppFunction::makeFromBoxedFunction(
      [](const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack) {
        seen.push_back(op.operator_name().str());
        op.redispatchBoxed(ks - c10::DispatchKeySet(DispatchKey::PythonTLSSnapshot), stack);
      }));
  auto pick = op("tdisp::pick").typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor a = make_tensor({1});
  pick.call(a, a);
  EXPECT_TRUE(seen.empty());  // the key is not in the key set unless included
  {
    c10::impl::IncludeDispatchKeyGuard include(DispatchKey::PythonTLSSnapshot);
    EXPECT_TRUE(pick.call(a, a).is_same(a));
  }
  EXPECT_EQ(seen, std::vector<std::string>{"tdisp::pick"});
  EXPECT_EQ(g_ran, "cpu");
}

TEST(Dispatcher, DumpListsEachRegisteredKey) {
  std::string dump = c10::Dispatcher::singleton().dumpState("tdisp::pick");
  EXPECT_NE(dump.find("name: tdisp::pick\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("schema: tdisp::pick(Tensor a, Tensor b) -> Tensor\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nCPU: registered at "), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nMeta: registered at "), std::string::npos) << dump;
  EXPECT_NE(dump.find("test_dispatcher.cpp:"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("CUDA:"), std::string::npos) << dump;
  EXPECT_THROW(c10::Dispatcher::singleton().dumpState("tdisp::no_such_op"), c10::Error);
}

TEST(Dispatcher, TorchDispatchPicksTheKeyInsideAnyBlock) {
  torch::Library lib(torch::Library::DEF, "tkeyed", std::nullopt, "keyed.cpp", 1);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", torch::dispatch(DispatchKey::Meta, [](const Tensor& x) {
    g_ran = "keyed-meta";
    return x;
  }));
  lib.impl("f", torch::dispatch(c10::DeviceType::CPU, [](const Tensor& x) {
    g_ran = "keyed-cpu";
    return x;
  }));
  auto f = op("tkeyed::f").typed<Tensor(const Tensor&)>();
  f.call(make_tensor({1}, c10::kFloat, c10::DeviceType::Meta));
  EXPECT_EQ(g_ran, "keyed-meta");
  f.call(make_tensor({1}));
  EXPECT_EQ(g_ran, "keyed-cpu");
  // Inside a TORCH_LIBRARY_IMPL block for one key, a kernel for another key is an error.
  torch::Library cpu_block(torch::Library::IMPL, "tkeyed", DispatchKey::CPU, "keyed.cpp", 2);
  EXPECT_THROW(cpu_block.impl("f", torch::dispatch(DispatchKey::Meta, [](const Tensor& x) { return x; })), c10::Error);
}

TEST(Dispatcher, PerOperatorFallthroughSkipsToTheNextKey) {
  torch::Library lib(torch::Library::DEF, "tfall", std::nullopt, "fall.cpp", 1);
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", torch::dispatch(DispatchKey::CPU, [](const Tensor& x) {
    g_ran = "fall-cpu";
    return x;
  }));
  // Force Meta in (it outranks CPU), then make it fall through for this op only.
  c10::impl::IncludeDispatchKeyGuard meta(DispatchKey::Meta);
  auto f = op("tfall::f").typed<Tensor(const Tensor&)>();
  EXPECT_THROW(f.call(make_tensor({1})), c10::NotImplementedError);
  lib.impl("f", torch::dispatch(DispatchKey::Meta, torch::CppFunction::makeFallthrough()));
  f.call(make_tensor({1}));
  EXPECT_EQ(g_ran, "fall-cpu");
  EXPECT_NE(c10::Dispatcher::singleton().dumpState("tfall::f").find("Meta: registered at fall.cpp:1 [fallthrough]"),
            std::string::npos);
}

TEST(Dispatcher, RedispatchContinuesBelowTheCallersKey) {
  // A kernel on Profiler records the call and redispatches below itself with the keys it got.
  static int profiled = 0;
  torch::Library lib(torch::Library::IMPL, "tdisp", DispatchKey::Profiler, "redispatch.cpp", 1);
  lib.impl("with_keys", [](c10::DispatchKeySet ks, const Tensor& a) {
    ++profiled;
    auto below = c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, DispatchKey::Profiler);
    return op("tdisp::with_keys").typed<Tensor(const Tensor&)>().redispatch(ks & below, a);
  });
  c10::impl::IncludeDispatchKeyGuard profile(DispatchKey::Profiler);
  op("tdisp::with_keys").typed<Tensor(const Tensor&)>().call(make_tensor({1}));
  EXPECT_EQ(profiled, 1);
  EXPECT_EQ(g_ran, "CPU");  // the CPU kernel saw the key set the redispatch passed down
  // The generated at::redispatch functions do the same for native operators.
  Tensor a = make_tensor({2});
  Tensor r = at::redispatch::add_Tensor(c10::DispatchKeySet(DispatchKey::Meta), a, a, 1);
  EXPECT_TRUE(r.is_meta());  // Meta's kernel ran although the tensors are on the CPU
}

TEST(Dispatcher, CallsRaceSafelyWithRegistration) {
  auto implicit = op("tdisp::implicit").typed<Tensor(const Tensor&)>();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> calls{0};
  std::thread caller([&] {
    Tensor t = make_tensor({1});
    while (!stop.load()) {
      implicit.call(t);
      calls.fetch_add(1);
    }
  });
  while (calls.load() == 0) std::this_thread::yield();
  for (int i = 0; i < 2000; ++i) {
    torch::Library lib(torch::Library::IMPL, "tdisp", DispatchKey::Meta, "race.cpp", i);
    lib.impl("implicit", [](const Tensor& a) { return a; });
  }
  int64_t during = calls.load();
  while (calls.load() < during + 100) std::this_thread::yield();
  stop = true;
  caller.join();
  EXPECT_GT(calls.load(), 100);
}

}  // namespace
