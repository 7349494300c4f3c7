// The math bits from C++: copy_ between tensors with and without the conjugate / negative
// bit over the dtypes, on contiguous and strided rows long enough for the vector loops and
// their tails (aten_tests_default_isa runs them again on the default ISA's loops); operators
// through the boxed fallback (at::add, add_, add_out, a custom operator called unboxed and
// boxed); and TensorIterator refusing an unresolved bit. Expected values are computed here
// from the inputs, never by the functions under test; test_math_bits.py compares with torch.
#include <aten/aten.h>
#include <aten/library.h>
#include <aten/native/TensorIterator.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using at::Tensor;
using C = c10::complex<double>;

constexpr int64_t kLen = 37;  // several AVX2 vectors of every dtype, and a tail

// The i-th test value as a complex number (its real part for real dtypes): small integers
// and halves, exact in every floating dtype, of both signs.
C value(int64_t i) { return C(static_cast<double>((i * 7) % 11) - 5.0 + ((i % 3 == 0) ? 0.5 : 0.0), (i % 5) - 2.0); }

// A tensor of n elements holding value(0..n-1) in `dtype`, written element by element (at
// `step` apart in a larger buffer when step > 1, so the tensor is strided).
Tensor filled(c10::ScalarType dtype, int64_t n = kLen, int64_t step = 1) {
  Tensor buffer = at::zeros({n * step}, at::TensorOptions(dtype));
  Tensor t = buffer.as_strided({n}, {step});
  for (int64_t i = 0; i < n; ++i) {
    const C v = value(i);
    switch (dtype) {
      case c10::kComplexFloat:
        t.data_ptr<c10::complex<float>>()[i * step] = c10::complex<float>(v.real(), v.imag());
        break;
      case c10::kComplexDouble:
        t.data_ptr<C>()[i * step] = v;
        break;
      case c10::kDouble:
        t.data_ptr<double>()[i * step] = v.real();
        break;
      case c10::kFloat:
        t.data_ptr<float>()[i * step] = static_cast<float>(v.real());
        break;
      case c10::kHalf:
        t.data_ptr<c10::Half>()[i * step] = c10::Half(static_cast<float>(v.real()));
        break;
      case c10::kBFloat16:
        t.data_ptr<c10::BFloat16>()[i * step] = c10::BFloat16(static_cast<float>(v.real()));
        break;
      case c10::kLong:
        t.data_ptr<int64_t>()[i * step] = static_cast<int64_t>(v.real() * 2);
        break;
      case c10::kInt:
        t.data_ptr<int32_t>()[i * step] = static_cast<int32_t>(v.real() * 2);
        break;
      case c10::kShort:
        t.data_ptr<int16_t>()[i * step] = static_cast<int16_t>(v.real() * 2);
        break;
      case c10::kChar:
        t.data_ptr<int8_t>()[i * step] = static_cast<int8_t>(v.real() * 2);
        break;
      default:
        ADD_FAILURE() << "no test values for " << dtype;
    }
  }
  return t;
}

// Element i of t's memory, raw (the bits are not applied), as a complex number.
C raw(const Tensor& t, int64_t i) {
  const int64_t k = i * t.stride(0);
  switch (t.scalar_type()) {
    case c10::kComplexFloat: {
      auto v = t.data_ptr<c10::complex<float>>()[k];
      return C(v.real(), v.imag());
    }
    case c10::kComplexDouble:
      return t.data_ptr<C>()[k];
    case c10::kDouble:
      return C(t.data_ptr<double>()[k]);
    case c10::kFloat:
      return C(t.data_ptr<float>()[k]);
    case c10::kHalf:
      return C(static_cast<float>(t.data_ptr<c10::Half>()[k]));
    case c10::kBFloat16:
      return C(static_cast<float>(t.data_ptr<c10::BFloat16>()[k]));
    case c10::kLong:
      return C(static_cast<double>(t.data_ptr<int64_t>()[k]));
    case c10::kInt:
      return C(t.data_ptr<int32_t>()[k]);
    case c10::kShort:
      return C(t.data_ptr<int16_t>()[k]);
    case c10::kChar:
      return C(t.data_ptr<int8_t>()[k]);
    case c10::kByte:
      return C(t.data_ptr<uint8_t>()[k]);
    default:
      ADD_FAILURE() << "cannot read " << t.scalar_type();
      return C();
  }
}

C cj(C v) { return C(v.real(), -v.imag()); }

const std::vector<c10::ScalarType> kComplexTypes = {c10::kComplexFloat, c10::kComplexDouble};
const std::vector<c10::ScalarType> kAllTypes = {c10::kComplexFloat, c10::kComplexDouble, c10::kDouble, c10::kFloat,
                                                c10::kHalf,         c10::kBFloat16,      c10::kLong,   c10::kInt,
                                                c10::kShort,        c10::kChar};

// ---------------------------------------------------------------------------------------
// copy_

TEST(MathBitsCopy, IntoAConjViewWritesTheConjugate) {
  for (c10::ScalarType dtype : kComplexTypes) {
    for (int64_t step : {1, 2}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + " step " + std::to_string(step));
      Tensor src = filled(dtype);
      Tensor base = filled(dtype, kLen, step);
      base.zero_();
      Tensor view = base.conj();
      ASSERT_TRUE(view.is_conj());
      Tensor& r = view.copy_(src);
      EXPECT_TRUE(r.is_same(view));
      EXPECT_TRUE(view.is_conj());
      for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(base, i), cj(raw(src, i))) << i;
    }
  }
}

TEST(MathBitsCopy, FromAConjViewReadsTheConjugate) {
  for (c10::ScalarType dtype : kComplexTypes) {
    for (int64_t step : {1, 2}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + " step " + std::to_string(step));
      Tensor src = filled(dtype, kLen, step);
      Tensor dst = at::zeros({kLen}, at::TensorOptions(dtype));
      dst.copy_(src.conj());
      for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(dst, i), cj(raw(src, i))) << i;
      // conj into conj: the memory moves unchanged
      Tensor other = at::zeros({kLen}, at::TensorOptions(dtype));
      other.conj().copy_(src.conj());
      for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(other, i), raw(src, i)) << i;
      // into another complex dtype, and into a real one (the real part, unchanged)
      const c10::ScalarType wider = dtype == c10::kComplexFloat ? c10::kComplexDouble : c10::kComplexFloat;
      Tensor converted = at::zeros({kLen}, at::TensorOptions(wider));
      converted.copy_(src.conj());
      Tensor real = at::zeros({kLen}, at::TensorOptions(c10::kDouble));
      real.copy_(src.conj());
      for (int64_t i = 0; i < kLen; ++i) {
        ASSERT_EQ(raw(converted, i), cj(raw(src, i))) << i;
        ASSERT_EQ(raw(real, i), C(raw(src, i).real())) << i;
      }
    }
  }
}

TEST(MathBitsCopy, NegativeViewsOverEveryDtype) {
  for (c10::ScalarType dtype : kAllTypes) {
    for (int64_t step : {1, 3}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + " step " + std::to_string(step));
      Tensor src = filled(dtype, kLen, step);
      // into a negative view: the memory holds the negation
      Tensor base = at::zeros({kLen}, at::TensorOptions(dtype));
      Tensor view = at::_neg_view(base);
      ASSERT_TRUE(view.is_neg());
      view.copy_(src);
      // out of one: the destination reads the negation
      Tensor plain = at::zeros({kLen}, at::TensorOptions(dtype));
      plain.copy_(at::_neg_view(src));
      // both negative: the memory moves unchanged
      Tensor same = at::zeros({kLen}, at::TensorOptions(dtype));
      at::_neg_view(same).copy_(at::_neg_view(src));
      for (int64_t i = 0; i < kLen; ++i) {
        const C v = raw(src, i);
        ASSERT_EQ(raw(base, i), -v) << i;
        ASSERT_EQ(raw(plain, i), -v) << i;
        ASSERT_EQ(raw(same, i), v) << i;
      }
    }
  }
}

TEST(MathBitsCopy, BothBitsAtOnce) {
  for (c10::ScalarType dtype : kComplexTypes) {
    Tensor src = filled(dtype);
    Tensor base = at::zeros({kLen}, at::TensorOptions(dtype));
    Tensor view = at::_neg_view(base).conj();
    ASSERT_TRUE(view.is_conj() && view.is_neg());
    view.copy_(src);
    Tensor plain = at::zeros({kLen}, at::TensorOptions(dtype));
    plain.copy_(at::_neg_view(src).conj());
    Tensor conj_only = at::zeros({kLen}, at::TensorOptions(dtype));
    conj_only.conj().copy_(at::_neg_view(src));  // conj(-v) stored
    for (int64_t i = 0; i < kLen; ++i) {
      const C v = raw(src, i);
      ASSERT_EQ(raw(base, i), -cj(v)) << i;
      ASSERT_EQ(raw(plain, i), -cj(v)) << i;
      ASSERT_EQ(raw(conj_only, i), cj(-v)) << i;
    }
  }
}

// torch: the negation is applied after the conversion (-1.5 into int64 is -1), and a
// uint8 destination wraps.
TEST(MathBitsCopy, NegationAfterTheDtypeConversion) {
  Tensor src = at::empty({3}, at::TensorOptions(c10::kDouble));
  const double in[] = {1.5, -2.7, 0.2};
  for (int i = 0; i < 3; ++i) src.data_ptr<double>()[i] = in[i];
  Tensor dst = at::zeros({3}, at::TensorOptions(c10::kLong));
  dst.copy_(at::_neg_view(src));
  EXPECT_EQ(dst.data_ptr<int64_t>()[0], -1);
  EXPECT_EQ(dst.data_ptr<int64_t>()[1], 2);
  EXPECT_EQ(dst.data_ptr<int64_t>()[2], 0);
  Tensor ints = at::empty({3}, at::TensorOptions(c10::kLong));
  for (int i = 0; i < 3; ++i) ints.data_ptr<int64_t>()[i] = i + 1;
  Tensor bytes = at::zeros({3}, at::TensorOptions(c10::kByte));
  bytes.copy_(at::_neg_view(ints));
  EXPECT_EQ(bytes.data_ptr<uint8_t>()[0], 255);
  EXPECT_EQ(bytes.data_ptr<uint8_t>()[1], 254);
  EXPECT_EQ(bytes.data_ptr<uint8_t>()[2], 253);
  // a negated value into bool has no meaning: torch's error
  Tensor flags = at::zeros({3}, at::TensorOptions(c10::kBool));
  try {
    flags.copy_(at::_neg_view(src));
    ADD_FAILURE() << "negated into bool";
  } catch (const c10::Error& e) {
    EXPECT_STREQ(e.what(), "\"neg_cpu\" not implemented for 'Bool'");
  }
}

TEST(MathBitsCopy, FullOverlapConjugatesInPlace) {
  for (c10::ScalarType dtype : kComplexTypes) {
    Tensor x = filled(dtype);
    Tensor before = x.clone();
    x.conj().copy_(x);
    for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(x, i), cj(raw(before, i))) << i;
  }
  Tensor f = filled(c10::kFloat);
  Tensor before = f.clone();
  at::_neg_view(f).copy_(f);
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(f, i), -raw(before, i)) << i;
}

TEST(MathBitsCopy, TwoDimensionalAndBroadcastSources) {
  // a transposed conj source into a contiguous destination
  Tensor src = filled(c10::kComplexDouble, 12).as_strided({3, 4}, {1, 3});
  Tensor dst = at::zeros({3, 4}, at::TensorOptions(c10::kComplexDouble));
  dst.copy_(src.conj());
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 4; ++c) {
      ASSERT_EQ(dst.data_ptr<C>()[r * 4 + c], cj(src.data_ptr<C>()[r + 3 * c])) << r << "," << c;
    }
  }
  // a broadcast negative row into a conj destination
  Tensor row = filled(c10::kComplexDouble, 4);
  Tensor base = at::zeros({3, 4}, at::TensorOptions(c10::kComplexDouble));
  base.conj().copy_(at::_neg_view(row));
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 4; ++c) ASSERT_EQ(base.data_ptr<C>()[r * 4 + c], cj(-raw(row, c))) << r << "," << c;
  }
}

// ---------------------------------------------------------------------------------------
// the views

TEST(MathBitsViews, ConjAndNegViewShareMemoryAndToggle) {
  Tensor z = filled(c10::kComplexFloat);
  Tensor y = at::_conj(z);
  EXPECT_TRUE(y.is_conj());
  EXPECT_FALSE(z.is_conj());
  EXPECT_EQ(y.data_ptr(), z.data_ptr());
  EXPECT_FALSE(at::_conj(y).is_conj());
  EXPECT_FALSE(y.conj().is_conj());
  EXPECT_TRUE(z.conj().is_conj());
  // views keep the bit (make_view copies the key set)
  EXPECT_TRUE(y.as_strided({2}, {3}).is_conj());
  EXPECT_TRUE(y.select(0, 4).is_conj());
  EXPECT_TRUE(y.narrow(0, 1, 5).is_conj());
  Tensor n = at::_neg_view(y);
  EXPECT_TRUE(n.is_conj() && n.is_neg());
  EXPECT_FALSE(at::_neg_view(n).is_neg());
  // conj of a real tensor is the tensor; the conj bit needs a complex dtype
  Tensor f = filled(c10::kFloat);
  EXPECT_TRUE(at::conj(f).is_same(f));
  EXPECT_THROW(at::_conj(f), c10::Error);
  EXPECT_TRUE(at::_neg_view(f).is_neg());
  // resolve_* copy only when the bit is set
  EXPECT_TRUE(at::resolve_conj(z).is_same(z));
  Tensor resolved = at::resolve_conj(y);
  EXPECT_FALSE(resolved.is_conj());
  EXPECT_NE(resolved.data_ptr(), z.data_ptr());
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(resolved, i), cj(raw(z, i))) << i;
}

TEST(MathBitsViews, ItemAppliesTheBits) {
  Tensor z = filled(c10::kComplexDouble);
  const C v = raw(z, 3);
  EXPECT_EQ(z.conj().select(0, 3).item().toComplexDouble(), cj(v));
  EXPECT_EQ(at::_neg_view(z).select(0, 3).item().toComplexDouble(), -v);
  EXPECT_EQ(at::_neg_view(z).conj().select(0, 3).item().toComplexDouble(), -cj(v));
  Tensor l = filled(c10::kLong);
  EXPECT_EQ(at::_neg_view(l).select(0, 3).item().toLong(), -static_cast<int64_t>(raw(l, 3).real()));
}

// ---------------------------------------------------------------------------------------
// the boxed fallback

TEST(MathBitsFallback, OutOfPlaceReadsMaterialisedInputs) {
  Tensor a = filled(c10::kComplexDouble);
  Tensor b = filled(c10::kComplexDouble, kLen, 2);
  Tensor sum = at::add(a.conj(), b, 2);
  EXPECT_FALSE(sum.is_conj());
  Tensor mixed = at::add(at::_neg_view(a), b.conj());
  EXPECT_FALSE(mixed.is_neg() || mixed.is_conj());
  for (int64_t i = 0; i < kLen; ++i) {
    ASSERT_EQ(raw(sum, i), cj(raw(a, i)) + C(2) * raw(b, i)) << i;
    ASSERT_EQ(raw(mixed, i), -raw(a, i) + cj(raw(b, i))) << i;
  }
  Tensor f = filled(c10::kFloat);
  Tensor g = at::mul(at::_neg_view(f), f);
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(g, i), -raw(f, i) * raw(f, i)) << i;
  // the inputs are untouched
  Tensor again = filled(c10::kComplexDouble);
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(a, i), raw(again, i)) << i;
}

TEST(MathBitsFallback, InPlaceWritesBackThroughTheView) {
  Tensor base = filled(c10::kComplexDouble);
  Tensor before = base.clone();
  Tensor b = filled(c10::kComplexDouble, kLen, 3);
  Tensor view = base.conj();
  const uint32_t version = base.unsafeGetTensorImpl()->version_counter().current_version();
  Tensor& r = view.add_(b);
  EXPECT_TRUE(r.is_same(view));
  EXPECT_TRUE(view.is_conj());
  EXPECT_GT(base.unsafeGetTensorImpl()->version_counter().current_version(), version);
  // the view reads cj(base) + b, so the memory holds base + cj(b)
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(base, i), raw(before, i) + cj(raw(b, i))) << i;
  Tensor f = filled(c10::kDouble);
  Tensor fbefore = f.clone();
  at::_neg_view(f).add_(filled(c10::kDouble), 3);
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(f, i), -(-raw(fbefore, i) + C(3) * raw(fbefore, i))) << i;
}

TEST(MathBitsFallback, OutTargetsKeepTheirBits) {
  Tensor a = filled(c10::kComplexFloat);
  Tensor b = filled(c10::kComplexFloat, kLen, 2);
  Tensor base = at::zeros({kLen}, at::TensorOptions(c10::kComplexFloat));
  Tensor out = base.conj();
  Tensor& r = at::add_out(out, a, b);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_TRUE(out.is_conj());
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(base, i), cj(raw(a, i) + raw(b, i))) << i;
  // an empty conj out= target is resized, and keeps its bit
  Tensor empty = at::zeros({0}, at::TensorOptions(c10::kComplexFloat)).conj();
  at::add_out(empty, a, b);
  EXPECT_TRUE(empty.is_conj());
  ASSERT_EQ(empty.numel(), kLen);
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(empty.select(0, i).item().toComplexDouble(), raw(a, i) + raw(b, i)) << i;
}

// A custom operator: its kernels see materialised inputs whether the call is unboxed or boxed.
std::vector<std::string> g_seen;

std::string bits_of(const Tensor& t) { return std::string(t.is_conj() ? "c" : "-") + (t.is_neg() ? "n" : "-"); }

TORCH_LIBRARY(tmathbits, m) {
  m.def("probe(Tensor a, Tensor b) -> Tensor");
  m.def("probe_(Tensor(a!) self, Tensor b) -> Tensor(a!)");
  m.def("mixed(Tensor(a!) self, Tensor(b) other) -> Tensor(a!)");
}

TORCH_LIBRARY_IMPL(tmathbits, CPU, m) {
  m.impl("probe", [](const Tensor& a, const Tensor& b) {
    g_seen.push_back(bits_of(a) + bits_of(b));
    return at::add(a, b);
  });
  m.impl("probe_", [](Tensor& self, const Tensor& b) -> Tensor& {
    g_seen.push_back(bits_of(self) + bits_of(b));
    return self.add_(b);
  });
  m.impl("mixed", [](Tensor& self, const Tensor&) -> Tensor& { return self; });
}

c10::OperatorHandle op(const char* name) { return c10::Dispatcher::singleton().findSchemaOrThrow(name, ""); }

TEST(MathBitsFallback, CustomOperatorUnboxedAndBoxed) {
  g_seen.clear();
  Tensor a = filled(c10::kComplexDouble);
  Tensor b = filled(c10::kComplexDouble, kLen, 2);
  auto probe = op("tmathbits::probe").typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor r = probe.call(a.conj(), at::_neg_view(b));
  c10::Stack stack;
  c10::push(stack, at::_neg_view(a).conj(), b);
  op("tmathbits::probe").callBoxed(&stack);
  ASSERT_EQ(stack.size(), 1u);
  Tensor boxed = stack[0].toTensor();
  for (int64_t i = 0; i < kLen; ++i) {
    ASSERT_EQ(raw(r, i), cj(raw(a, i)) - raw(b, i)) << i;
    ASSERT_EQ(raw(boxed, i), -cj(raw(a, i)) + raw(b, i)) << i;
  }
  // in place through a conj view: unboxed, the caller's own view comes back
  Tensor base = filled(c10::kComplexDouble);
  Tensor before = base.clone();
  Tensor view = base.conj();
  auto probe_ = op("tmathbits::probe_").typed<Tensor&(Tensor&, const Tensor&)>();
  Tensor& same = probe_.call(view, b);
  EXPECT_EQ(&same, &view);
  EXPECT_TRUE(view.is_conj());
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(base, i), raw(before, i) + cj(raw(b, i))) << i;
  // boxed, the result on the stack is the view, not the fallback's copy
  Tensor base2 = filled(c10::kComplexDouble);
  Tensor view2 = at::_neg_view(base2);
  c10::Stack stack2;
  c10::push(stack2, view2, b);
  op("tmathbits::probe_").callBoxed(&stack2);
  ASSERT_EQ(stack2.size(), 1u);
  EXPECT_TRUE(stack2[0].toTensor().is_same(view2));
  for (int64_t i = 0; i < kLen; ++i) ASSERT_EQ(raw(base2, i), raw(before, i) - raw(b, i)) << i;
  // every kernel call saw inputs without bits
  ASSERT_EQ(g_seen.size(), 4u);
  for (const auto& s : g_seen) EXPECT_EQ(s, "----");
}

TEST(MathBitsFallback, MixedMutableAndAliasingInputsAreRefused) {
  auto mixed = op("tmathbits::mixed").typed<Tensor&(Tensor&, const Tensor&)>();
  Tensor a = filled(c10::kComplexFloat);
  Tensor b = filled(c10::kComplexFloat);
  EXPECT_TRUE(mixed.call(a, b).is_same(a));  // no bit: no fallback
  Tensor view = a.conj();
  try {
    mixed.call(view, b);
    ADD_FAILURE() << "the conjugate fallback ran an operator it cannot write back";
  } catch (const c10::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("Unsupported operator for conjugate fallback: tmathbits::mixed", 0), 0u)
        << e.what();
  }
  Tensor neg = at::_neg_view(b);
  EXPECT_THROW(mixed.call(a, neg), c10::Error);
}

// ---------------------------------------------------------------------------------------
// TensorIterator

TEST(MathBitsTensorIterator, RefusesAnUnresolvedBit) {
  Tensor z = filled(c10::kComplexFloat);
  Tensor f = filled(c10::kFloat);
  auto expect_refused = [](auto build, const char* what) {
    try {
      build();
      ADD_FAILURE() << what << ": a kernel would have read the memory raw";
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find("INTERNAL ASSERT FAILED"), std::string::npos) << what << ": " << e.what();
    }
  };
  expect_refused([&] { at::TensorIterator::binary_op(Tensor(), z.conj(), z); }, "conj input");
  expect_refused([&] { at::TensorIterator::binary_op(Tensor(), f, at::_neg_view(f)); }, "negative input");
  expect_refused([&] { at::TensorIterator::unary_float_op(Tensor(), at::_neg_view(z).conj()); }, "both bits");
  expect_refused([&] { at::TensorIterator::binary_op(z.conj(), z, z); }, "conj output");
  // without bits it builds
  EXPECT_NO_THROW(at::TensorIterator::binary_op(Tensor(), z, z.conj().resolve_conj()));
}

}  // namespace
