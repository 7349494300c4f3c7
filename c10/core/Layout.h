// How a tensor's elements are stored: dense with strides, or one of the sparse formats.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <ostream>

namespace c10::inline tessera {

// torch's numbering. The compressed layouts (CSR, CSC, BSR, BSC) share one impl and one
// dispatch key; the layout says which dims the indices compress and whether values are blocks.
enum class Layout : int8_t {
  Strided = 0,
  SparseCoo = 1,
  SparseCsr = 2,
  Mkldnn = 3,
  SparseCsc = 4,
  SparseBsr = 5,
  SparseBsc = 6,
};
constexpr int kNumLayouts = 7;

constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::SparseCoo;
constexpr Layout kSparseCsr = Layout::SparseCsr;
constexpr Layout kMkldnn = Layout::Mkldnn;
constexpr Layout kSparseCsc = Layout::SparseCsc;
constexpr Layout kSparseBsr = Layout::SparseBsr;
constexpr Layout kSparseBsc = Layout::SparseBsc;

// CSR, CSC, BSR or BSC: the layouts of the compressed impl (SparseCsrCPU).
constexpr bool isSparseCompressed(Layout layout) {
  return layout == Layout::SparseCsr || layout == Layout::SparseCsc || layout == Layout::SparseBsr ||
         layout == Layout::SparseBsc;
}
// COO or one of the compressed layouts.
constexpr bool isSparseLayout(Layout layout) { return layout == Layout::SparseCoo || isSparseCompressed(layout); }

// "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn": torch's Python names without the "torch." prefix.
C10_API const char* LayoutName(Layout layout);
C10_API std::ostream& operator<<(std::ostream& os, Layout layout);

}  // namespace c10::inline tessera
