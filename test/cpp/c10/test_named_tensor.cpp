// Dimname (interning, the identifier rule and torch's message, matching) and what a
// TensorImpl does with names: the Named key follows them, an all-wildcard list is no
// names, a change of rank drops them, and a view built from a named impl's keys starts
// unnamed. Name propagation through operators is tested against torch in Python.
#include <c10/core/CPUAllocator.h>
#include <c10/core/NamedTensor.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

namespace {

using c10::Dimname;
using c10::DispatchKey;
using c10::TensorImpl;

c10::intrusive_ptr<TensorImpl> make_cpu(std::vector<int64_t> sizes) {
  c10::Storage storage(c10::StorageImpl::use_byte_size_t{}, 64 * 4, c10::GetCPUAllocator());
  auto t = c10::make_intrusive<TensorImpl>(std::move(storage), c10::kFloat);
  t->set_sizes_contiguous(sizes);
  return t;
}

std::unique_ptr<c10::NamedTensorMeta> meta(std::initializer_list<Dimname> names) {
  return std::make_unique<c10::NamedTensorMeta>(c10::NamedTensorMeta{names});
}

TEST(Dimname, InternedNamesCompareEqual) {
  Dimname a = Dimname::fromString("batch");
  Dimname b = Dimname::fromString(std::string("bat") + "ch");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, Dimname::fromString("batch2"));
  EXPECT_EQ(a.str(), "batch");
  EXPECT_TRUE(Dimname::wildcard().isWildcard());
  EXPECT_EQ(Dimname::wildcard().str(), "None");
}

TEST(Dimname, IdentifierRuleAndTorchsMessage) {
  for (const char* ok : {"N", "_x", "a1_b2", "Z9"}) EXPECT_NO_THROW(Dimname::fromString(ok)) << ok;
  for (const char* bad : {"", "1a", "a b", "a-b", "é"}) {
    try {
      Dimname::fromString(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const c10::Error& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("Invalid name: a valid identifier contains only digits, alphabetical characters, and/or "
                            "underscore and starts with a non-digit. got: '") +
                    bad + "'.");
    }
  }
}

TEST(Dimname, MatchingUnifyingAndPrinting) {
  Dimname n = Dimname::fromString("N"), c = Dimname::fromString("C"), w = Dimname::wildcard();
  EXPECT_TRUE(n.matches(w));
  EXPECT_TRUE(w.matches(n));
  EXPECT_TRUE(n.matches(n));
  EXPECT_FALSE(n.matches(c));
  EXPECT_EQ(w.unify(n), n);
  EXPECT_EQ(n.unify(w), n);
  EXPECT_EQ(c10::namesToString({n, w, c}), "['N', None, 'C']");
  EXPECT_EQ(c10::tensorNamesToString({}), "Tensor[]");
  std::ostringstream os;
  os << n << ' ' << w;
  EXPECT_EQ(os.str(), "'N' None");
}

TEST(TensorImplNames, TheNamedKeyFollowsTheNames) {
  auto t = make_cpu({2, 3});
  EXPECT_FALSE(t->has_names());
  EXPECT_EQ(t->named_tensor_meta(), nullptr);
  t->set_named_tensor_meta(meta({Dimname::fromString("N"), Dimname::wildcard()}));
  EXPECT_TRUE(t->has_names());
  EXPECT_TRUE(t->key_set().has(DispatchKey::Named));
  ASSERT_NE(t->named_tensor_meta(), nullptr);
  EXPECT_EQ(t->named_tensor_meta()->names[0], Dimname::fromString("N"));
  // all wildcards are no names at all
  t->set_named_tensor_meta(meta({Dimname::wildcard(), Dimname::wildcard()}));
  EXPECT_FALSE(t->has_names());
  EXPECT_EQ(t->named_tensor_meta(), nullptr);
}

TEST(TensorImplNames, WrongCountIsRefused) {
  auto t = make_cpu({2, 3});
  EXPECT_THROW(t->set_named_tensor_meta(meta({Dimname::fromString("N")})), c10::Error);
  EXPECT_FALSE(t->has_names());
}

TEST(TensorImplNames, ARankChangeDropsNamesASameRankOneKeepsThem) {
  auto t = make_cpu({2, 3});
  t->set_named_tensor_meta(meta({Dimname::fromString("N"), Dimname::fromString("C")}));
  t->set_sizes_contiguous({3, 2});
  EXPECT_TRUE(t->has_names());
  t->set_sizes_and_strides({6}, {1});
  EXPECT_FALSE(t->has_names());
  EXPECT_FALSE(t->key_set().has(DispatchKey::Named));
}

TEST(TensorImplNames, AViewFromANamedImplsKeysStartsUnnamed) {
  auto t = make_cpu({2, 3});
  t->set_named_tensor_meta(meta({Dimname::fromString("N"), Dimname::fromString("C")}));
  auto view = c10::make_intrusive<TensorImpl>(t->storage(), t->key_set(), t->scalar_type(), t->layout());
  EXPECT_FALSE(view->has_names());
  EXPECT_FALSE(view->key_set().has(DispatchKey::Named));
  EXPECT_TRUE(view->key_set().has(DispatchKey::CPU));
}

}  // namespace
