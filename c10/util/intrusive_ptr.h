// intrusive_ptr: a shared pointer whose counts live in the object (intrusive_ptr_target), so
// a pointer is one word, copies touch one cache line, and a raw pointer can be turned back
// into an owning one (as the Python bindings and the dispatcher's boxed calls need).
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

namespace c10::inline tessera {

class intrusive_ptr_target;
namespace detail {
struct intrusive_target_ops;
}

// Base class of everything held by intrusive_ptr.
//
// Counts: refcount_ is the number of intrusive_ptrs. weakcount_ is the number of
// weak_intrusive_ptrs, plus one while refcount_ > 0 (the strong references jointly own one
// weak reference). When refcount_ drops to 0, release_resources() runs (the object is dead
// but its memory stays for the weak pointers to inspect), and the object is deleted once
// weakcount_ drops to 0 too. Counts are 32-bit: 4 billion references to one object would
// need 32 GiB of pointers, and two 32-bit counts keep the header at 16 bytes with the vptr.
//
// A new object starts with both counts at 0; make_intrusive sets them to 1. An object that
// never meets an intrusive_ptr (on the stack, a member) is fine: its counts stay 0.
class C10_API intrusive_ptr_target {
 protected:
  constexpr intrusive_ptr_target() noexcept : refcount_(0), weakcount_(0) {}
  // Copying a target makes a new object: it starts unowned, and assignment leaves each
  // side's owners alone. (So subclasses may be copyable.)
  constexpr intrusive_ptr_target(const intrusive_ptr_target&) noexcept : intrusive_ptr_target() {}
  intrusive_ptr_target& operator=(const intrusive_ptr_target&) noexcept { return *this; }
  // Deleting an object that intrusive_ptrs still own is a bug; catch it where it happens
  // rather than as a use-after-free later. (Throwing here terminates, with the message.)
  virtual ~intrusive_ptr_target() {
    TORCH_INTERNAL_ASSERT(refcount_.load(std::memory_order_relaxed) == 0,
                          "an intrusive_ptr_target was deleted while intrusive_ptrs still point to it");
  }

  // Runs once, when the last strong reference goes, while weak references may remain. Frees
  // what the object holds (memory, other objects) early, so a weak pointer cycle or a
  // long-lived weak pointer does not keep them alive. The destructor still runs later.
  virtual void release_resources() {}

 private:
  friend struct detail::intrusive_target_ops;

  mutable std::atomic<uint32_t> refcount_;
  mutable std::atomic<uint32_t> weakcount_;
};

namespace detail {

// All count manipulation, in one place. Memory orders follow the usual shared-pointer
// argument: taking a reference from one already held needs no ordering (relaxed); dropping
// one is acq_rel, so that every owner's use of the object happens before the release and
// the deletion that the last owner performs.
struct intrusive_target_ops {
  static void incref(const intrusive_ptr_target* t) noexcept { t->refcount_.fetch_add(1, std::memory_order_relaxed); }

  // For a raw pointer someone else owns: the count must already be positive.
  static void incref_checked(const intrusive_ptr_target* t) {
    uint32_t old = t->refcount_.fetch_add(1, std::memory_order_relaxed);
    if (C10_UNLIKELY(old == 0)) {
      t->refcount_.fetch_sub(1, std::memory_order_relaxed);
      TORCH_INTERNAL_ASSERT(false,
                            "unsafe_reclaim_from_nonowning() needs an object some intrusive_ptr owns; this one has "
                            "no strong references (not made by make_intrusive, or already released)");
    }
  }

  static void decref(const intrusive_ptr_target* t) noexcept {
    if (t->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      auto* target = const_cast<intrusive_ptr_target*>(t);
      target->release_resources();
      // The strong references' shared weak reference. If it is the last one, nobody else
      // can reach the object (new weak refs come only from existing refs): skip the RMW.
      if (t->weakcount_.load(std::memory_order_acquire) == 1 ||
          t->weakcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        delete target;
      }
    }
  }

  static void weak_incref(const intrusive_ptr_target* t) noexcept {
    t->weakcount_.fetch_add(1, std::memory_order_relaxed);
  }

  static void weak_decref(const intrusive_ptr_target* t) noexcept {
    // Reaching 0 implies refcount_ is 0 too (strong refs hold one weak ref), so
    // release_resources() has already run.
    if (t->weakcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete const_cast<intrusive_ptr_target*>(t);
    }
  }

  // weak -> strong. A plain increment could revive an object whose last strong ref is being
  // dropped concurrently (0 -> 1 after release_resources started); the CAS only ever moves
  // a positive count. Acquire on success pairs with the release of earlier owners' drops.
  static bool try_incref(const intrusive_ptr_target* t) noexcept {
    uint32_t count = t->refcount_.load(std::memory_order_relaxed);
    while (count != 0) {
      if (t->refcount_.compare_exchange_weak(count, count + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  // A freshly constructed object becomes owned by exactly one intrusive_ptr.
  static void adopt_new(const intrusive_ptr_target* t) noexcept {
    t->refcount_.store(1, std::memory_order_relaxed);
    t->weakcount_.store(1, std::memory_order_relaxed);
  }

  static uint32_t use_count(const intrusive_ptr_target* t) noexcept {
    return t->refcount_.load(std::memory_order_acquire);
  }
  static uint32_t weak_use_count(const intrusive_ptr_target* t) noexcept {
    return t->weakcount_.load(std::memory_order_acquire);
  }
};

template <typename T>
constexpr void check_target_type() {
  static_assert(std::is_base_of_v<intrusive_ptr_target, std::remove_cv_t<T>>,
                "intrusive_ptr<T> requires T to derive from c10::intrusive_ptr_target");
}

}  // namespace detail

template <typename T>
class weak_intrusive_ptr;

// An owning pointer to a T (which derives from intrusive_ptr_target), or null.
template <typename T>
class intrusive_ptr final {
 public:
  using element_type = T;

  constexpr intrusive_ptr() noexcept = default;
  constexpr intrusive_ptr(std::nullptr_t) noexcept {}  // NOLINT: implicit like shared_ptr

  intrusive_ptr(const intrusive_ptr& other) noexcept : target_(other.target_) { retain(); }
  intrusive_ptr(intrusive_ptr&& other) noexcept : target_(std::exchange(other.target_, nullptr)) {}
  template <typename U>
    requires std::is_convertible_v<U*, T*>
  intrusive_ptr(const intrusive_ptr<U>& other) noexcept : target_(other.get()) {  // NOLINT
    retain();
  }
  template <typename U>
    requires std::is_convertible_v<U*, T*>
  intrusive_ptr(intrusive_ptr<U>&& other) noexcept : target_(other.release()) {}  // NOLINT

  ~intrusive_ptr() { drop(); }

  intrusive_ptr& operator=(const intrusive_ptr& other) noexcept {
    intrusive_ptr(other).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& other) noexcept {
    intrusive_ptr(std::move(other)).swap(*this);
    return *this;
  }
  template <typename U>
    requires std::is_convertible_v<U*, T*>
  intrusive_ptr& operator=(const intrusive_ptr<U>& other) noexcept {
    intrusive_ptr(other).swap(*this);
    return *this;
  }
  template <typename U>
    requires std::is_convertible_v<U*, T*>
  intrusive_ptr& operator=(intrusive_ptr<U>&& other) noexcept {
    intrusive_ptr(std::move(other)).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }

  T* get() const noexcept { return target_; }
  T& operator*() const noexcept { return *target_; }
  T* operator->() const noexcept { return target_; }
  explicit operator bool() const noexcept { return target_ != nullptr; }
  bool defined() const noexcept { return target_ != nullptr; }

  // Strong references; 0 when null.
  size_t use_count() const noexcept { return target_ ? detail::intrusive_target_ops::use_count(target_) : 0; }
  // The raw weak count: weak_intrusive_ptrs + 1 (the strong references' share); 0 when null.
  size_t weak_use_count() const noexcept {
    return target_ ? detail::intrusive_target_ops::weak_use_count(target_) : 0;
  }
  // The only owner, with no weak pointers watching: safe to mutate in place.
  bool unique() const noexcept { return use_count() == 1 && weak_use_count() == 1; }

  void reset() noexcept {
    drop();
    target_ = nullptr;
  }
  void swap(intrusive_ptr& other) noexcept { std::swap(target_, other.target_); }

  // Gives up ownership without dropping the reference: the caller must pass the pointer
  // to reclaim() (or raw::intrusive_ptr::decref) eventually.
  [[nodiscard]] T* release() noexcept { return std::exchange(target_, nullptr); }

  // Takes over the reference a previous release() gave up.
  static intrusive_ptr reclaim(T* owning) {
    detail::check_target_type<T>();
    TORCH_INTERNAL_ASSERT(owning == nullptr || detail::intrusive_target_ops::use_count(owning) > 0,
                          "intrusive_ptr::reclaim() needs a pointer from release(); this object has no strong "
                          "references (use make_intrusive to create one)");
    return intrusive_ptr(owning, Adopt{});
  }

  // A new reference to an object that some intrusive_ptr already owns (e.g. `this`).
  static intrusive_ptr unsafe_reclaim_from_nonowning(T* raw) {
    detail::check_target_type<T>();
    if (raw != nullptr) detail::intrusive_target_ops::incref_checked(raw);
    return intrusive_ptr(raw, Adopt{});
  }

  template <typename U, typename... Args>
  friend intrusive_ptr<U> make_intrusive(Args&&... args);
  template <typename U>
  friend class weak_intrusive_ptr;

 private:
  struct Adopt {};
  intrusive_ptr(T* target, Adopt) noexcept : target_(target) {}

  void retain() noexcept {
    detail::check_target_type<T>();
    if (target_ != nullptr) detail::intrusive_target_ops::incref(target_);
  }
  void drop() noexcept {
    detail::check_target_type<T>();
    if (target_ != nullptr) detail::intrusive_target_ops::decref(target_);
  }

  T* target_ = nullptr;
};

template <typename T, typename... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  detail::check_target_type<T>();
  T* obj = new T(std::forward<Args>(args)...);
  detail::intrusive_target_ops::adopt_new(obj);
  return intrusive_ptr<T>(obj, typename intrusive_ptr<T>::Adopt{});
}

// The owning equivalent of static_cast, for a base pointer known to hold a U.
template <typename U, typename T>
intrusive_ptr<U> static_intrusive_pointer_cast(intrusive_ptr<T> p) {
  return intrusive_ptr<U>::reclaim(static_cast<U*>(p.release()));
}

template <typename T, typename U>
bool operator==(const intrusive_ptr<T>& a, const intrusive_ptr<U>& b) noexcept {
  return a.get() == b.get();
}
template <typename T>
bool operator==(const intrusive_ptr<T>& a, std::nullptr_t) noexcept {
  return a.get() == nullptr;
}
template <typename T, typename U>
std::strong_ordering operator<=>(const intrusive_ptr<T>& a, const intrusive_ptr<U>& b) noexcept {
  return std::compare_three_way{}(a.get(), b.get());
}

template <typename T>
void swap(intrusive_ptr<T>& a, intrusive_ptr<T>& b) noexcept {
  a.swap(b);
}

// A non-owning pointer that can tell whether its object is still alive and, if so, become
// an owning one (lock()). It keeps the object's memory, not its resources, alive.
template <typename T>
class weak_intrusive_ptr final {
 public:
  using element_type = T;

  constexpr weak_intrusive_ptr() noexcept = default;
  explicit weak_intrusive_ptr(const intrusive_ptr<T>& strong) noexcept : target_(strong.get()) { retain(); }

  weak_intrusive_ptr(const weak_intrusive_ptr& other) noexcept : target_(other.target_) { retain(); }
  weak_intrusive_ptr(weak_intrusive_ptr&& other) noexcept : target_(std::exchange(other.target_, nullptr)) {}
  template <typename U>
    requires std::is_convertible_v<U*, T*>
  weak_intrusive_ptr(const weak_intrusive_ptr<U>& other) noexcept : target_(other.target_) {  // NOLINT
    retain();
  }
  template <typename U>
    requires std::is_convertible_v<U*, T*>
  weak_intrusive_ptr(weak_intrusive_ptr<U>&& other) noexcept  // NOLINT
      : target_(std::exchange(other.target_, nullptr)) {}

  ~weak_intrusive_ptr() { drop(); }

  weak_intrusive_ptr& operator=(const weak_intrusive_ptr& other) noexcept {
    weak_intrusive_ptr(other).swap(*this);
    return *this;
  }
  weak_intrusive_ptr& operator=(weak_intrusive_ptr&& other) noexcept {
    weak_intrusive_ptr(std::move(other)).swap(*this);
    return *this;
  }
  weak_intrusive_ptr& operator=(const intrusive_ptr<T>& strong) noexcept {
    weak_intrusive_ptr(strong).swap(*this);
    return *this;
  }

  // An owning pointer if the object is still alive, else null. Safe against the last strong
  // reference being dropped concurrently.
  intrusive_ptr<T> lock() const noexcept {
    if (target_ == nullptr || !detail::intrusive_target_ops::try_incref(target_)) return intrusive_ptr<T>();
    return intrusive_ptr<T>(target_, typename intrusive_ptr<T>::Adopt{});
  }
  bool expired() const noexcept { return use_count() == 0; }
  // Strong references to the object; 0 when expired or null.
  size_t use_count() const noexcept { return target_ ? detail::intrusive_target_ops::use_count(target_) : 0; }
  // The raw weak count, as intrusive_ptr::weak_use_count(); 0 when null.
  size_t weak_use_count() const noexcept {
    return target_ ? detail::intrusive_target_ops::weak_use_count(target_) : 0;
  }

  void reset() noexcept {
    drop();
    target_ = nullptr;
  }
  void swap(weak_intrusive_ptr& other) noexcept { std::swap(target_, other.target_); }

  // The pointee, which may be dead (released or being destroyed): for identity only.
  T* _unsafe_get_target() const noexcept { return target_; }

  template <typename U>
  friend class weak_intrusive_ptr;

 private:
  void retain() noexcept {
    detail::check_target_type<T>();
    if (target_ != nullptr) detail::intrusive_target_ops::weak_incref(target_);
  }
  void drop() noexcept {
    detail::check_target_type<T>();
    if (target_ != nullptr) detail::intrusive_target_ops::weak_decref(target_);
  }

  T* target_ = nullptr;
};

template <typename T, typename U>
bool operator==(const weak_intrusive_ptr<T>& a, const weak_intrusive_ptr<U>& b) noexcept {
  return a._unsafe_get_target() == b._unsafe_get_target();
}
template <typename T, typename U>
std::strong_ordering operator<=>(const weak_intrusive_ptr<T>& a, const weak_intrusive_ptr<U>& b) noexcept {
  return std::compare_three_way{}(a._unsafe_get_target(), b._unsafe_get_target());
}

template <typename T>
void swap(weak_intrusive_ptr<T>& a, weak_intrusive_ptr<T>& b) noexcept {
  a.swap(b);
}

// Reference counting on raw pointers, for code that stores an intrusive_ptr_target* in a
// slot it manages itself (a C API handle, a boxed value's payload).
namespace raw::intrusive_ptr {
inline void incref(intrusive_ptr_target* t) {
  if (t != nullptr) detail::intrusive_target_ops::incref_checked(t);
}
inline void decref(intrusive_ptr_target* t) noexcept {
  if (t != nullptr) detail::intrusive_target_ops::decref(t);
}
inline size_t use_count(const intrusive_ptr_target* t) noexcept {
  return t ? detail::intrusive_target_ops::use_count(t) : 0;
}
}  // namespace raw::intrusive_ptr

}  // namespace c10::inline tessera

template <typename T>
struct std::hash<c10::intrusive_ptr<T>> {
  size_t operator()(const c10::intrusive_ptr<T>& p) const noexcept { return std::hash<T*>()(p.get()); }
};
template <typename T>
struct std::hash<c10::weak_intrusive_ptr<T>> {
  size_t operator()(const c10::weak_intrusive_ptr<T>& p) const noexcept {
    return std::hash<T*>()(p._unsafe_get_target());
  }
};
