// DispatchKeySet: the set of runtime dispatch keys a tensor (or a call) carries, packed in
// one 64-bit word so that union, masking and "highest priority key" are single instructions
// on the dispatcher's hot path. Also the expansion of alias keys into runtime keys.
#pragma once

#include <c10/core/DispatchKey.h>
#include <c10/macros/Macros.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <string>

namespace c10::inline tessera {

namespace detail {
// Out of line so the constexpr set operations carry no message-building code.
[[noreturn]] C10_API void throwNotARuntimeKey(DispatchKey k);
}  // namespace detail

// Runtime key k (1 .. EndOfRuntimeKeys-1) is bit k-1, so the highest set bit is the
// highest-priority key and 64 - countl_zero(repr) is its enum value (0, Undefined, when the
// set is empty). Undefined is the empty set: adding it is a no-op and has(Undefined) is
// false. Marker and alias keys are not members; passing one is an error.
class DispatchKeySet final {
 public:
  enum Empty { EMPTY };
  enum Full { FULL };
  enum FullAfter { FULL_AFTER };

  constexpr DispatchKeySet() noexcept = default;
  constexpr explicit DispatchKeySet(Empty) noexcept {}
  // Every runtime key.
  constexpr explicit DispatchKeySet(Full) noexcept : repr_(kRuntimeMask) {}
  // Every runtime key of strictly lower priority than k: what a kernel for k redispatches to.
  constexpr DispatchKeySet(FullAfter, DispatchKey k) : repr_(bit(k) == 0 ? 0 : bit(k) - 1) {}
  constexpr DispatchKeySet(DispatchKey k) : repr_(bit(k)) {}  // NOLINT: implicit on purpose
  constexpr DispatchKeySet(std::initializer_list<DispatchKey> keys) {
    for (DispatchKey k : keys) repr_ |= bit(k);
  }

  static constexpr DispatchKeySet full() noexcept { return DispatchKeySet(FULL); }
  static constexpr DispatchKeySet empty_set() noexcept { return DispatchKeySet(); }
  // The inverse of raw_repr; bits above the runtime keys are dropped.
  static constexpr DispatchKeySet from_raw_repr(uint64_t repr) noexcept { return DispatchKeySet(Raw{}, repr); }
  constexpr uint64_t raw_repr() const noexcept { return repr_; }

  constexpr bool has(DispatchKey k) const { return (repr_ & bit(k)) != 0; }
  constexpr bool has_any(DispatchKeySet ks) const noexcept { return (repr_ & ks.repr_) != 0; }
  constexpr bool has_all(DispatchKeySet ks) const noexcept { return (repr_ & ks.repr_) == ks.repr_; }
  constexpr bool isSupersetOf(DispatchKeySet ks) const noexcept { return has_all(ks); }
  constexpr bool empty() const noexcept { return repr_ == 0; }
  constexpr size_t size() const noexcept { return static_cast<size_t>(std::popcount(repr_)); }

  // Value semantics, as in PyTorch: these return a new set and leave *this alone.
  [[nodiscard]] constexpr DispatchKeySet add(DispatchKey k) const { return from_raw_repr(repr_ | bit(k)); }
  [[nodiscard]] constexpr DispatchKeySet add(DispatchKeySet ks) const noexcept { return *this | ks; }
  [[nodiscard]] constexpr DispatchKeySet remove(DispatchKey k) const { return from_raw_repr(repr_ & ~bit(k)); }
  [[nodiscard]] constexpr DispatchKeySet remove(DispatchKeySet ks) const noexcept { return *this - ks; }

  constexpr DispatchKeySet operator|(DispatchKeySet o) const noexcept { return from_raw_repr(repr_ | o.repr_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const noexcept { return from_raw_repr(repr_ & o.repr_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const noexcept { return from_raw_repr(repr_ & ~o.repr_); }
  constexpr DispatchKeySet operator^(DispatchKeySet o) const noexcept { return from_raw_repr(repr_ ^ o.repr_); }
  constexpr DispatchKeySet& operator|=(DispatchKeySet o) noexcept { return *this = *this | o; }
  constexpr DispatchKeySet& operator&=(DispatchKeySet o) noexcept { return *this = *this & o; }
  constexpr DispatchKeySet& operator-=(DispatchKeySet o) noexcept { return *this = *this - o; }
  constexpr DispatchKeySet& operator^=(DispatchKeySet o) noexcept { return *this = *this ^ o; }
  constexpr bool operator==(const DispatchKeySet&) const noexcept = default;

  // The key that wins dispatch; Undefined for the empty set.
  constexpr DispatchKey highestPriorityTypeId() const noexcept {
    return static_cast<DispatchKey>(64 - std::countl_zero(repr_));
  }
  // The highest backend key (CPU .. kLastBackendKey) in the set; Undefined if there is none.
  constexpr DispatchKey highestPriorityBackendTypeId() const noexcept {
    return (*this & DispatchKeySet(Raw{}, kBackendMask)).highestPriorityTypeId();
  }

  // Visits the keys highest priority first, the order a call passes through them.
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using iterator_concept = std::forward_iterator_tag;
    using value_type = DispatchKey;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = DispatchKey;

    constexpr iterator() noexcept = default;
    constexpr explicit iterator(uint64_t remaining) noexcept : remaining_(remaining) {}
    constexpr DispatchKey operator*() const noexcept { return DispatchKeySet::from_raw_repr(remaining_).highestPriorityTypeId(); }
    constexpr iterator& operator++() noexcept {
      // Clear the highest set bit.
      remaining_ &= ~(uint64_t{1} << (63 - std::countl_zero(remaining_)));
      return *this;
    }
    constexpr iterator operator++(int) noexcept {
      iterator old = *this;
      ++*this;
      return old;
    }
    constexpr bool operator==(const iterator&) const noexcept = default;

   private:
    uint64_t remaining_ = 0;
  };
  using const_iterator = iterator;

  constexpr iterator begin() const noexcept { return iterator(repr_); }
  constexpr iterator end() const noexcept { return iterator(0); }

 private:
  struct Raw {};
  constexpr DispatchKeySet(Raw, uint64_t repr) noexcept : repr_(repr & kRuntimeMask) {}

  static constexpr uint64_t kRuntimeMask = (uint64_t{1} << kNumRuntimeDispatchKeys) - 1;
  // CPU .. kLastBackendKey are bits 0 .. kLastBackendKey-1.
  static constexpr uint64_t kBackendMask = (uint64_t{1} << static_cast<int>(kLastBackendKey)) - 1;

  static constexpr uint64_t bit(DispatchKey k) {
    if (C10_UNLIKELY(k >= DispatchKey::EndOfRuntimeKeys)) detail::throwNotARuntimeKey(k);
    // 1 << 0 >> 1 == 0: Undefined maps to no bit without a branch.
    return (uint64_t{1} << static_cast<uint8_t>(k)) >> 1;
  }

  uint64_t repr_ = 0;
};

static_assert(kNumRuntimeDispatchKeys <= 64, "DispatchKeySet is one 64-bit word");
static_assert(std::forward_iterator<DispatchKeySet::iterator>);

// "DispatchKeySet(AutogradCPU, ADInplaceOrView, CPU)": keys highest priority first.
C10_API std::string toString(DispatchKeySet ks);
C10_API std::ostream& operator<<(std::ostream& os, DispatchKeySet ks);

// Every backend key, CPU .. kLastBackendKey.
constexpr DispatchKeySet all_backends_keyset = DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::BackendSelect);
// The backends CompositeExplicitAutograd kernels serve: all but NestedTensorCPU (CPU, CUDA,
// Meta, the sparse and quantized keys, MkldnnCPU). As in torch, a nested tensor runs only
// kernels written for it: a composite would read its (meaningless) sizes.
constexpr DispatchKeySet backend_dispatch_keyset =
    all_backends_keyset - DispatchKeySet(DispatchKey::NestedTensorCPU);
constexpr DispatchKeySet autograd_dispatch_keyset{DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA,
                                                  DispatchKey::AutogradOther};
constexpr DispatchKeySet autocast_dispatch_keyset{DispatchKey::AutocastCPU, DispatchKey::AutocastCUDA};
// What CompositeImplicitAutograd kernels serve: every backend, and autograd (so an op
// written in terms of other ops is differentiated through those ops).
constexpr DispatchKeySet math_dispatch_keyset = backend_dispatch_keyset | autograd_dispatch_keyset;
// The lazy-view bits a tensor may carry (conj() and the negation behind .imag of a conj view).
constexpr DispatchKeySet math_bits_keyset{DispatchKey::Conjugate, DispatchKey::Negative};

// The runtime keys an alias stands for; a runtime key stands for itself and Undefined for
// nothing. Used at registration to fan a kernel out into the dispatch table.
constexpr DispatchKeySet getRuntimeDispatchKeySet(DispatchKey k) {
  switch (k) {
    case DispatchKey::Autograd:
      return autograd_dispatch_keyset;
    case DispatchKey::CompositeExplicitAutograd:
      return backend_dispatch_keyset;
    case DispatchKey::CompositeImplicitAutograd:
      return math_dispatch_keyset;
    default:
      return DispatchKeySet(k);  // raises for EndOfRuntimeKeys
  }
}

// Whether a kernel registered under `alias` (or under a runtime key) serves runtime key k.
constexpr bool runtimeDispatchKeySetHas(DispatchKey alias, DispatchKey k) {
  return getRuntimeDispatchKeySet(alias).has(k);
}

// The keys a tensor with this backend carries besides the backend key itself.
// What Autograd and ADInplaceOrView kernels redispatch to: every key below their own.
constexpr DispatchKeySet after_autograd_keyset(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU);
constexpr DispatchKeySet after_ADInplaceOrView_keyset(DispatchKeySet::FULL_AFTER, DispatchKey::ADInplaceOrView);

constexpr DispatchKeySet autogradRelatedKeys(DispatchKey backend) {
  return DispatchKeySet{DispatchKey::ADInplaceOrView, autogradKeyForBackend(backend)};
}

}  // namespace c10::inline tessera
