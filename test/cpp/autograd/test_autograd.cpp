// The autograd library from C++: Tensor::backward and torch::autograd::grad on small
// graphs with hand-derived gradients, custom Functions (AutogradContext's whole API),
// backward on independent graphs from several threads, and a custom operator's Autograd
// kernel registered with TORCH_LIBRARY_IMPL(myops, Autograd, m) in a loaded library.
#include <aten/aten.h>
#include <autograd/autograd.h>
#include <autograd/custom_function.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor vec(std::vector<double> values, bool requires_grad = false) {
  at::Tensor t = at::empty({static_cast<int64_t>(values.size())}, at::TensorOptions(at::kDouble));
  for (size_t i = 0; i < values.size(); ++i) t.data_ptr<double>()[i] = values[i];
  t.set_requires_grad(requires_grad);
  return t;
}

std::vector<double> values(const at::Tensor& t) {
  at::Tensor c = at::empty(t.sizes(), at::TensorOptions(at::kDouble));
  c.copy_(t);
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

void expect_values(const at::Tensor& t, std::vector<double> expected) {
  ASSERT_TRUE(t.defined());
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12) << "element " << i;
}

TEST(Engine, BackwardAccumulatesIntoLeaves) {
  at::Tensor x = vec({1.0, -2.0, 0.5}, true);
  // y = sum(x * x + 3 x): dy/dx = 2x + 3
  at::Tensor y = at::sum(x * x + x * 3.0);
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward0");
  y.backward();
  expect_values(x.grad(), {5.0, -1.0, 4.0});
  // A second graph accumulates into the same .grad.
  at::sum(x * 2.0).backward();
  expect_values(x.grad(), {7.0, 1.0, 6.0});
}

TEST(Engine, GradWithCreateGraphGivesSecondDerivative) {
  at::Tensor x = vec({0.3, -1.2}, true);
  at::Tensor y = at::sum(at::sin(x) * x);  // y' = cos x * x + sin x; y'' = 2 cos x - x sin x
  variable_list g = torch::autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  std::vector<double> xs = values(x);
  expect_values(g[0], {std::cos(xs[0]) * xs[0] + std::sin(xs[0]), std::cos(xs[1]) * xs[1] + std::sin(xs[1])});
  variable_list gg = torch::autograd::grad({at::sum(g[0])}, {x});
  expect_values(gg[0], {2 * std::cos(xs[0]) - xs[0] * std::sin(xs[0]), 2 * std::cos(xs[1]) - xs[1] * std::sin(xs[1])});
  EXPECT_FALSE(x.grad().defined());  // grad() leaves .grad alone
}

TEST(Engine, SecondBackwardWithoutRetainGraphRaises) {
  at::Tensor x = vec({2.0}, true);
  at::Tensor y = at::sum(x * x);
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  expect_values(x.grad(), {8.0});
  try {
    y.backward();
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Trying to backward through the graph a second time"), std::string::npos);
  }
}

// y = exp(x), saving its own output; counts the backward calls.
struct ExpFunction : torch::autograd::Function<ExpFunction> {
  static inline std::atomic<int> backward_calls{0};
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    at::Tensor y = at::exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    ++backward_calls;
    return {grads[0] * ctx->get_saved_variables()[0]};
  }
};

TEST(CustomFunction, SavesItsOutputAndDifferentiatesTwice) {
  at::Tensor x = vec({0.0, 1.0}, true);
  at::Tensor y = ExpFunction::apply(x);
  EXPECT_EQ(y.grad_fn()->name(), "(anonymous namespace)::ExpFunction");
  EXPECT_FALSE(y.is_leaf());
  variable_list g = torch::autograd::grad({at::sum(y)}, {x}, {}, std::nullopt, /*create_graph=*/true);
  expect_values(g[0], {1.0, std::exp(1.0)});
  // backward is written with differentiable ops and the saved output keeps its history.
  variable_list gg = torch::autograd::grad({at::sum(g[0])}, {x});
  expect_values(gg[0], {1.0, std::exp(1.0)});
  EXPECT_GE(ExpFunction::backward_calls.load(), 2);
}

TEST(CustomFunction, NoGraphWithoutRequiresGradOrInNoGrad) {
  EXPECT_FALSE(ExpFunction::apply(vec({1.0})).requires_grad());
  c10::AutoGradMode no_grad(false);
  EXPECT_FALSE(ExpFunction::apply(vec({1.0}, true)).requires_grad());
}

// z = a * factor + b * b; non-tensor argument in the middle; saved_data; needs_input_grad.
struct AxpyFunction : torch::autograd::Function<AxpyFunction> {
  static inline bool needs_a = false, needs_factor = true, needs_b = false;
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, double factor, const at::Tensor& b) {
    ctx->saved_data["factor"] = factor;
    ctx->save_for_backward({b});
    needs_a = ctx->needs_input_grad(0);
    needs_factor = ctx->needs_input_grad(1);
    needs_b = ctx->needs_input_grad(2);
    return a * factor + b * b;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    at::Tensor b = ctx->get_saved_variables()[0];
    return {grads[0] * ctx->saved_data["factor"].toDouble(), at::Tensor(), grads[0] * b * 2.0};
  }
};

TEST(CustomFunction, NonTensorArgumentsSavedDataAndNeedsInputGrad) {
  at::Tensor a = vec({1.0, 2.0}, true);
  at::Tensor b = vec({3.0, -1.0});
  at::Tensor z = AxpyFunction::apply(a, 0.5, b);
  EXPECT_TRUE(AxpyFunction::needs_a);
  EXPECT_FALSE(AxpyFunction::needs_factor);
  EXPECT_FALSE(AxpyFunction::needs_b);
  expect_values(z, {9.5, 2.0});
  at::sum(z).backward();
  expect_values(a.grad(), {0.5, 0.5});
  at::Tensor b2 = vec({3.0, -1.0}, true);
  at::sum(AxpyFunction::apply(a, 0.5, b2)).backward();
  expect_values(b2.grad(), {6.0, -2.0});
}

// Modifies its input in place and returns it, with an integer-like second output.
struct DoubleInPlace : torch::autograd::Function<DoubleInPlace> {
  static variable_list forward(AutogradContext* ctx, at::Tensor x) {
    x.mul_(2.0);
    ctx->mark_dirty({x});
    at::Tensor positive = at::gt(x, 0.0).to(at::kDouble);
    ctx->mark_non_differentiable({positive});
    return {x, positive};
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    EXPECT_TRUE(grads[1].defined());  // materialised as zeros
    return {grads[0] * 2.0};
  }
};

TEST(CustomFunction, MarkDirtyAndNonDifferentiable) {
  at::Tensor leaf = vec({1.0, -3.0}, true);
  at::Tensor x = leaf * 1.0;
  const int64_t version = x._version();
  variable_list out = DoubleInPlace::apply(x);
  EXPECT_TRUE(out[0].is_same(x));  // the dirty input itself, its history rebased
  EXPECT_GT(x._version(), version);
  EXPECT_EQ(x.grad_fn()->name(), "(anonymous namespace)::DoubleInPlace");
  EXPECT_FALSE(out[1].requires_grad());
  expect_values(out[1], {1.0, 0.0});
  at::sum(out[0] * 3.0).backward();
  expect_values(leaf.grad(), {6.0, 6.0});
  // A leaf that requires grad cannot be modified in place.
  at::Tensor leaf2 = vec({1.0}, true);
  EXPECT_THROW(DoubleInPlace::apply(leaf2), c10::Error);
}

struct WrongGradCount : torch::autograd::Function<WrongGradCount> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& a, const at::Tensor& b) { return a * b; }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0]}; }
};

struct GradForNonTensor : torch::autograd::Function<GradForNonTensor> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& a, double) { return a * 1.0; }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0], grads[0]}; }
};

// Tensors in a list and in an optional each take a grad slot, as in torch.
struct WeightedSum : torch::autograd::Function<WeightedSum> {
  static at::Tensor forward(AutogradContext* ctx, const variable_list& xs, const std::optional<at::Tensor>& w) {
    ctx->saved_data["n"] = static_cast<int64_t>(xs.size());
    at::Tensor out = xs[0] * 1.0;
    for (size_t i = 1; i < xs.size(); ++i) out = out + xs[i] * static_cast<double>(i + 1);
    return w ? out * *w : out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t n = ctx->saved_data["n"].toInt();
    variable_list out;
    for (int64_t i = 0; i < n; ++i) out.push_back(grads[0] * static_cast<double>(i + 1));
    out.push_back(at::Tensor());  // the optional weight: not differentiated here
    return out;
  }
};

TEST(CustomFunction, TensorListAndOptionalArguments) {
  at::Tensor a = vec({1.0}, true), b = vec({2.0}, true), c = vec({3.0});
  at::Tensor y = WeightedSum::apply(variable_list{a, b, c}, std::optional<at::Tensor>());
  expect_values(y, {14.0});
  y.backward();
  expect_values(a.grad(), {1.0});
  expect_values(b.grad(), {2.0});
  EXPECT_FALSE(c.grad().defined());
}

TEST(CustomFunction, BackwardResultsAreCheckedWithTorchMessages) {
  at::Tensor a = vec({1.0}, true), b = vec({2.0}, true);
  try {
    WrongGradCount::apply(a, b).backward();
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("returned an incorrect number of gradients (expected 2, got 1)"),
              std::string::npos)
        << e.what();
  }
  try {
    GradForNonTensor::apply(a, 1.0).backward();
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("returned a gradient different than None at position 2, but the "
                                         "corresponding forward input was not a Variable"),
              std::string::npos)
        << e.what();
  }
}

TEST(CustomFunction, SavedTensorModifiedInPlaceIsCaught) {
  at::Tensor x = vec({0.5}, true);
  at::Tensor y = ExpFunction::apply(x);
  y.mul_(2.0);
  try {
    y.backward();
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("modified by an inplace operation"), std::string::npos) << e.what();
  }
}

TEST(Threads, IndependentGraphsBackwardConcurrently) {
  constexpr int kThreads = 8, kRounds = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      for (int r = 0; r < kRounds; ++r) {
        const double v = 0.1 * (t + 1);
        at::Tensor x = vec({v, -v}, true);
        at::Tensor y = x;
        for (int i = 0; i < 20; ++i) y = at::tanh(y) * 1.5 + x;  // a chain and a fan-in on x
        at::Tensor e = ExpFunction::apply(y);
        at::sum(e).backward();
        // Compare with the same graph differentiated by torch::autograd::grad on this thread.
        at::Tensor x2 = vec({v, -v}, true);
        at::Tensor y2 = x2;
        for (int i = 0; i < 20; ++i) y2 = at::tanh(y2) * 1.5 + x2;
        at::Tensor g = torch::autograd::grad({at::sum(at::exp(y2))}, {x2})[0];
        std::vector<double> a = values(x.grad()), b = values(g);
        if (std::abs(a[0] - b[0]) > 1e-9 || std::abs(a[1] - b[1]) > 1e-9) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(ExpFunction::backward_calls.load(), kThreads * kRounds);
}

TEST(CustomOps, AutogradKernelRegisteredByALibrary) {
  torch::load_library(TESSERA_MYOPS_PATH);
  auto scale = c10::Dispatcher::singleton().findSchemaOrThrow("myops::scale", "").typed<at::Tensor(const at::Tensor&, double)>();
  at::Tensor x = vec({1.0, -2.0}, true);
  {
    // Without an Autograd kernel the CPU kernel runs, and the op it calls records its own Node.
    at::Tensor y = scale.call(x, 3.0);
    EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  }
  torch::load_library(TESSERA_MYOPS_AUTOGRAD_PATH);
  at::Tensor y = scale.call(x, 3.0);
  expect_values(y, {3.0, -6.0});
  ASSERT_TRUE(y.requires_grad());
  EXPECT_EQ(y.grad_fn()->name(), "(anonymous namespace)::ScaleFunction");
  at::sum(y * y).backward();
  expect_values(x.grad(), {18.0, -36.0});  // d/dx (3x)^2 = 18x
  y = at::Tensor();
  torch::unload_library(TESSERA_MYOPS_AUTOGRAD_PATH);
  torch::unload_library(TESSERA_MYOPS_PATH);
  EXPECT_FALSE(c10::Dispatcher::singleton().findSchema({"myops::scale", ""}).has_value());
}

}  // namespace
