// Sizes and strides of a tensor, stored inline for up to 5 dimensions (almost every
// tensor) and on the heap beyond, so making a tensor allocates nothing extra.
#pragma once

#include <c10/util/ArrayRef.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace c10::inline tessera {

class C10_API SizesAndStrides {
 public:
  static constexpr size_t kInlineDims = 5;

  // A fresh tensor is one-dimensional with zero elements, as in torch.
  SizesAndStrides() : size_(1) {
    inline_[0] = 0;
    inline_[kInlineDims] = 1;
  }
  SizesAndStrides(const SizesAndStrides& other) : size_(0) { copy_from(other); }
  SizesAndStrides& operator=(const SizesAndStrides& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  ~SizesAndStrides() {
    if (!is_inline()) delete[] heap_;
  }

  size_t size() const { return size_; }
  IntArrayRef sizes() const { return IntArrayRef(sizes_data(), size_); }
  IntArrayRef strides() const { return IntArrayRef(strides_data(), size_); }
  const int64_t* sizes_data() const { return is_inline() ? inline_ : heap_; }
  const int64_t* strides_data() const { return is_inline() ? inline_ + kInlineDims : heap_ + size_; }
  int64_t* sizes_data() { return is_inline() ? inline_ : heap_; }
  int64_t* strides_data() { return is_inline() ? inline_ + kInlineDims : heap_ + size_; }

  // Changes the number of dimensions; existing leading entries are kept.
  void resize(size_t new_size) {
    if (new_size == size_) return;
    if (new_size <= kInlineDims && is_inline()) {
      // Strides sit at a fixed offset inline, so nothing moves.
      size_ = new_size;
      return;
    }
    int64_t saved[2 * kInlineDims] = {};
    size_t keep = std::min(size_, new_size);
    const int64_t* old_sizes = sizes_data();
    const int64_t* old_strides = strides_data();
    int64_t* tmp = new_size > kInlineDims ? new int64_t[2 * new_size] : saved;
    std::copy_n(old_sizes, keep, tmp);
    std::copy_n(old_strides, keep, tmp + (new_size > kInlineDims ? new_size : kInlineDims));
    if (!is_inline()) delete[] heap_;
    size_ = new_size;
    if (new_size > kInlineDims) {
      heap_ = tmp;
    } else {
      std::copy_n(saved, 2 * kInlineDims, inline_);
    }
  }

 private:
  bool is_inline() const { return size_ <= kInlineDims; }
  void copy_from(const SizesAndStrides& other) {
    resize(other.size_);
    std::copy_n(other.sizes_data(), size_, sizes_data());
    std::copy_n(other.strides_data(), size_, strides_data());
  }

  size_t size_;
  union {
    int64_t* heap_;                     // sizes then strides, 2 * size_ entries
    int64_t inline_[2 * kInlineDims];   // sizes at [0, 5), strides at [5, 10)
  };
};

}  // namespace c10::inline tessera
