// Autocast from C++ (aten/autocast/Autocast.h), as an app linking libaten uses it: the
// thread's flag routes listed operators through their policy kernels (mm to bfloat16,
// losses to float32, stack promoted), the rest run as called, float64 is never cast, the
// state is per thread and the weight cache lives until cleared.
#include <aten/aten.h>
#include <aten/autocast/Autocast.h>

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace {

namespace ac = at::autocast;

at::Tensor filled(std::vector<int64_t> sizes, double v, c10::ScalarType t = at::kFloat) {
  at::Tensor x = at::empty(sizes, at::TensorOptions(t));
  x.fill_(v);
  return x;
}

// Turns autocast on for a scope, as the Python context manager does.
struct Region {
  explicit Region(c10::ScalarType dtype) : prev_enabled(ac::is_cpu_enabled()), prev_dtype(ac::get_cpu_dtype()) {
    ac::set_cpu_enabled(true);
    ac::set_cpu_dtype(dtype);
    ac::increment_nesting();
  }
  ~Region() {
    if (ac::decrement_nesting() == 0) ac::clear_cache();
    ac::set_cpu_enabled(prev_enabled);
    ac::set_cpu_dtype(prev_dtype);
  }
  bool prev_enabled;
  c10::ScalarType prev_dtype;
};

TEST(Autocast, PoliciesFromCpp) {
  const at::Tensor a = filled({2, 3}, 0.5), b = filled({3, 4}, 2.0);
  EXPECT_FALSE(ac::is_cpu_enabled());
  EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
  {
    Region on(at::kBFloat16);
    const at::Tensor p = at::mm(a, b);
    EXPECT_EQ(p.scalar_type(), at::kBFloat16);
    EXPECT_EQ(p.sum().item().toDouble(), 2 * 4 * 3.0);
    EXPECT_EQ(at::mm(a.to(at::kDouble), b.to(at::kDouble)).scalar_type(), at::kDouble);
    EXPECT_EQ(at::add(a, a).scalar_type(), at::kFloat);  // on no list
    EXPECT_EQ(at::stack({a.to(at::kBFloat16), a}).scalar_type(), at::kFloat);
    EXPECT_EQ(at::stack({a.to(at::kBFloat16), a.to(at::kBFloat16)}).scalar_type(), at::kBFloat16);
    EXPECT_THROW(at::stack({a.to(at::kHalf), a.to(at::kHalf)}), c10::Error);
    EXPECT_EQ(at::mse_loss(a.to(at::kBFloat16), a.to(at::kBFloat16)).scalar_type(), at::kFloat);
  }
  {
    Region on(at::kHalf);
    EXPECT_EQ(at::mm(a, b).scalar_type(), at::kHalf);
  }
  EXPECT_FALSE(ac::is_cpu_enabled());
  EXPECT_EQ(ac::get_cpu_dtype(), at::kBFloat16);
  EXPECT_THROW(ac::set_cpu_dtype(at::kFloat), c10::Error);
}

TEST(Autocast, StateIsPerThread) {
  Region on(at::kBFloat16);
  bool other_enabled = true;
  c10::ScalarType other_result = at::kBFloat16;
  std::thread t([&] {
    other_enabled = ac::is_cpu_enabled();
    other_result = at::mm(filled({2, 2}, 1.0), filled({2, 2}, 1.0)).scalar_type();
  });
  t.join();
  EXPECT_FALSE(other_enabled);
  EXPECT_EQ(other_result, at::kFloat);
}

}  // namespace
