// The splitting functions beyond split/chunk: tensor_split (by a count of near-equal
// sections or by indices, NumPy's array_split), hsplit / vsplit / dsplit (NumPy's, along
// dims 1 (0 for 1-D), 0 and 2, sections that must divide evenly) and unsafe_chunk /
// unsafe_split / unsafe_split_with_sizes, which tessera gives split's safe views. Every
// piece is a slice view, so autograd and Meta come from slice.
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

void check_splittable(const Tensor& self) {
  TORCH_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
              self.dim(), " dims");
}

// NumPy's rule: the first size % sections pieces get one extra element.
std::vector<Tensor> split_in_sections(const Tensor& self, int64_t sections, int64_t dim) {
  check_splittable(self);
  TORCH_CHECK(sections > 0, "number of sections must be larger than 0, got ", sections);
  dim = wrap_dim(dim, self.dim());
  const int64_t size = self.size(dim), small = size / sections, extra = size % sections;
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t length = small + (i < extra ? 1 : 0);
    pieces.push_back(at::slice(self, dim, start, start + length));
    start += length;
  }
  return pieces;
}

std::vector<Tensor> split_at_indices(const Tensor& self, IntArrayRef indices, int64_t dim) {
  check_splittable(self);
  dim = wrap_dim(dim, self.dim());
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t index : indices) {
    pieces.push_back(at::slice(self, dim, start, index));
    start = index;
  }
  pieces.push_back(at::slice(self, dim, start, self.size(dim)));
  return pieces;
}

std::vector<Tensor> numpy_split(const Tensor& self, int64_t sections, int64_t dim, const char* name) {
  TORCH_CHECK(sections != 0 && self.size(dim) % sections == 0, "torch.", name, " attempted to split along dimension ",
              dim, ", but the size of the dimension ", self.size(dim), " is not divisible by the split_size ",
              sections, "!");
  return split_in_sections(self, sections, dim);
}

void check_rank(const Tensor& self, int64_t rank, const char* name) {
  TORCH_CHECK(self.dim() >= rank, "torch.", name, " requires a tensor with at least ", rank,
              " dimension, but got a tensor with ", self.dim(), " dimensions!");
}

}  // namespace

std::vector<Tensor> tensor_split_sections(const Tensor& self, int64_t sections, int64_t dim) {
  return split_in_sections(self, sections, dim);
}

std::vector<Tensor> tensor_split_indices(const Tensor& self, IntArrayRef indices, int64_t dim) {
  return split_at_indices(self, indices, dim);
}

std::vector<Tensor> tensor_split_tensor_indices_or_sections(const Tensor& self, const Tensor& tensor_indices_or_sections,
                                                            int64_t dim) {
  const Tensor& t = tensor_indices_or_sections;
  TORCH_CHECK(t.device().is_cpu(), "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on ",
              t.device());
  TORCH_CHECK(t.scalar_type() == c10::kLong, "tensor_split expected tensor_indices_or_sections to have dtype of long, "
              "but got ", t.scalar_type());
  TORCH_CHECK(t.dim() == 0 || t.dim() == 1, "tensor_split expected tensor_indices_or_sections to be a "
              "zero-dimensional or one-dimensional tensor, but got a tensor with ", t.dim(), " dims");
  if (t.dim() == 0) return split_in_sections(self, t.item().toLong(), dim);
  // (torch 1.13 reads a negative view raw here)
  return split_at_indices(self, host_int64_values(t), dim);
}

std::vector<Tensor> hsplit_int(const Tensor& self, int64_t sections) {
  check_rank(self, 1, "hsplit");
  return numpy_split(self, sections, self.dim() == 1 ? 0 : 1, "hsplit");
}
std::vector<Tensor> vsplit_int(const Tensor& self, int64_t sections) {
  check_rank(self, 2, "vsplit");
  return numpy_split(self, sections, 0, "vsplit");
}
std::vector<Tensor> dsplit_int(const Tensor& self, int64_t sections) {
  check_rank(self, 3, "dsplit");
  return numpy_split(self, sections, 2, "dsplit");
}
std::vector<Tensor> hsplit_array(const Tensor& self, IntArrayRef indices) {
  check_rank(self, 1, "hsplit");
  return split_at_indices(self, indices, self.dim() == 1 ? 0 : 1);
}
std::vector<Tensor> vsplit_array(const Tensor& self, IntArrayRef indices) {
  check_rank(self, 2, "vsplit");
  return split_at_indices(self, indices, 0);
}
std::vector<Tensor> dsplit_array(const Tensor& self, IntArrayRef indices) {
  check_rank(self, 3, "dsplit");
  return split_at_indices(self, indices, 2);
}

std::vector<Tensor> unsafe_chunk(const Tensor& self, int64_t chunks, int64_t dim) { return self.chunk(chunks, dim); }
std::vector<Tensor> unsafe_split_Tensor(const Tensor& self, int64_t split_size, int64_t dim) {
  return self.split(split_size, dim);
}
std::vector<Tensor> unsafe_split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  return self.split_with_sizes(split_sizes, dim);
}

}  // namespace at::inline tessera::native
