// TensorIterator::for_each across threads: every element is visited once, small iterations
// stay on the caller, worker exceptions reach the caller, and kernels give the same bits at
// 1 and 2 threads (elementwise math, casting copies, random fills with one seed).
#include <aten/aten.h>
#include <aten/core/Parallel.h>
#include <aten/native/TensorIterator.h>
#include <c10/core/CPUGeneratorImpl.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

using at::Tensor;
using at::TensorIterator;

class TensorIteratorParallel : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = at::get_num_threads(); }
  void TearDown() override { at::set_num_threads(saved_); }
  int saved_ = 1;
};

// The bytes of t in its logical (row-major) order, whatever its strides.
std::vector<unsigned char> bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  return std::vector<unsigned char>(p, p + c.nbytes());
}

// Runs make() at 1 and at 2 threads; the results must be bit-identical.
void expect_same_at_1_and_2_threads(const std::function<Tensor()>& make) {
  at::set_num_threads(1);
  Tensor one = make();
  at::set_num_threads(2);
  Tensor two = make();
  ASSERT_EQ(one.sizes(), two.sizes());
  ASSERT_EQ(one.scalar_type(), two.scalar_type());
  EXPECT_TRUE(bytes_of(one) == bytes_of(two));
}

// 1000 x 777 values that differ from element to element (a fill_ would hide misplaced chunks).
Tensor ramp(std::vector<int64_t> sizes, c10::ScalarType dtype = at::kFloat) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Tensor t = at::empty({n}, at::TensorOptions(at::kDouble));
  double* d = t.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<double>((i * 7919) % 1000003) / 1000.0 - 500.0;
  return t.to(dtype).view(sizes);
}

TEST_F(TensorIteratorParallel, ChunksCoverEveryElementOnceOnSeveralThreads) {
  at::set_num_threads(2);
  // A transposed 600 x 500 operand keeps the iteration 2-D, so chunks start mid-row.
  Tensor out = at::empty({600, 500}, at::TensorOptions(at::kInt)).t();
  out.fill_(0);
  TensorIterator iter = TensorIterator::nullary_op(out);
  std::mutex mu;
  std::set<std::thread::id> threads;
  iter.for_each([&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    {
      std::lock_guard<std::mutex> g(mu);
      threads.insert(std::this_thread::get_id());
    }
    for (int64_t j = 0; j < n1; ++j) {
      for (int64_t i = 0; i < n0; ++i) ++*reinterpret_cast<int32_t*>(data[0] + i * strides[0] + j * strides[1]);
    }
  });
  EXPECT_EQ(threads.size(), 2u);
  Tensor c = out.contiguous();
  const int32_t* p = c.data_ptr<int32_t>();
  for (int64_t i = 0; i < c.numel(); ++i) ASSERT_EQ(p[i], 1) << "element " << i;
}

TEST_F(TensorIteratorParallel, BelowTheGrainRunsOnTheCallerOnly) {
  at::set_num_threads(2);
  Tensor out = at::empty({32768}, at::TensorOptions(at::kFloat));
  TensorIterator iter = TensorIterator::nullary_op(out);
  int calls = 0;  // unsynchronised on purpose: a second thread would be a data race (TSan, ASan runs)
  bool in_region = true;
  const auto caller = std::this_thread::get_id();
  bool on_caller = false;
  iter.for_each([&](char**, const int64_t*, int64_t, int64_t) {
    ++calls;
    in_region = at::in_parallel_region();
    on_caller = std::this_thread::get_id() == caller;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(in_region);
  EXPECT_TRUE(on_caller);
}

TEST_F(TensorIteratorParallel, WorkerExceptionsReachTheCaller) {
  at::set_num_threads(2);
  // Integer division by zero in the second half only: a worker's chunk throws.
  Tensor a = at::ones({200000}, at::TensorOptions(at::kLong));
  Tensor b = at::ones({200000}, at::TensorOptions(at::kLong));
  b.narrow(0, 150000, 10).fill_(0);
  try {
    (void)at::div(a, b, "trunc");
    FAIL() << "expected ZeroDivisionError";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("ZeroDivisionError"), std::string::npos) << e.what();
  }
}

TEST_F(TensorIteratorParallel, NonContiguousAddIsTheSameAtOneAndTwoThreads) {
  Tensor a = ramp({777, 1000}).t();                        // transposed
  Tensor b = ramp({1000, 1554}).as_strided({1000, 776}, {1554, 2}, 3);  // stepped, offset
  Tensor b2 = ramp({1000, 1}, at::kDouble);                 // broadcast, promotes to double
  expect_same_at_1_and_2_threads([&] { return at::add(a.narrow(1, 0, 776), b, 2.5); });
  expect_same_at_1_and_2_threads([&] { return at::add(a, b2); });
  expect_same_at_1_and_2_threads([&] { return at::mul(a, a).sigmoid(); });
  // and against the serial loop over the same iterator, element by element
  at::set_num_threads(2);
  Tensor sum = at::add(a.narrow(1, 0, 776), b);
  Tensor ac = a.narrow(1, 0, 776).contiguous(), bc = b.contiguous(), sc = sum.contiguous();
  for (int64_t i = 0; i < sc.numel(); i += 997) {
    ASSERT_EQ(sc.data_ptr<float>()[i], ac.data_ptr<float>()[i] + bc.data_ptr<float>()[i]) << i;
  }
}

TEST_F(TensorIteratorParallel, CastingCopyIsTheSameAtOneAndTwoThreads) {
  Tensor src = ramp({640, 480});
  for (auto dtype : {at::kHalf, at::kBFloat16, at::kDouble, at::kInt, at::kByte}) {
    expect_same_at_1_and_2_threads([&] {
      Tensor dst = at::empty({480, 640}, at::TensorOptions(dtype));
      dst.copy_(src.t());  // transposed source, casting
      return dst;
    });
    expect_same_at_1_and_2_threads([&] {
      Tensor dst = at::empty({640, 480}, at::TensorOptions(dtype)).t();  // transposed destination
      dst.copy_(src.t());
      return dst;
    });
  }
}

// Transposing copies run in tiles (Note [Tiled 2-D blocks]): sizes that are not multiples
// of a tile, at one thread and two.
TEST_F(TensorIteratorParallel, TransposedCopiesMatchElementByElement) {
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (auto dtype : {at::kFloat, at::kInt, at::kDouble, at::kShort}) {
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {8, 8}, {37, 100}, {1000, 203}, {130, 1030}}) {
        Tensor src = ramp({rows, cols}, dtype);
        Tensor dst = src.t().contiguous();
        ASSERT_TRUE(dst.is_contiguous());
        Tensor s64 = src.to(at::kDouble), d64 = dst.to(at::kDouble);
        const double* s = s64.data_ptr<double>();
        const double* d = d64.data_ptr<double>();
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) {
            ASSERT_EQ(d[j * rows + i], s[i * cols + j]) << dtype << " " << rows << "x" << cols << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

// where picks by mask, eight lanes at a time for 4-byte types on AVX2, element by element
// (without a branch) elsewhere: contiguous, transposed and broadcast operands.
TEST_F(TensorIteratorParallel, WhereMatchesElementByElement) {
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (auto dtype : {at::kFloat, at::kInt, at::kDouble, at::kHalf, at::kBool}) {
      Tensor cond = at::gt(ramp({301, 257}), 0.0);
      Tensor a = ramp({301, 257}, dtype), b = ramp({257, 301}, dtype).t(), row = ramp({257}, dtype);
      for (const auto& [x, y] : {std::pair<Tensor, Tensor>{a, b}, {b, a}, {a, row}}) {
        Tensor got = at::where(cond, x, y).to(at::kDouble).contiguous();
        Tensor c = cond.contiguous(), xd = x.to(at::kDouble).contiguous(), yd = y.expand_as(x).to(at::kDouble).contiguous();
        for (int64_t i = 0; i < got.numel(); ++i) {
          const double want = c.data_ptr<bool>()[i] ? xd.data_ptr<double>()[i] : yd.data_ptr<double>()[i];
          ASSERT_EQ(got.data_ptr<double>()[i], want) << dtype << " element " << i << " at " << threads << " threads";
        }
      }
    }
  }
}

TEST_F(TensorIteratorParallel, RandomFillsWithOneSeedAreTheSameAtOneAndTwoThreads) {
  auto seeded = [] { return at::make_generator<c10::CPUGeneratorImpl>(1234); };
  expect_same_at_1_and_2_threads([&] { return at::empty({300, 700}).uniform_(-2, 3, seeded()); });
  expect_same_at_1_and_2_threads([&] { return at::empty({300, 700}, at::TensorOptions(at::kDouble)).normal_(1, 2, seeded()); });
  expect_same_at_1_and_2_threads([&] { return at::empty({300, 700}, at::TensorOptions(at::kLong)).random_(-9, 9, seeded()); });
  expect_same_at_1_and_2_threads([&] { return at::empty({300, 700}, at::TensorOptions(at::kHalf)).bernoulli_(0.3, seeded()); });
  // a transposed (dense, not contiguous) target is filled in place, in memory order
  expect_same_at_1_and_2_threads([&] { return at::empty({700, 300}).t().uniform_(0, 1, seeded()); });
  // a strided target goes through a temporary
  expect_same_at_1_and_2_threads([&] { return at::empty({300, 1400}).as_strided({300, 700}, {1400, 2}, 0).normal_(0, 1, seeded()); });
}

}  // namespace
