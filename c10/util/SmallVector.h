// SmallVector<T, N>: a vector whose first N elements live inside the object, so the
// short, per-call vectors of the hot path (an iterator's shape and strides, its 2-4
// operands) cost no heap allocation. Beyond N it moves to the heap like std::vector.
#pragma once

#include <c10/util/ArrayRef.h>

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace c10::inline tessera {

template <typename T, size_t N>
class SmallVector {
  static_assert(N > 0, "SmallVector needs room for at least one element inside");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  explicit SmallVector(size_t n) { resize(n); }
  SmallVector(size_t n, const T& value) { resize(n, value); }
  SmallVector(std::initializer_list<T> list) { append(list.begin(), list.end()); }
  SmallVector(ArrayRef<T> values) { append(values.begin(), values.end()); }  // NOLINT: implicit, like vec()
  SmallVector(const SmallVector& other) { append(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(std::move(other)); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      clear();
      append(other.begin(), other.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      clear();
      release_heap();
      take(std::move(other));
    }
    return *this;
  }
  ~SmallVector() {
    clear();
    release_heap();
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  operator ArrayRef<T>() const { return ArrayRef<T>(data_, size_); }  // NOLINT: implicit, like std::vector's
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    Buffer fresh(n);
    std::uninitialized_move(begin(), end(), fresh.data);
    adopt(fresh);
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      // Build the new element in the new buffer before the old one (which args may point
      // into) is released.
      Buffer fresh(2 * capacity_);
      T* slot = ::new (static_cast<void*>(fresh.data + size_)) T(std::forward<Args>(args)...);
      try {
        std::uninitialized_move(begin(), end(), fresh.data);
      } catch (...) {
        std::destroy_at(slot);
        throw;
      }
      adopt(fresh);
      ++size_;
      return *slot;
    }
    T* slot = ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void pop_back() { std::destroy_at(data_ + --size_); }
  void clear() {
    std::destroy(begin(), end());
    size_ = 0;
  }
  // New elements are value-initialised (zero for numbers), as std::vector's are.
  void resize(size_t n) {
    if (n < size_) {
      std::destroy(begin() + n, end());
    } else {
      reserve(n);
      std::uninitialized_value_construct(end(), data_ + n);
    }
    size_ = n;
  }
  void resize(size_t n, const T& value) {
    if (n < size_) {
      std::destroy(begin() + n, end());
      size_ = n;
      return;
    }
    const T copy = value;  // value may be an element of this vector
    reserve(n);
    std::uninitialized_fill(end(), data_ + n, copy);
    size_ = n;
  }
  // Appends copies of [first, last), which must not point into this vector.
  template <typename It>
  void append(It first, It last) {
    reserve(size_ + static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) {
      ::new (static_cast<void*>(data_ + size_)) T(*first);
      ++size_;
    }
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  bool on_heap() const { return data_ != inline_data(); }
  T* inline_data() { return reinterpret_cast<T*>(inline_); }
  const T* inline_data() const { return reinterpret_cast<const T*>(inline_); }
  // Raw storage for n elements, freed unless adopted.
  struct Buffer {
    explicit Buffer(size_t n)
        : data(static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))))), capacity(n) {}
    ~Buffer() {
      if (data != nullptr) ::operator delete(data, std::align_val_t(alignof(T)));
    }
    T* data;
    size_t capacity;
  };
  // Takes over `fresh`, whose first size_ slots already hold the elements.
  void adopt(Buffer& fresh) {
    std::destroy(begin(), end());
    release_heap();
    data_ = fresh.data;
    capacity_ = fresh.capacity;
    fresh.data = nullptr;
  }
  void release_heap() {
    if (on_heap()) ::operator delete(data_, std::align_val_t(alignof(T)));
    data_ = inline_data();
    capacity_ = N;
  }
  // Steals a heap buffer; moves inline elements one by one. `this` is empty and inline.
  void take(SmallVector&& other) {
    if (other.on_heap()) {
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_data();
      other.size_ = 0;
      other.capacity_ = N;
      return;
    }
    std::uninitialized_move(other.begin(), other.end(), data_);
    size_ = other.size_;
    other.clear();
  }

  T* data_ = inline_data();
  size_t size_ = 0;
  size_t capacity_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

// The sizes or strides of one tensor: six dims cover nearly every tensor without the heap.
using DimVector = SmallVector<int64_t, 6>;

}  // namespace c10::inline tessera
