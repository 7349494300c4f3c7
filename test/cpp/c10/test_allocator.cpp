#include <c10/core/AllocationFaults.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace {

TEST(CPUAllocator, SixtyFourByteAlignment) {
  c10::Allocator* a = c10::GetCPUAllocator();
  for (size_t n : {1, 3, 63, 64, 65, 1000, 4096, 1 << 20}) {
    c10::DataPtr p = a->allocate(n);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u) << n;
    EXPECT_EQ(p.device(), c10::Device("cpu"));
    std::memset(p.get(), 0xAB, n);  // the whole block is writable (ASan checks the bounds)
  }
}

TEST(CPUAllocator, ZeroBytesGivesAnEmptyCpuPointer) {
  c10::DataPtr p = c10::GetCPUAllocator()->allocate(0);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_FALSE(p);
  EXPECT_EQ(p.device().type(), c10::DeviceType::CPU);
}

TEST(CPUAllocator, FailureNamesTheSize) {
  const size_t huge = std::numeric_limits<size_t>::max() / 4;  // ~4.6e18 bytes
  try {
    c10::GetCPUAllocator()->allocate(huge);
    FAIL() << "allocating " << huge << " bytes should fail";
  } catch (const c10::OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(huge)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not enough memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c10::alloc_cpu(std::numeric_limits<size_t>::max()), c10::OutOfMemoryError);
}

int g_deleted = 0;
void counting_delete(void* p) {
  ++g_deleted;
  c10::free_cpu(p);
}

TEST(DataPtr, DeleterRunsOnceWhenCleared) {
  g_deleted = 0;
  {
    void* raw = c10::alloc_cpu(16);
    c10::DataPtr p(raw, raw, &counting_delete, c10::Device("cpu"));
    c10::DataPtr moved = std::move(p);
    EXPECT_EQ(moved.get(), raw);
    EXPECT_EQ(moved.get_deleter(), &counting_delete);
    moved.clear();
    EXPECT_EQ(g_deleted, 1);
    EXPECT_EQ(moved.get(), nullptr);
  }
  EXPECT_EQ(g_deleted, 1);
}

TEST(Allocator, RegistryHasCpuAndMetaButNotCuda) {
  EXPECT_EQ(c10::GetAllocator(c10::DeviceType::CPU), c10::GetCPUAllocator());
  c10::DataPtr meta = c10::GetAllocator(c10::DeviceType::Meta)->allocate(1 << 30);
  EXPECT_EQ(meta.get(), nullptr);  // meta memory is never allocated
  EXPECT_EQ(meta.device().type(), c10::DeviceType::Meta);
  try {
    c10::GetAllocator(c10::DeviceType::CUDA);
    FAIL() << "no CUDA allocator is registered in c10 alone";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
}

TEST(Allocator, SetAllocatorSwapsAndRestores) {
  struct Tagged final : c10::Allocator {
    c10::DataPtr allocate(size_t n) override {
      ++calls;
      return c10::GetCPUAllocator()->allocate(n);
    }
    int calls = 0;
  } tagged;
  c10::Allocator* previous = c10::SetAllocator(c10::DeviceType::Meta, &tagged);
  c10::GetAllocator(c10::DeviceType::Meta)->allocate(8);
  EXPECT_EQ(tagged.calls, 1);
  EXPECT_EQ(c10::SetAllocator(c10::DeviceType::Meta, previous), &tagged);
}

TEST(Storage, OwnsItsBytesAndSharesOnCopy) {
  c10::Storage s(c10::StorageImpl::use_byte_size_t{}, 256, c10::GetCPUAllocator(), /*resizable=*/true);
  EXPECT_EQ(s.nbytes(), 256u);
  EXPECT_NE(s.data(), nullptr);
  EXPECT_TRUE(s.unsafeGetStorageImpl()->resizable());
  c10::Storage alias = s;
  EXPECT_TRUE(alias.is_alias_of(s));
  EXPECT_EQ(s.use_count(), 2u);
  c10::DataPtr old = s.unsafeGetStorageImpl()->set_data_ptr(c10::GetCPUAllocator()->allocate(8));
  EXPECT_NE(old.get(), nullptr);
  EXPECT_NE(alias.data(), old.get());
}

TEST(Storage, AdoptsExternalMemory) {
  g_deleted = 0;
  {
    void* raw = c10::alloc_cpu(32);
    c10::Storage s(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t{}, 32,
                                                         c10::DataPtr(raw, raw, &counting_delete, c10::Device("cpu")),
                                                         nullptr, false));
    EXPECT_EQ(s.data(), raw);
  }
  EXPECT_EQ(g_deleted, 1);
  EXPECT_THROW(c10::StorageImpl(c10::StorageImpl::use_byte_size_t{}, 0, c10::DataPtr(), nullptr, /*resizable=*/true),
               c10::Error);
}

}  // namespace

// The test hook: the n-th allocation from arming fails once with OutOfMemoryError (on the
// installed allocator and the plain one alike), zero-byte requests are not counted, and a
// negative n counts without failing.
TEST(AllocationFaults, TheNthAllocationFailsOnceAndAllAreCounted) {
  for (c10::Allocator* allocator : {c10::GetCPUAllocator(), c10::GetPlainCPUAllocator()}) {
    c10::set_allocation_fault(3);
    c10::DataPtr a = allocator->allocate(100);
    c10::DataPtr empty = allocator->allocate(0);
    c10::DataPtr b = allocator->allocate(1 << 20);
    EXPECT_THROW(allocator->allocate(64), c10::OutOfMemoryError);
    c10::DataPtr c = allocator->allocate(64);  // once only
    EXPECT_TRUE(a && b && c);
    EXPECT_EQ(c10::allocation_fault_count(), 4);
    c10::set_allocation_fault(-1);
    for (int i = 0; i < 5; ++i) allocator->allocate(8);
    EXPECT_EQ(c10::allocation_fault_count(), 5);
    c10::set_allocation_fault(0);
    allocator->allocate(8);
    EXPECT_EQ(c10::allocation_fault_count(), 0);
  }
}
