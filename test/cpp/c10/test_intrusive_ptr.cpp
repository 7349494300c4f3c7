// intrusive_ptr and weak_intrusive_ptr: reference counts through every operation, the
// release_resources-then-delete lifecycle, and a multi-threaded hammer on one object.
#include <c10/util/intrusive_ptr.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

namespace {

using c10::intrusive_ptr;
using c10::make_intrusive;
using c10::weak_intrusive_ptr;

// Records its lifecycle into a log the test owns.
class Tracked : public c10::intrusive_ptr_target {
 public:
  explicit Tracked(std::vector<std::string>* log, int value = 0) : log_(log), value_(value) { log_->push_back("ctor"); }
  ~Tracked() override { log_->push_back("dtor"); }
  int value() const { return value_; }
  void set_value(int v) { value_ = v; }

 protected:
  void release_resources() override { log_->push_back("release"); }

 private:
  std::vector<std::string>* log_;
  int value_;
};

class Base : public c10::intrusive_ptr_target {
 public:
  explicit Base(int* dtor_calls) : dtor_calls_(dtor_calls) {}
  ~Base() override { ++*dtor_calls_; }
  virtual int kind() const { return 1; }

 private:
  int* dtor_calls_;
};

class Derived : public Base {
 public:
  Derived(int* base_dtors, int* derived_dtors) : Base(base_dtors), derived_dtors_(derived_dtors) {}
  ~Derived() override { ++*derived_dtors_; }
  int kind() const override { return 2; }

 private:
  int* derived_dtors_;
};

struct Plain : c10::intrusive_ptr_target {
  explicit Plain(int v = 0) : v(v) {}
  int v;
};

using Log = std::vector<std::string>;

TEST(IntrusivePtrTest, NullPointer) {
  intrusive_ptr<Plain> p;
  EXPECT_FALSE(p);
  EXPECT_FALSE(p.defined());
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(p.use_count(), 0u);
  EXPECT_EQ(p.weak_use_count(), 0u);
  EXPECT_FALSE(p.unique());
  EXPECT_TRUE(p == nullptr);
  p.reset();  // no-op
  intrusive_ptr<Plain> q = nullptr;
  EXPECT_EQ(p, q);
  EXPECT_EQ(sizeof(intrusive_ptr<Plain>), sizeof(Plain*));
  EXPECT_EQ(sizeof(weak_intrusive_ptr<Plain>), sizeof(Plain*));
}

TEST(IntrusivePtrTest, MakeIntrusiveOwnsOneReference) {
  Log log;
  {
    auto p = make_intrusive<Tracked>(&log, 7);
    EXPECT_TRUE(p);
    EXPECT_TRUE(p.defined());
    EXPECT_EQ(p->value(), 7);
    EXPECT_EQ((*p).value(), 7);
    EXPECT_EQ(p.use_count(), 1u);
    EXPECT_EQ(p.weak_use_count(), 1u);  // the strong refs' shared weak reference
    EXPECT_TRUE(p.unique());
    EXPECT_EQ(log, Log({"ctor"}));
  }
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));
}

TEST(IntrusivePtrTest, CopyAndMoveCounts) {
  Log log;
  auto a = make_intrusive<Tracked>(&log);
  Tracked* raw = a.get();
  {
    intrusive_ptr<Tracked> b = a;  // copy ctor
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_EQ(b.use_count(), 2u);
    EXPECT_EQ(a.weak_use_count(), 1u);
    EXPECT_FALSE(a.unique());
    EXPECT_EQ(b.get(), raw);

    intrusive_ptr<Tracked> c = std::move(b);  // move ctor: count unchanged, source null
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): moved-from is null by contract
    EXPECT_EQ(c.get(), raw);

    intrusive_ptr<Tracked> d;
    d = c;  // copy assign
    EXPECT_EQ(a.use_count(), 3u);
    intrusive_ptr<Tracked> e;
    e = std::move(d);  // move assign
    EXPECT_EQ(a.use_count(), 3u);
    EXPECT_FALSE(d);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(e.get(), raw);

    // Self-assignment keeps the reference.
    auto& e_alias = e;
    e = e_alias;
    EXPECT_EQ(a.use_count(), 3u);
    e = std::move(e_alias);
    EXPECT_EQ(a.use_count(), 3u);
    EXPECT_EQ(e.get(), raw);
  }
  EXPECT_EQ(a.use_count(), 1u);
  EXPECT_EQ(log, Log({"ctor"}));

  // Assigning over the last reference destroys the old object.
  Log log2;
  a = make_intrusive<Tracked>(&log2);
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));
  EXPECT_EQ(a.use_count(), 1u);
  a = nullptr;
  EXPECT_EQ(log2, Log({"ctor", "release", "dtor"}));
}

TEST(IntrusivePtrTest, Reset) {
  Log log;
  auto a = make_intrusive<Tracked>(&log);
  auto b = a;
  b.reset();
  EXPECT_FALSE(b);
  EXPECT_EQ(a.use_count(), 1u);
  EXPECT_EQ(log, Log({"ctor"}));
  a.reset();
  EXPECT_FALSE(a);
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));
}

TEST(IntrusivePtrTest, ReleaseAndReclaim) {
  Log log;
  auto a = make_intrusive<Tracked>(&log);
  auto keep = a;
  Tracked* raw = a.release();
  EXPECT_FALSE(a);
  EXPECT_EQ(keep.use_count(), 2u);  // release() keeps the reference
  {
    auto back = intrusive_ptr<Tracked>::reclaim(raw);
    EXPECT_EQ(back.get(), raw);
    EXPECT_EQ(keep.use_count(), 2u);  // reclaim() adds none
  }
  EXPECT_EQ(keep.use_count(), 1u);
  // Released alone, the object survives until reclaimed and dropped.
  raw = keep.release();
  EXPECT_EQ(log, Log({"ctor"}));
  intrusive_ptr<Tracked>::reclaim(raw).reset();
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));
  EXPECT_FALSE(intrusive_ptr<Tracked>::reclaim(nullptr));
}

TEST(IntrusivePtrTest, UnsafeReclaimFromNonowningAddsAReference) {
  auto a = make_intrusive<Plain>(3);
  {
    auto b = intrusive_ptr<Plain>::unsafe_reclaim_from_nonowning(a.get());
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_EQ(b, a);
  }
  EXPECT_EQ(a.use_count(), 1u);
  EXPECT_FALSE(intrusive_ptr<Plain>::unsafe_reclaim_from_nonowning(nullptr));
}

TEST(IntrusivePtrTest, RejectsObjectsNoIntrusivePtrOwns) {
  // Made with plain new (a member or a stack object would do as well): its counts stay 0.
  auto unowned = std::make_unique<Plain>(1);
  EXPECT_THROW(intrusive_ptr<Plain>::unsafe_reclaim_from_nonowning(unowned.get()), c10::Error);
  EXPECT_THROW(intrusive_ptr<Plain>::reclaim(unowned.get()), c10::Error);
  EXPECT_THROW(c10::raw::intrusive_ptr::incref(unowned.get()), c10::Error);
  // The failed attempts left the (zero) count alone, so the destructor's check passes.
}

TEST(IntrusivePtrTest, CopiedTargetStartsUnowned) {
  auto a = make_intrusive<Plain>(5);
  auto b = make_intrusive<Plain>(*a);  // copy-constructs the object, not the counts
  EXPECT_EQ(b->v, 5);
  EXPECT_EQ(a.use_count(), 1u);
  EXPECT_EQ(b.use_count(), 1u);
  EXPECT_EQ(b.weak_use_count(), 1u);
  auto c = make_intrusive<Plain>(9);
  auto keep_c = c;
  *c = *a;  // assignment copies the payload only
  EXPECT_EQ(c->v, 5);
  EXPECT_EQ(c.use_count(), 2u);
  EXPECT_EQ(a.use_count(), 1u);
}

TEST(IntrusivePtrTest, ReleaseResourcesRunsBeforeDestructorAndOnlyOnce) {
  Log log;
  auto a = make_intrusive<Tracked>(&log);
  weak_intrusive_ptr<Tracked> w(a);
  EXPECT_EQ(a.weak_use_count(), 2u);
  a.reset();
  // Last strong reference gone: resources released, but the memory lives for the weak ref.
  EXPECT_EQ(log, Log({"ctor", "release"}));
  EXPECT_TRUE(w.expired());
  EXPECT_EQ(w.use_count(), 0u);
  EXPECT_EQ(w.weak_use_count(), 1u);
  EXPECT_FALSE(w.lock());
  EXPECT_EQ(log, Log({"ctor", "release"}));
  w.reset();
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));
}

// A parent that drops its child in release_resources: the child goes when the parent's last
// strong ref does, even while a weak ref keeps the parent's memory.
class Parent : public c10::intrusive_ptr_target {
 public:
  explicit Parent(intrusive_ptr<Tracked> child) : child_(std::move(child)) {}
  const intrusive_ptr<Tracked>& child() const { return child_; }

 protected:
  void release_resources() override { child_.reset(); }

 private:
  intrusive_ptr<Tracked> child_;
};

TEST(IntrusivePtrTest, ReleaseResourcesFreesMembersEarly) {
  Log log;
  auto parent = make_intrusive<Parent>(make_intrusive<Tracked>(&log));
  weak_intrusive_ptr<Parent> w(parent);
  EXPECT_EQ(parent->child().use_count(), 1u);
  parent.reset();
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));
  EXPECT_TRUE(w.expired());
}

TEST(IntrusivePtrTest, WeakPointerCountsAndLock) {
  Log log;
  auto a = make_intrusive<Tracked>(&log, 11);
  weak_intrusive_ptr<Tracked> w1(a);
  EXPECT_EQ(a.use_count(), 1u);
  EXPECT_EQ(a.weak_use_count(), 2u);
  EXPECT_FALSE(a.unique());  // a weak watcher exists
  EXPECT_FALSE(w1.expired());
  EXPECT_EQ(w1.use_count(), 1u);

  weak_intrusive_ptr<Tracked> w2 = w1;  // copy
  EXPECT_EQ(a.weak_use_count(), 3u);
  weak_intrusive_ptr<Tracked> w3 = std::move(w2);  // move
  EXPECT_EQ(a.weak_use_count(), 3u);
  EXPECT_TRUE(w2.expired());  // NOLINT(bugprone-use-after-move): moved-from is null
  EXPECT_FALSE(w2.lock());
  EXPECT_EQ(w2.weak_use_count(), 0u);
  weak_intrusive_ptr<Tracked> w4;
  w4 = w3;  // copy assign
  EXPECT_EQ(a.weak_use_count(), 4u);
  w4 = std::move(w3);  // move assign over an existing weak ref
  EXPECT_EQ(a.weak_use_count(), 3u);
  EXPECT_EQ(w4, w1);

  {
    intrusive_ptr<Tracked> locked = w1.lock();
    ASSERT_TRUE(locked);
    EXPECT_EQ(locked.get(), a.get());
    EXPECT_EQ(locked->value(), 11);
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_EQ(a.weak_use_count(), 3u);
  }
  EXPECT_EQ(a.use_count(), 1u);

  w4.reset();
  EXPECT_EQ(a.weak_use_count(), 2u);
  a.reset();
  EXPECT_TRUE(w1.expired());
  EXPECT_FALSE(w1.lock());
  EXPECT_EQ(log, Log({"ctor", "release"}));
  weak_intrusive_ptr<Tracked> w5 = w1;  // copying an expired weak ref is fine
  EXPECT_EQ(w5.weak_use_count(), 2u);
  w1.reset();
  EXPECT_EQ(log, Log({"ctor", "release"}));
  w5.reset();
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));

  weak_intrusive_ptr<Tracked> null_weak;
  EXPECT_TRUE(null_weak.expired());
  EXPECT_FALSE(null_weak.lock());
}

TEST(IntrusivePtrTest, WeakAssignFromStrong) {
  auto a = make_intrusive<Plain>(1);
  auto b = make_intrusive<Plain>(2);
  weak_intrusive_ptr<Plain> w(a);
  w = b;
  EXPECT_EQ(a.weak_use_count(), 1u);
  EXPECT_EQ(b.weak_use_count(), 2u);
  EXPECT_EQ(w.lock()->v, 2);
}

TEST(IntrusivePtrTest, DerivedToBaseConversion) {
  int base_dtors = 0;
  int derived_dtors = 0;
  {
    intrusive_ptr<Derived> d = make_intrusive<Derived>(&base_dtors, &derived_dtors);
    intrusive_ptr<Base> b1 = d;  // copy-convert
    EXPECT_EQ(d.use_count(), 2u);
    EXPECT_EQ(b1->kind(), 2);
    EXPECT_TRUE(b1 == d);
    intrusive_ptr<Base> b2 = std::move(d);  // move-convert
    EXPECT_FALSE(d);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(b1.use_count(), 2u);
    intrusive_ptr<Base> b3;
    b3 = make_intrusive<Derived>(&base_dtors, &derived_dtors);  // move-assign from derived
    EXPECT_EQ(b3.use_count(), 1u);
    intrusive_ptr<Derived> d2 = c10::static_intrusive_pointer_cast<Derived>(b3);
    EXPECT_EQ(b3.use_count(), 2u);
    EXPECT_EQ(d2->kind(), 2);
    b3 = d2;  // copy-assign from derived
    EXPECT_EQ(d2.use_count(), 2u);

    weak_intrusive_ptr<Derived> wd(d2);
    weak_intrusive_ptr<Base> wb = wd;  // weak derived -> weak base
    EXPECT_EQ(d2.weak_use_count(), 3u);
    EXPECT_EQ(wb.lock()->kind(), 2);
    weak_intrusive_ptr<Base> wb2 = std::move(wd);
    EXPECT_EQ(d2.weak_use_count(), 3u);
    EXPECT_EQ(base_dtors, 0);
  }
  // The virtual destructor ran the whole chain, once per object.
  EXPECT_EQ(derived_dtors, 2);
  EXPECT_EQ(base_dtors, 2);
}

TEST(IntrusivePtrTest, ConstPointee) {
  auto a = make_intrusive<Plain>(4);
  intrusive_ptr<const Plain> c = a;
  EXPECT_EQ(a.use_count(), 2u);
  EXPECT_EQ(c->v, 4);
  weak_intrusive_ptr<const Plain> w(c);
  a.reset();
  EXPECT_FALSE(w.expired());
  c.reset();
  EXPECT_TRUE(w.expired());
}

TEST(IntrusivePtrTest, ComparisonHashAndSwap) {
  auto a = make_intrusive<Plain>(1);
  auto b = make_intrusive<Plain>(2);
  auto a2 = a;
  EXPECT_TRUE(a == a2);
  EXPECT_FALSE(a != a2);
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(a == nullptr);
  EXPECT_TRUE(a != nullptr);
  EXPECT_EQ(a < b, a.get() < b.get());
  EXPECT_EQ(a > b, a.get() > b.get());
  EXPECT_FALSE(a < a2);

  std::unordered_set<intrusive_ptr<Plain>> set;
  set.insert(a);
  set.insert(a2);
  set.insert(b);
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(a.use_count(), 3u);  // a, a2, and the set's copy
  EXPECT_EQ(std::hash<intrusive_ptr<Plain>>()(a), std::hash<Plain*>()(a.get()));
  set.clear();
  EXPECT_EQ(a.use_count(), 2u);

  Plain* pa = a.get();
  Plain* pb = b.get();
  swap(a, b);
  EXPECT_EQ(a.get(), pb);
  EXPECT_EQ(b.get(), pa);
  a.swap(b);
  EXPECT_EQ(a.get(), pa);
  EXPECT_EQ(a.use_count(), 2u);
  EXPECT_EQ(b.use_count(), 1u);

  weak_intrusive_ptr<Plain> wa(a);
  weak_intrusive_ptr<Plain> wb(b);
  EXPECT_NE(wa, wb);
  EXPECT_EQ(std::hash<weak_intrusive_ptr<Plain>>()(wa), std::hash<Plain*>()(pa));
  swap(wa, wb);
  EXPECT_EQ(wa.lock(), b);
}

TEST(IntrusivePtrTest, RawIncrefDecref) {
  Log log;
  auto a = make_intrusive<Tracked>(&log);
  Tracked* raw = a.get();
  c10::raw::intrusive_ptr::incref(raw);
  EXPECT_EQ(c10::raw::intrusive_ptr::use_count(raw), 2u);
  a.reset();
  EXPECT_EQ(log, Log({"ctor"}));
  EXPECT_EQ(c10::raw::intrusive_ptr::use_count(raw), 1u);
  c10::raw::intrusive_ptr::decref(raw);
  EXPECT_EQ(log, Log({"ctor", "release", "dtor"}));
  EXPECT_EQ(c10::raw::intrusive_ptr::use_count(nullptr), 0u);
}

TEST(IntrusivePtrTest, UniqueMeansMutableInPlace) {
  Log log;
  auto a = make_intrusive<Tracked>(&log, 1);
  ASSERT_TRUE(a.unique());
  a->set_value(2);
  auto b = a;
  EXPECT_FALSE(a.unique());
  b.reset();
  EXPECT_TRUE(a.unique());
  EXPECT_EQ(a->value(), 2);
}

TEST(IntrusivePtrDeathTest, DeletingAnOwnedObjectIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Plain* owned = make_intrusive<Plain>(1).release();
        delete owned;
      },
      "deleted while intrusive_ptrs still point to it");
}

// ---------------------------------------------------------------------------------------
// Threads. An object that checks it is alive whenever it is used, and counts its deaths.

std::atomic<int> g_releases{0};
std::atomic<int> g_destructions{0};

class Sentinel : public c10::intrusive_ptr_target {
 public:
  static constexpr uint32_t kAlive = 0xA11CEu;
  Sentinel() : state_(kAlive) {}
  ~Sentinel() override {
    // release_resources must have run exactly once before we get here.
    EXPECT_EQ(releases_.load(std::memory_order_relaxed), 1);
    state_.store(0xDEADu, std::memory_order_relaxed);
    g_destructions.fetch_add(1, std::memory_order_relaxed);
  }
  // Called while holding a strong reference: the object must be fully alive.
  bool alive() const {
    return state_.load(std::memory_order_relaxed) == kAlive && releases_.load(std::memory_order_relaxed) == 0;
  }

 protected:
  void release_resources() override {
    releases_.fetch_add(1, std::memory_order_relaxed);
    g_releases.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint32_t> state_;
  std::atomic<int> releases_{0};
};

constexpr int kThreads = 4;

TEST(IntrusivePtrThreadTest, HammerSharedObject) {
  constexpr int kIters = 100000;
  g_releases = 0;
  g_destructions = 0;
  auto root = make_intrusive<Sentinel>();
  const weak_intrusive_ptr<Sentinel> root_weak(root);
  std::atomic<int> failures{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int bad = 0;
      std::vector<intrusive_ptr<Sentinel>> held;
      for (int i = 0; i < kIters; ++i) {
        intrusive_ptr<Sentinel> s = root;            // strong copy
        weak_intrusive_ptr<Sentinel> w(s);           // weak from strong
        weak_intrusive_ptr<Sentinel> w2 = root_weak;  // weak copy
        intrusive_ptr<Sentinel> l = w2.lock();       // must succeed: root is alive
        if (!l || !l->alive() || l.use_count() < 3) ++bad;
        intrusive_ptr<Sentinel> moved = std::move(s);
        if (s || !moved->alive()) ++bad;
        // Keep a few references alive across iterations, dropping them in another order.
        if ((i + t) % 7 == 0) held.push_back(moved);
        if (held.size() > 16) held.erase(held.begin());
        if (w.expired()) ++bad;
      }
      failures += bad;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  // Back to baseline: root's reference and root_weak.
  EXPECT_EQ(root.use_count(), 1u);
  EXPECT_EQ(root.weak_use_count(), 2u);
  EXPECT_EQ(g_releases.load(), 0);
  EXPECT_EQ(g_destructions.load(), 0);
  root.reset();
  EXPECT_EQ(g_releases.load(), 1);
  EXPECT_EQ(g_destructions.load(), 0);  // root_weak still holds the memory
  EXPECT_TRUE(root_weak.expired());
}

// The last strong references are dropped by racing threads while others lock() the weak
// pointer: lock() never revives a dead object, and each object dies exactly once.
TEST(IntrusivePtrThreadTest, LockRacesWithLastStrongDrop) {
  constexpr int kRounds = 2000;
  constexpr int kInnerIters = 50;
  g_releases = 0;
  g_destructions = 0;
  std::atomic<int> failures{0};
  std::atomic<long> successful_locks{0};
  std::atomic<long> failed_locks{0};

  std::vector<intrusive_ptr<Sentinel>> strong_slots(kThreads);
  weak_intrusive_ptr<Sentinel> shared_weak;
  std::barrier sync(kThreads + 1);

  // One thread's part of a round. Every reference it takes is gone when it returns.
  auto play_round = [&](int t, int& bad, long& ok, long& expired) {
    intrusive_ptr<Sentinel> mine = std::move(strong_slots[t]);
    weak_intrusive_ptr<Sentinel> w = shared_weak;
    for (int i = 0; i < kInnerIters; ++i) {
      intrusive_ptr<Sentinel> copy = mine;
      intrusive_ptr<Sentinel> locked = w.lock();  // we hold `mine`: must succeed
      if (!locked || !locked->alive()) ++bad;
    }
    // Half the threads drop early, so the last drop races with the others' lock().
    if (t % 2 == 0) mine.reset();
    for (int i = 0; i < kInnerIters; ++i) {
      intrusive_ptr<Sentinel> locked = w.lock();
      if (locked) {
        ++ok;
        if (!locked->alive()) ++bad;
      } else {
        ++expired;
        if (!w.expired()) ++bad;  // once dead, never alive again
      }
      if (i == kInnerIters / 2) mine.reset();
    }
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int bad = 0;
      long ok = 0;
      long expired = 0;
      for (int round = 0; round < kRounds; ++round) {
        sync.arrive_and_wait();  // main has filled the slots
        play_round(t, bad, ok, expired);
        sync.arrive_and_wait();  // round done
      }
      failures += bad;
      successful_locks += ok;
      failed_locks += expired;
    });
  }

  for (int round = 0; round < kRounds; ++round) {
    {
      auto obj = make_intrusive<Sentinel>();
      for (auto& slot : strong_slots) slot = obj;
      shared_weak = weak_intrusive_ptr<Sentinel>(obj);
    }  // main's own strong ref goes; the threads hold the rest
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    EXPECT_TRUE(shared_weak.expired());
    EXPECT_EQ(shared_weak.weak_use_count(), 1u);  // only ours left
    EXPECT_EQ(g_releases.load(), round + 1);
    EXPECT_EQ(g_destructions.load(), round);
    shared_weak.reset();
    EXPECT_EQ(g_destructions.load(), round + 1);
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(g_releases.load(), kRounds);
  EXPECT_EQ(g_destructions.load(), kRounds);
  EXPECT_GT(successful_locks.load(), 0);
  // lock() failures are timing-dependent, so they are reported rather than required.
  RecordProperty("failed_locks", std::to_string(failed_locks.load()));
}

// The window a non-atomic lock() would leave open (checking the count, then incrementing
// it) is a few instructions wide, so the lockers must be spinning at the very moment the last
// strong reference goes: one thread owns the object and drops it only once every locker has
// started; the lockers spin on lock() until it fails. A lock() that revives the object hands
// out a released one (alive() is false), or deletes it twice.
TEST(IntrusivePtrThreadTest, LockSpinsAcrossTheLastDrop) {
  const int lockers = std::clamp(static_cast<int>(std::thread::hardware_concurrency()) - 1, 1, 3);
  constexpr int kRounds = 150;
  g_releases = 0;
  g_destructions = 0;
  std::atomic<int> failures{0};
  std::atomic<int> spinning{0};
  intrusive_ptr<Sentinel> owner_slot;
  weak_intrusive_ptr<Sentinel> shared_weak;
  std::barrier sync(lockers + 2);

  std::vector<std::thread> threads;
  threads.emplace_back([&] {  // the owner
    for (int round = 0; round < kRounds; ++round) {
      sync.arrive_and_wait();
      intrusive_ptr<Sentinel> mine = std::move(owner_slot);
      while (spinning.load(std::memory_order_acquire) < lockers) std::this_thread::yield();
      for (int i = 0; i < round % 64; ++i) {  // vary the moment of the drop
        intrusive_ptr<Sentinel> copy = mine;
      }
      mine.reset();
      sync.arrive_and_wait();
    }
  });
  for (int t = 0; t < lockers; ++t) {
    threads.emplace_back([&] {
      int bad = 0;
      for (int round = 0; round < kRounds; ++round) {
        sync.arrive_and_wait();
        {
          weak_intrusive_ptr<Sentinel> w = shared_weak;
          spinning.fetch_add(1, std::memory_order_release);
          while (true) {
            intrusive_ptr<Sentinel> locked = w.lock();
            if (!locked) break;
            if (!locked->alive()) ++bad;
          }
          if (!w.expired()) ++bad;
        }
        sync.arrive_and_wait();
      }
      failures += bad;
    });
  }

  for (int round = 0; round < kRounds; ++round) {
    owner_slot = make_intrusive<Sentinel>();
    shared_weak = weak_intrusive_ptr<Sentinel>(owner_slot);
    spinning = 0;
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    EXPECT_EQ(shared_weak.weak_use_count(), 1u);
    shared_weak.reset();
    EXPECT_EQ(g_destructions.load(), round + 1);
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(g_releases.load(), kRounds);
  EXPECT_EQ(g_destructions.load(), kRounds);
}

}  // namespace
