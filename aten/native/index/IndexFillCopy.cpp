// index_fill, index_copy and index_reduce: writes along one dimension at the positions an
// index vector names, as composites (index_fill: masked_fill with a mask of the named
// positions; index_copy: index_put on self viewed with that dimension first; index_reduce:
// scatter_reduce with the vector broadcast over source), so autograd comes from those
// operators. The index is read on the host for torch's checks; Meta tensors skip
// them. Checks and messages are torch's.
#include <aten/core/Dispatch.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace at::inline tessera::native {

namespace {

// A bool tensor that is true at the named positions along dim and broadcasts against self.
Tensor positions_mask(const Tensor& self, int64_t dim, const Tensor& index) {
  TORCH_CHECK_INDEX(index.scalar_type() == c10::kLong, "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  const int64_t d = wrap_dim(dim, self.dim());
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
  if (self.dim() > 0) shape[static_cast<size_t>(d)] = size;
  Tensor mask = at::zeros({size}, TensorOptions().dtype(c10::kBool).device(self.device()));
  if (!self.is_meta()) {
    bool* m = mask.data_ptr<bool>();
    for (int64_t i : host_int64_values(index)) {
      TORCH_CHECK_INDEX(i >= -size && i < size, "index ", i, " is out of bounds for dimension ", d, " with size ",
                        size);
      m[i < 0 ? i + size : i] = true;
    }
  }
  return mask.reshape(shape);
}

void check_fill_value(const Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
}

void check_copy(const Tensor& self, int64_t d, const Tensor& index, const Tensor& source) {
  TORCH_CHECK_INDEX(index.scalar_type() == c10::kLong, "index_copy_(): Expected a long tensor for index, but got ",
                    index.scalar_type());
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_copy_(): Index should have dimension 1 or 0 (got ", index.dim(), ")");
  const int64_t count = index.numel();
  const int64_t source_count = source.dim() == 0 ? 1 : source.size(d);
  TORCH_CHECK_INDEX(count == source_count, "index_copy_(): Number of indices (", count,
                    ") should be equal to source.size(dim) (", source_count, ")");
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "index_copy_(): self and source expected to have the same "
              "dtype, but got (self) ", self.scalar_type(), " and (source) ", source.scalar_type());
  bool same_slices = self.dim() == source.dim();
  for (int64_t i = 0; same_slices && i < self.dim(); ++i) same_slices = i == d || self.size(i) == source.size(i);
  TORCH_CHECK(same_slices, "index_copy_(): Source/destination tensor must have same slice shapes. "
              "Destination shape: ", self.sizes(), ", source shape: ", source.sizes(), ", dim: ", d);
  if (self.is_meta()) return;
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  for (int64_t i : host_int64_values(index)) {
    TORCH_CHECK_INDEX(i >= 0 && i < size, "index_copy_(): index ", i, " is out of bounds for dimension ", d,
                      " with size ", size);
  }
}

// index_reduce_'s checks (torch's messages); returns the index as scatter_reduce_ takes it:
// int64, along d, broadcast to source's shape.
Tensor reduce_index(const Tensor& self, int64_t d, const Tensor& index, const Tensor& source, std::string_view reduce) {
  TORCH_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_reduce_(): Index is supposed to be a vector, but got dim: ", index.dim(),
                    " with type: ", index.scalar_type(), " and size: ", index.sizes());
  TORCH_CHECK(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt,
              "index_reduce_(): Expected dtype int32/int64 for index");
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "index_reduce_(): self (", self.scalar_type(),
              ") and source (", source.scalar_type(), ") must have the same scalar type");
  if (self.scalar_type() == c10::kBool || c10::isComplexType(self.scalar_type())) {
    dtype_not_implemented("index_func_", self.scalar_type());
  }
  TORCH_CHECK(d == 0 || d < source.dim(), "index_reduce_(): Indexing dim ", d,
              " is out of bounds of the source tensor with dim ", source.dim());
  const int64_t source_count = source.dim() == 0 ? 1 : source.size(d);
  TORCH_CHECK(index.numel() == source_count, "index_reduce_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim): (", source_count, "), for dim: ", d);
  bool same_slices = std::max<int64_t>(self.dim(), 1) == std::max<int64_t>(source.dim(), 1);
  for (int64_t i = 0; same_slices && i < self.dim(); ++i) same_slices = i == d || self.size(i) == source.size(i);
  TORCH_CHECK(same_slices, "index_reduce_(): Source/destination tensor must have same slice shapes. "
              "Destination shape: ", self.sizes(), ", source shape: ", source.sizes(), ", dim: ", d);
  if (!self.is_meta()) {
    const int64_t size = self.dim() == 0 ? 1 : self.size(d);
    for (int64_t i : host_int64_values(index)) TORCH_CHECK_INDEX(i >= 0 && i < size, "index out of range in self");
  }
  if (source.dim() == 0) return index.to(c10::kLong).reshape({});
  std::vector<int64_t> along(static_cast<size_t>(source.dim()), 1);
  along[static_cast<size_t>(d)] = -1;
  return index.to(c10::kLong).reshape(along).expand(source.sizes());
}

}  // namespace

Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self) {
  const int64_t d = wrap_dim(dim, self.dim());
  return at::scatter_reduce(self, d, reduce_index(self, d, index, source, reduce), source, reduce, include_self);
}

Tensor& index_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                      bool include_self) {
  const int64_t d = wrap_dim(dim, self.dim());
  return self.scatter_reduce_(d, reduce_index(self, d, index, source, reduce), source, reduce, include_self);
}

Tensor index_fill_int_Scalar(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return self.masked_fill(positions_mask(self, dim, index), value);
}

Tensor index_fill_int_Tensor(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  check_fill_value(value);
  return self.masked_fill(positions_mask(self, dim, index), value);
}

Tensor& index_fill__int_Scalar(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return self.masked_fill_(positions_mask(self, dim, index), value);
}

Tensor& index_fill__int_Tensor(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  check_fill_value(value);
  return self.masked_fill_(positions_mask(self, dim, index), value);
}

Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t d = wrap_dim(dim, self.dim());
  check_copy(self, d, index, source);
  if (self.dim() == 0) return self.copy_(source.reshape({}));
  const std::vector<std::optional<Tensor>> indices = {index.reshape({-1})};
  self.movedim(d, 0).index_put_(indices, source.movedim(d, 0));
  return self;
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  Tensor result = self.clone();
  return result.index_copy_(dim, index, source);
}

}  // namespace at::inline tessera::native
