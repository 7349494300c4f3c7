// DispatchKey and DispatchKeySet. Expected values are written out by hand from the design's
// key list (DESIGN.md, "c10: core types") and PyTorch's spellings, never computed with the
// functions under test.
#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using c10::DeviceType;
using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::Layout;
using K = c10::DispatchKey;

struct KeyRow {
  DispatchKey key;
  const char* name;
  int value;  // priority: higher wins
};

// Every enumerator, lowest priority first, as the design lists them.
const std::vector<KeyRow> kAllKeys = {
    {K::Undefined, "Undefined", 0},
    {K::CPU, "CPU", 1},
    {K::CUDA, "CUDA", 2},
    {K::Meta, "Meta", 3},
    {K::SparseCPU, "SparseCPU", 4},
    {K::SparseCUDA, "SparseCUDA", 5},
    {K::SparseCsrCPU, "SparseCsrCPU", 6},
    {K::SparseCsrCUDA, "SparseCsrCUDA", 7},
    {K::QuantizedCPU, "QuantizedCPU", 8},
    {K::QuantizedCUDA, "QuantizedCUDA", 9},
    {K::MkldnnCPU, "MkldnnCPU", 10},
    {K::NestedTensorCPU, "NestedTensorCPU", 11},
    {K::SparseMeta, "SparseMeta", 12},
    {K::SparseCsrMeta, "SparseCsrMeta", 13},
    {K::QuantizedMeta, "QuantizedMeta", 14},
    {K::BackendSelect, "BackendSelect", 15},
    {K::Python, "Python", 16},
    {K::Named, "Named", 17},
    {K::Conjugate, "Conjugate", 18},
    {K::Negative, "Negative", 19},
    {K::ADInplaceOrView, "ADInplaceOrView", 20},
    {K::AutogradCPU, "AutogradCPU", 21},
    {K::AutogradCUDA, "AutogradCUDA", 22},
    {K::AutogradOther, "AutogradOther", 23},
    {K::AutocastCPU, "AutocastCPU", 24},
    {K::AutocastCUDA, "AutocastCUDA", 25},
    {K::Profiler, "Profiler", 26},
    {K::PythonTLSSnapshot, "PythonTLSSnapshot", 27},
    {K::EndOfRuntimeKeys, "EndOfRuntimeKeys", 28},
    {K::Autograd, "Autograd", 29},
    {K::CompositeImplicitAutograd, "CompositeImplicitAutograd", 30},
    {K::CompositeExplicitAutograd, "CompositeExplicitAutograd", 31},
};

// The 27 runtime keys, highest priority first (the order iteration must produce).
const std::vector<DispatchKey> kRuntimeKeysHighestFirst = {
    K::PythonTLSSnapshot, K::Profiler,        K::AutocastCUDA,  K::AutocastCPU,     K::AutogradOther,
    K::AutogradCUDA,      K::AutogradCPU,     K::ADInplaceOrView, K::Negative,      K::Conjugate,     K::Named,
    K::Python,            K::BackendSelect,   K::QuantizedMeta, K::SparseCsrMeta, K::SparseMeta, K::NestedTensorCPU, K::MkldnnCPU,     K::QuantizedCUDA,
    K::QuantizedCPU,      K::SparseCsrCUDA,   K::SparseCsrCPU,  K::SparseCUDA,      K::SparseCPU,
    K::Meta,              K::CUDA,            K::CPU,
};

const std::vector<DispatchKey> kBackends = {K::CPU,           K::CUDA,          K::Meta,
                                            K::SparseCPU,     K::SparseCUDA,    K::SparseCsrCPU,
                                            K::SparseCsrCUDA, K::QuantizedCPU,  K::QuantizedCUDA,
                                            K::MkldnnCPU,     K::NestedTensorCPU, K::SparseMeta,
                                            K::SparseCsrMeta, K::QuantizedMeta};

std::vector<DispatchKey> keysOf(DispatchKeySet ks) {
  std::vector<DispatchKey> out;
  for (DispatchKey k : ks) out.push_back(k);
  return out;
}

template <typename T>
std::string printed(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// ---------------------------------------------------------------------------------------
// DispatchKey

TEST(DispatchKeyTest, ValuesFollowThePriorityOrder) {
  ASSERT_EQ(kAllKeys.size(), 32u);
  for (const auto& row : kAllKeys) {
    EXPECT_EQ(static_cast<int>(row.key), row.value) << row.name;
  }
  EXPECT_EQ(sizeof(DispatchKey), 1u);
  EXPECT_EQ(c10::kNumRuntimeDispatchKeys, 27);
  EXPECT_EQ(c10::kDispatchTableSize, 28);
  EXPECT_EQ(c10::kNumDispatchKeyValues, 32);
}

TEST(DispatchKeyTest, ToStringUsesPyTorchSpellings) {
  for (const auto& row : kAllKeys) {
    EXPECT_STREQ(c10::toString(row.key), row.name);
    EXPECT_EQ(printed(row.key), row.name);
  }
  EXPECT_STREQ(c10::toString(static_cast<DispatchKey>(200)), "UNKNOWN_DISPATCH_KEY");
}

TEST(DispatchKeyTest, ParseRoundTripsEveryKey) {
  for (const auto& row : kAllKeys) {
    if (row.key == K::EndOfRuntimeKeys) continue;  // a marker, not a key
    EXPECT_EQ(c10::parseDispatchKey(row.name), row.key) << row.name;
    EXPECT_EQ(c10::parseDispatchKey(c10::toString(row.key)), row.key) << row.name;
  }
}

TEST(DispatchKeyTest, ParseRejectsBadNamesWithTheValidList) {
  const std::vector<std::string> bad = {"",    "cpu",  "Cpu",     " CPU",           "CPU ",
                                        "GPU", "XLA",  "Autogradcpu", "EndOfRuntimeKeys", std::string("CPU\0x", 5)};
  for (const auto& name : bad) {
    try {
      c10::parseDispatchKey(name);
      ADD_FAILURE() << "parsed '" << name << "'";
    } catch (const c10::ValueError& e) {
      std::string msg = e.what();
      const std::string shown = name.size() == 5 && name[3] == '\0' ? "CPU\\x00x" : name;  // NUL escaped
      EXPECT_NE(msg.find("Unknown dispatch key '" + shown + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("Valid dispatch keys are: Undefined, CPU, CUDA, Meta,"), std::string::npos) << msg;
      EXPECT_NE(msg.find("PythonTLSSnapshot, Autograd, CompositeImplicitAutograd, CompositeExplicitAutograd"),
                std::string::npos)
          << msg;
      EXPECT_EQ(msg.find("EndOfRuntimeKeys,"), std::string::npos) << msg;
    }
  }
  // A case-only miss gets a hint.
  try {
    c10::parseDispatchKey("autogradcpu");
    ADD_FAILURE();
  } catch (const c10::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'AutogradCPU'?"), std::string::npos) << e.what();
  }
  // ValueError is also a c10::Error (RuntimeError side of the hierarchy).
  EXPECT_THROW(c10::parseDispatchKey("nope"), c10::Error);
}

TEST(DispatchKeyTest, Classification) {
  const std::vector<DispatchKey> aliases = {K::Autograd, K::CompositeImplicitAutograd, K::CompositeExplicitAutograd};
  const std::vector<DispatchKey> autograd = {K::AutogradCPU, K::AutogradCUDA, K::AutogradOther, K::Autograd};
  auto in = [](const std::vector<DispatchKey>& v, DispatchKey k) {
    for (auto x : v)
      if (x == k) return true;
    return false;
  };
  for (const auto& row : kAllKeys) {
    EXPECT_EQ(c10::isAliasDispatchKey(row.key), in(aliases, row.key)) << row.name;
    EXPECT_EQ(c10::isBackendDispatchKey(row.key), in(kBackends, row.key)) << row.name;
    EXPECT_EQ(c10::isAutogradKey(row.key), in(autograd, row.key)) << row.name;
    EXPECT_EQ(c10::isRuntimeDispatchKey(row.key), in(kRuntimeKeysHighestFirst, row.key)) << row.name;
  }
}

TEST(DispatchKeyTest, BackendDispatchKeyForEveryDeviceAndLayout) {
  struct Row {
    DeviceType device;
    Layout layout;
    DispatchKey expected;  // Undefined: no such backend
  };
  std::vector<Row> rows = {
      {DeviceType::CPU, Layout::Strided, K::CPU},
      {DeviceType::CPU, Layout::SparseCoo, K::SparseCPU},
      {DeviceType::CPU, Layout::SparseCsr, K::SparseCsrCPU},
      {DeviceType::CUDA, Layout::Strided, K::CUDA},
      {DeviceType::CUDA, Layout::SparseCoo, K::SparseCUDA},
      {DeviceType::CUDA, Layout::SparseCsr, K::SparseCsrCUDA},
      {DeviceType::Meta, Layout::Strided, K::Meta},
      {DeviceType::Meta, Layout::SparseCoo, K::SparseMeta},
      {DeviceType::Meta, Layout::SparseCsr, K::SparseCsrMeta},
      {DeviceType::CPU, Layout::Mkldnn, K::MkldnnCPU},
      {DeviceType::CUDA, Layout::Mkldnn, K::Undefined},
      {DeviceType::Meta, Layout::Mkldnn, K::Undefined},
  };
  // The other compressed layouts share CSR's keys (one compressed impl).
  for (Layout l : {Layout::SparseCsc, Layout::SparseBsr, Layout::SparseBsc}) {
    rows.push_back({DeviceType::CPU, l, K::SparseCsrCPU});
    rows.push_back({DeviceType::CUDA, l, K::SparseCsrCUDA});
    rows.push_back({DeviceType::Meta, l, K::SparseCsrMeta});
  }
  ASSERT_EQ(rows.size(), static_cast<size_t>(c10::kNumDeviceTypes * c10::kNumLayouts));
  for (const auto& r : rows) {
    SCOPED_TRACE(printed(static_cast<int>(r.device)) + "/" + printed(static_cast<int>(r.layout)));
    if (r.expected != K::Undefined) {
      EXPECT_EQ(c10::backendDispatchKey(r.device, r.layout), r.expected);
      // And back again, for error messages.
      EXPECT_EQ(c10::deviceTypeOf(r.expected), r.device);
      EXPECT_EQ(c10::layoutOf(r.expected), c10::isSparseCompressed(r.layout) ? Layout::SparseCsr : r.layout);
    } else {
      try {
        c10::backendDispatchKey(r.device, r.layout);
        ADD_FAILURE() << "expected an error";
      } catch (const c10::NotImplementedError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find(r.device == DeviceType::Meta ? "'meta'" : "'cuda'"), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::string("'") + c10::LayoutName(r.layout) + "'"), std::string::npos) << msg;
        if (r.device == DeviceType::Meta) {
          EXPECT_NE(msg.find("strided or sparse"), std::string::npos) << msg;
        }
      }
    }
  }
  static_assert(c10::backendDispatchKey(DeviceType::CUDA, Layout::SparseCoo) == K::SparseCUDA);
}

TEST(DispatchKeyTest, DeviceAndLayoutOfQuantizedAndNonBackendKeys) {
  EXPECT_EQ(c10::deviceTypeOf(K::NestedTensorCPU), DeviceType::CPU);
  EXPECT_EQ(c10::layoutOf(K::NestedTensorCPU), Layout::Strided);  // as torch: nested tensors are strided
  EXPECT_EQ(c10::deviceTypeOf(K::QuantizedCPU), DeviceType::CPU);
  EXPECT_EQ(c10::deviceTypeOf(K::QuantizedCUDA), DeviceType::CUDA);
  EXPECT_EQ(c10::layoutOf(K::QuantizedCPU), Layout::Strided);
  EXPECT_EQ(c10::layoutOf(K::QuantizedCUDA), Layout::Strided);
  for (DispatchKey k : {K::Undefined, K::BackendSelect, K::AutogradCPU, K::Python, K::CompositeExplicitAutograd}) {
    EXPECT_THROW(c10::deviceTypeOf(k), c10::ValueError) << c10::toString(k);
    EXPECT_THROW(c10::layoutOf(k), c10::ValueError) << c10::toString(k);
  }
  try {
    c10::layoutOf(K::AutogradCUDA);
    ADD_FAILURE();
  } catch (const c10::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("layoutOf(): AutogradCUDA is not a backend dispatch key"),
              std::string::npos)
        << e.what();
  }
}

TEST(DispatchKeyTest, AutogradKeyForBackend) {
  const std::vector<std::pair<DispatchKey, DispatchKey>> rows = {
      {K::CPU, K::AutogradCPU},           {K::CUDA, K::AutogradCUDA},
      {K::Meta, K::AutogradOther},        {K::SparseCPU, K::AutogradOther},
      {K::SparseCUDA, K::AutogradOther},  {K::SparseCsrCPU, K::AutogradOther},
      {K::SparseCsrCUDA, K::AutogradOther}, {K::QuantizedCPU, K::AutogradOther},
      {K::QuantizedCUDA, K::AutogradOther}, {K::MkldnnCPU, K::AutogradOther},
      {K::NestedTensorCPU, K::AutogradOther}, {K::SparseMeta, K::AutogradOther},
      {K::SparseCsrMeta, K::AutogradOther}, {K::QuantizedMeta, K::AutogradOther},
  };
  ASSERT_EQ(rows.size(), kBackends.size());
  for (auto [backend, autograd] : rows) {
    EXPECT_EQ(c10::autogradKeyForBackend(backend), autograd) << c10::toString(backend);
  }
}

// ---------------------------------------------------------------------------------------
// DispatchKeySet

TEST(DispatchKeySetTest, EmptySet) {
  DispatchKeySet e;
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.raw_repr(), 0u);
  EXPECT_EQ(e.size(), 0u);
  EXPECT_EQ(e.highestPriorityTypeId(), K::Undefined);
  EXPECT_EQ(e.highestPriorityBackendTypeId(), K::Undefined);
  EXPECT_EQ(e.begin(), e.end());
  EXPECT_EQ(printed(e), "DispatchKeySet()");
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::EMPTY), e);
  EXPECT_EQ(DispatchKeySet::empty_set(), e);
  // Undefined is "no key": it adds nothing and is never a member.
  EXPECT_EQ(DispatchKeySet(K::Undefined), e);
  EXPECT_EQ(DispatchKeySet({K::Undefined, K::Undefined}), e);
  EXPECT_FALSE(DispatchKeySet::full().has(K::Undefined));
  EXPECT_EQ(DispatchKeySet(K::CPU).add(K::Undefined), DispatchKeySet(K::CPU));
}

TEST(DispatchKeySetTest, BitLayoutIsKeyMinusOne) {
  EXPECT_EQ(DispatchKeySet(K::CPU).raw_repr(), 0x1u);
  EXPECT_EQ(DispatchKeySet(K::CUDA).raw_repr(), 0x2u);
  EXPECT_EQ(DispatchKeySet(K::QuantizedCUDA).raw_repr(), 0x100u);
  EXPECT_EQ(DispatchKeySet(K::NestedTensorCPU).raw_repr(), 0x400u);
  EXPECT_EQ(DispatchKeySet(K::SparseCsrMeta).raw_repr(), 0x1000u);
  EXPECT_EQ(DispatchKeySet(K::PythonTLSSnapshot).raw_repr(), uint64_t{1} << 26);
  EXPECT_EQ(DispatchKeySet({K::CPU, K::AutogradCPU}).raw_repr(), 0x100001u);
  EXPECT_EQ(DispatchKeySet({K::Conjugate, K::Negative}).raw_repr(), 0x60000u);  // Conjugate(18), Negative(19)
  EXPECT_EQ(DispatchKeySet::full().raw_repr(), 0x7FFFFFFu);
  EXPECT_EQ(sizeof(DispatchKeySet), 8u);
}

TEST(DispatchKeySetTest, RawReprRoundTrip) {
  DispatchKeySet a{K::SparseCsrCUDA, K::Python, K::AutocastCUDA};
  EXPECT_EQ(DispatchKeySet::from_raw_repr(a.raw_repr()), a);
  EXPECT_EQ(DispatchKeySet::from_raw_repr(0x100001u), DispatchKeySet({K::CPU, K::AutogradCPU}));
  // Bits beyond the runtime keys are not keys.
  EXPECT_EQ(DispatchKeySet::from_raw_repr(~uint64_t{0}), DispatchKeySet(DispatchKeySet::FULL));
  EXPECT_EQ(DispatchKeySet::from_raw_repr(uint64_t{1} << 40), DispatchKeySet());
}

TEST(DispatchKeySetTest, MembershipAndAlgebra) {
  const DispatchKeySet a{K::CPU, K::AutogradCPU, K::ADInplaceOrView};
  const DispatchKeySet b{K::CPU, K::CUDA};

  EXPECT_TRUE(a.has(K::CPU));
  EXPECT_TRUE(a.has(K::ADInplaceOrView));
  EXPECT_FALSE(a.has(K::CUDA));
  EXPECT_FALSE(a.has(K::AutogradCUDA));
  EXPECT_EQ(a.size(), 3u);
  EXPECT_TRUE(a.has_any(b));
  EXPECT_FALSE(a.has_any(DispatchKeySet({K::CUDA, K::Python})));
  EXPECT_FALSE(a.has_any(DispatchKeySet()));
  EXPECT_TRUE(a.has_all(DispatchKeySet({K::CPU, K::AutogradCPU})));
  EXPECT_FALSE(a.has_all(b));
  EXPECT_TRUE(a.has_all(DispatchKeySet()));
  EXPECT_TRUE(a.isSupersetOf(DispatchKeySet(K::ADInplaceOrView)));

  EXPECT_EQ(a | b, DispatchKeySet({K::CPU, K::CUDA, K::AutogradCPU, K::ADInplaceOrView}));
  EXPECT_EQ(a & b, DispatchKeySet(K::CPU));
  EXPECT_EQ(a - b, DispatchKeySet({K::AutogradCPU, K::ADInplaceOrView}));
  EXPECT_EQ(b - a, DispatchKeySet(K::CUDA));
  EXPECT_EQ(a ^ b, DispatchKeySet({K::CUDA, K::AutogradCPU, K::ADInplaceOrView}));
  EXPECT_EQ(a ^ a, DispatchKeySet());
  EXPECT_NE(a, b);
  EXPECT_EQ(a, DispatchKeySet({K::ADInplaceOrView, K::AutogradCPU, K::CPU, K::CPU}));

  DispatchKeySet c = a;
  c |= b;
  EXPECT_EQ(c.raw_repr(), 0x180003u);  // CPU, CUDA, ADInplaceOrView(20), AutogradCPU(21)
  c &= DispatchKeySet({K::CUDA, K::AutogradCPU, K::Profiler});
  EXPECT_EQ(c, DispatchKeySet({K::CUDA, K::AutogradCPU}));
  c -= DispatchKeySet(K::CUDA);
  EXPECT_EQ(c, DispatchKeySet(K::AutogradCPU));
  c ^= DispatchKeySet({K::AutogradCPU, K::Meta});
  EXPECT_EQ(c, DispatchKeySet(K::Meta));

  // add/remove return a new set and leave the original alone.
  const DispatchKeySet added = a.add(K::Python);
  EXPECT_EQ(added, DispatchKeySet({K::CPU, K::AutogradCPU, K::ADInplaceOrView, K::Python}));
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(a.remove(K::AutogradCPU), DispatchKeySet({K::CPU, K::ADInplaceOrView}));
  EXPECT_EQ(a.remove(K::CUDA), a);
  EXPECT_EQ(a.add(b), a | b);
  EXPECT_EQ(a.remove(b), DispatchKeySet({K::AutogradCPU, K::ADInplaceOrView}));
}

TEST(DispatchKeySetTest, HighestPriorityTypeId) {
  const std::vector<std::pair<DispatchKeySet, DispatchKey>> rows = {
      {DispatchKeySet(K::CPU), K::CPU},
      {DispatchKeySet({K::CPU, K::AutogradCPU}), K::AutogradCPU},
      {DispatchKeySet({K::CPU, K::AutogradCPU, K::ADInplaceOrView}), K::AutogradCPU},
      {DispatchKeySet({K::SparseCUDA, K::Python, K::BackendSelect}), K::Python},
      {DispatchKeySet({K::Meta, K::QuantizedCPU, K::CUDA}), K::QuantizedCPU},
      {DispatchKeySet({K::PythonTLSSnapshot, K::CPU}), K::PythonTLSSnapshot},
      {DispatchKeySet({K::AutocastCUDA, K::AutogradOther, K::Profiler}), K::Profiler},
      {DispatchKeySet({K::AutogradOther, K::AutogradCUDA}), K::AutogradOther},
      {DispatchKeySet(DispatchKeySet::FULL), K::PythonTLSSnapshot},
      // The math bits sit between Python and ADInplaceOrView; Negative outranks Conjugate.
      {DispatchKeySet({K::CPU, K::Conjugate, K::Negative, K::ADInplaceOrView}), K::ADInplaceOrView},
      {DispatchKeySet({K::CPU, K::Conjugate, K::Negative}), K::Negative},
      {DispatchKeySet({K::CPU, K::Conjugate}), K::Conjugate},
      {DispatchKeySet({K::CPU, K::Python, K::Conjugate}), K::Conjugate},
      {DispatchKeySet({K::CPU, K::Conjugate, K::AutogradCPU}), K::AutogradCPU},
  };
  for (const auto& [ks, expected] : rows) {
    EXPECT_EQ(ks.highestPriorityTypeId(), expected) << ks;
  }
  // Each key alone is its own highest.
  for (DispatchKey k : kRuntimeKeysHighestFirst) {
    EXPECT_EQ(DispatchKeySet(k).highestPriorityTypeId(), k) << c10::toString(k);
  }
  static_assert(DispatchKeySet({K::CUDA, K::AutogradCUDA}).highestPriorityTypeId() == K::AutogradCUDA);
}

TEST(DispatchKeySetTest, HighestPriorityBackendTypeId) {
  const std::vector<std::pair<DispatchKeySet, DispatchKey>> rows = {
      {DispatchKeySet({K::CPU, K::AutogradCPU, K::ADInplaceOrView}), K::CPU},
      {DispatchKeySet({K::QuantizedCUDA, K::SparseCPU, K::AutocastCUDA}), K::QuantizedCUDA},
      {DispatchKeySet({K::Meta, K::CUDA, K::Profiler, K::PythonTLSSnapshot}), K::Meta},
      {DispatchKeySet({K::Python, K::BackendSelect, K::AutogradOther}), K::Undefined},
      {DispatchKeySet({K::MkldnnCPU, K::QuantizedCUDA, K::AutogradOther}), K::MkldnnCPU},
      {DispatchKeySet(DispatchKeySet::FULL), K::QuantizedMeta},
  };
  for (const auto& [ks, expected] : rows) {
    EXPECT_EQ(ks.highestPriorityBackendTypeId(), expected) << ks;
  }
}

TEST(DispatchKeySetTest, IteratesHighestPriorityFirst) {
  const DispatchKeySet ks{K::CPU, K::AutogradCPU, K::Python, K::ADInplaceOrView, K::Profiler};
  const std::vector<DispatchKey> expected = {K::Profiler, K::AutogradCPU, K::ADInplaceOrView, K::Python, K::CPU};
  EXPECT_EQ(keysOf(ks), expected);
  EXPECT_EQ(std::distance(ks.begin(), ks.end()), 5);

  EXPECT_EQ(keysOf(DispatchKeySet(DispatchKeySet::FULL)), kRuntimeKeysHighestFirst);
  EXPECT_EQ(keysOf(DispatchKeySet(K::PythonTLSSnapshot)), std::vector<DispatchKey>{K::PythonTLSSnapshot});
  EXPECT_EQ(keysOf(DispatchKeySet(K::CPU)), std::vector<DispatchKey>{K::CPU});
  EXPECT_TRUE(keysOf(DispatchKeySet()).empty());

  // Forward-iterator mechanics: post-increment, copies iterate independently.
  auto it = ks.begin();
  auto copy = it++;
  EXPECT_EQ(*copy, K::Profiler);
  EXPECT_EQ(*it, K::AutogradCPU);
  ++copy;
  EXPECT_EQ(copy, it);
  EXPECT_EQ(DispatchKeySet::iterator(), DispatchKeySet().end());
}

TEST(DispatchKeySetTest, Printing) {
  EXPECT_EQ(printed(DispatchKeySet({K::CPU, K::AutogradCPU})), "DispatchKeySet(AutogradCPU, CPU)");
  EXPECT_EQ(printed(DispatchKeySet({K::SparseCsrCUDA, K::ADInplaceOrView, K::AutogradOther})),
            "DispatchKeySet(AutogradOther, ADInplaceOrView, SparseCsrCUDA)");
  EXPECT_EQ(c10::toString(DispatchKeySet(K::Meta)), "DispatchKeySet(Meta)");
  EXPECT_EQ(c10::str(DispatchKeySet()), "DispatchKeySet()");
}

TEST(DispatchKeySetTest, FullAfter) {
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::FULL_AFTER, K::AutogradCPU),
            DispatchKeySet({K::CPU, K::CUDA, K::Meta, K::SparseCPU, K::SparseCUDA, K::SparseCsrCPU, K::SparseCsrCUDA,
                            K::QuantizedCPU, K::QuantizedCUDA, K::MkldnnCPU, K::NestedTensorCPU, K::SparseMeta,
                            K::SparseCsrMeta, K::QuantizedMeta, K::BackendSelect,
                            K::Python, K::Named, K::Conjugate, K::Negative, K::ADInplaceOrView}));
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::FULL_AFTER, K::CUDA), DispatchKeySet(K::CPU));
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::FULL_AFTER, K::CPU), DispatchKeySet());
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::FULL_AFTER, K::PythonTLSSnapshot),
            DispatchKeySet(DispatchKeySet::FULL).remove(K::PythonTLSSnapshot));
  // A redispatch below Python from a CPU tensor with Python set lands on CPU.
  DispatchKeySet tensor{K::CPU, K::Python, K::ADInplaceOrView, K::AutogradCPU};
  EXPECT_EQ((tensor & DispatchKeySet(DispatchKeySet::FULL_AFTER, K::AutogradCPU)).highestPriorityTypeId(),
            K::ADInplaceOrView);
  EXPECT_EQ((tensor & DispatchKeySet(DispatchKeySet::FULL_AFTER, K::Python)).highestPriorityTypeId(), K::CPU);
  // A conj() view of a negative view: autograd, then ADInplaceOrView, then each math-bit
  // fallback redispatches below its own key, Negative first, and the call ends on CPU.
  DispatchKeySet both{K::CPU, K::Conjugate, K::Negative, K::ADInplaceOrView, K::AutogradCPU};
  EXPECT_EQ((both & DispatchKeySet(DispatchKeySet::FULL_AFTER, K::ADInplaceOrView)).highestPriorityTypeId(),
            K::Negative);
  EXPECT_EQ((both & DispatchKeySet(DispatchKeySet::FULL_AFTER, K::Negative)).highestPriorityTypeId(), K::Conjugate);
  EXPECT_EQ((both & DispatchKeySet(DispatchKeySet::FULL_AFTER, K::Conjugate)).highestPriorityTypeId(), K::CPU);
  EXPECT_EQ(DispatchKeySet(DispatchKeySet::FULL_AFTER, K::Conjugate),
            DispatchKeySet({K::CPU, K::CUDA, K::Meta, K::SparseCPU, K::SparseCUDA, K::SparseCsrCPU, K::SparseCsrCUDA,
                            K::QuantizedCPU, K::QuantizedCUDA, K::MkldnnCPU, K::NestedTensorCPU, K::SparseMeta,
                            K::SparseCsrMeta, K::QuantizedMeta, K::BackendSelect,
                            K::Python, K::Named}));
  // The sets the wrappers redispatch with are FULL_AFTER ranges: they keep the math bits.
  EXPECT_TRUE(c10::after_autograd_keyset.has_all(c10::math_bits_keyset));
  EXPECT_TRUE(c10::after_ADInplaceOrView_keyset.has_all(c10::math_bits_keyset));
}

TEST(DispatchKeySetTest, AliasAndMarkerKeysAreNotMembers) {
  for (DispatchKey k : {K::EndOfRuntimeKeys, K::Autograd, K::CompositeImplicitAutograd, K::CompositeExplicitAutograd,
                        static_cast<DispatchKey>(64), static_cast<DispatchKey>(255)}) {
    EXPECT_THROW(DispatchKeySet{k}, c10::ValueError) << static_cast<int>(k);
    EXPECT_THROW(DispatchKeySet(K::CPU).has(k), c10::ValueError) << static_cast<int>(k);
    EXPECT_THROW(std::ignore = DispatchKeySet(K::CPU).add(k), c10::ValueError) << static_cast<int>(k);
  }
  try {
    DispatchKeySet ks(K::CompositeImplicitAutograd);
    ADD_FAILURE() << ks;
  } catch (const c10::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("alias key CompositeImplicitAutograd"), std::string::npos) << e.what();
  }
}

TEST(DispatchKeySetTest, AliasExpansion) {
  // Every backend but NestedTensorCPU: composites would read a nested tensor's sizes.
  const DispatchKeySet backends{K::CPU,          K::CUDA,          K::Meta,          K::SparseCPU,    K::SparseCUDA,
                                K::SparseCsrCPU, K::SparseCsrCUDA, K::QuantizedCPU,  K::QuantizedCUDA, K::MkldnnCPU,
                                K::SparseMeta,   K::SparseCsrMeta,  K::QuantizedMeta};
  const DispatchKeySet autograd{K::AutogradCPU, K::AutogradCUDA, K::AutogradOther};
  const DispatchKeySet math = backends | autograd;

  EXPECT_EQ(c10::backend_dispatch_keyset, backends);
  EXPECT_EQ(c10::autograd_dispatch_keyset, autograd);
  EXPECT_EQ(c10::autocast_dispatch_keyset, DispatchKeySet({K::AutocastCPU, K::AutocastCUDA}));
  EXPECT_EQ(c10::math_dispatch_keyset, math);
  // The math bits are wrappers with boxed fallbacks: no alias registers kernels for them.
  EXPECT_EQ(c10::math_bits_keyset, DispatchKeySet({K::Conjugate, K::Negative}));
  EXPECT_FALSE(c10::math_dispatch_keyset.has_any(c10::math_bits_keyset));
  EXPECT_FALSE(c10::backend_dispatch_keyset.has_any(c10::math_bits_keyset));

  EXPECT_EQ(c10::getRuntimeDispatchKeySet(K::Autograd), autograd);
  EXPECT_EQ(c10::getRuntimeDispatchKeySet(K::CompositeExplicitAutograd), backends);
  EXPECT_EQ(c10::getRuntimeDispatchKeySet(K::CompositeImplicitAutograd), math);
  EXPECT_EQ(c10::getRuntimeDispatchKeySet(K::CompositeImplicitAutograd).size(), 16u);
  EXPECT_FALSE(c10::backend_dispatch_keyset.has(K::NestedTensorCPU));
  EXPECT_EQ(c10::all_backends_keyset, backends.add(K::NestedTensorCPU));
  for (DispatchKey k : kRuntimeKeysHighestFirst) {
    EXPECT_EQ(c10::getRuntimeDispatchKeySet(k), DispatchKeySet(k)) << c10::toString(k);
  }
  EXPECT_EQ(c10::getRuntimeDispatchKeySet(K::Undefined), DispatchKeySet());
  EXPECT_THROW(c10::getRuntimeDispatchKeySet(K::EndOfRuntimeKeys), c10::ValueError);

  EXPECT_TRUE(c10::runtimeDispatchKeySetHas(K::CompositeImplicitAutograd, K::AutogradCUDA));
  EXPECT_TRUE(c10::runtimeDispatchKeySetHas(K::CompositeImplicitAutograd, K::SparseCsrCPU));
  EXPECT_FALSE(c10::runtimeDispatchKeySetHas(K::CompositeImplicitAutograd, K::Python));
  EXPECT_FALSE(c10::runtimeDispatchKeySetHas(K::CompositeImplicitAutograd, K::ADInplaceOrView));
  EXPECT_TRUE(c10::runtimeDispatchKeySetHas(K::CompositeExplicitAutograd, K::Meta));
  EXPECT_FALSE(c10::runtimeDispatchKeySetHas(K::CompositeExplicitAutograd, K::AutogradCPU));
  EXPECT_FALSE(c10::runtimeDispatchKeySetHas(K::CompositeExplicitAutograd, K::BackendSelect));
  EXPECT_TRUE(c10::runtimeDispatchKeySetHas(K::Autograd, K::AutogradOther));
  EXPECT_FALSE(c10::runtimeDispatchKeySetHas(K::Autograd, K::CPU));
  EXPECT_TRUE(c10::runtimeDispatchKeySetHas(K::CPU, K::CPU));
  EXPECT_FALSE(c10::runtimeDispatchKeySetHas(K::CPU, K::CUDA));
  static_assert(c10::runtimeDispatchKeySetHas(K::Autograd, K::AutogradCPU));
}

TEST(DispatchKeySetTest, AutogradRelatedKeys) {
  EXPECT_EQ(c10::autogradRelatedKeys(K::CPU), DispatchKeySet({K::ADInplaceOrView, K::AutogradCPU}));
  EXPECT_EQ(c10::autogradRelatedKeys(K::CUDA), DispatchKeySet({K::ADInplaceOrView, K::AutogradCUDA}));
  EXPECT_EQ(c10::autogradRelatedKeys(K::Meta), DispatchKeySet({K::ADInplaceOrView, K::AutogradOther}));
  EXPECT_EQ(c10::autogradRelatedKeys(K::SparseCUDA), DispatchKeySet({K::ADInplaceOrView, K::AutogradOther}));
  EXPECT_EQ(c10::autogradRelatedKeys(K::QuantizedCPU), DispatchKeySet({K::ADInplaceOrView, K::AutogradOther}));
  // A CPU tensor's full key set dispatches to autograd first, then to the backend.
  DispatchKeySet tensor = DispatchKeySet(K::CPU) | c10::autogradRelatedKeys(K::CPU);
  EXPECT_EQ(printed(tensor), "DispatchKeySet(AutogradCPU, ADInplaceOrView, CPU)");
  EXPECT_EQ(tensor.highestPriorityBackendTypeId(), K::CPU);
}

}  // namespace
