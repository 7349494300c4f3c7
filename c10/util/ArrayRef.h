// ArrayRef<T>: a non-owning view of contiguous elements (a span with PyTorch's API).
// IntArrayRef is how sizes and strides travel through Tessera without copies.
#pragma once

#include <c10/util/Exception.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace c10::inline tessera {

template <typename T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: implicit, as in torch
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(static_cast<size_t>(end - begin)) {}
  template <typename A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const T (&arr)[N]) : data_(arr), size_(N) {}  // NOLINT
  // The list must outlive the ArrayRef: fine for a call argument, wrong for a variable.
  // (GCC warns about exactly that on every such constructor; the contract is the caller's.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  constexpr ArrayRef(const std::initializer_list<T>& list)  // NOLINT
      : data_(list.begin() == list.end() ? nullptr : list.begin()), size_(list.size()) {}
#pragma GCC diagnostic pop

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    TORCH_CHECK_INDEX(i < size_, "ArrayRef: index ", i, " is out of bounds for size ", size_);
    return data_[i];
  }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  constexpr ArrayRef slice(size_t start, size_t n) const { return ArrayRef(data_ + start, n); }
  constexpr ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  constexpr bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; ++i) {
      if (!(data_[i] == other.data_[i])) return false;
    }
    return true;
  }
  friend constexpr bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// Prints "[2, 3]", as torch prints sizes in messages.
template <typename T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> list) {
  os << '[';
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) os << ", ";
    os << list[i];
  }
  return os << ']';
}

using IntArrayRef = ArrayRef<int64_t>;

}  // namespace c10::inline tessera

namespace at::inline tessera {
using c10::ArrayRef;
using c10::IntArrayRef;
}  // namespace at::inline tessera
