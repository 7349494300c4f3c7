// The Dimname overloads (x.sum('C'), x.transpose('N', 'C'), torch.cat(ts, 'C'), ...): each
// looks its names up in the tensor and calls the int overload, whose Named rule names the
// result. The ones torch 1.13 (and current PyTorch) leave unimplemented raise torch's
// message. The factories' names= overloads create the tensor, then name it.
#include <aten/core/NamedTensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>


namespace at::inline tessera::native {

namespace {

using DimnameRef = ArrayRef<Dimname>;

int64_t pos(const Tensor& t, Dimname dim) { return dimname_to_position(t, dim); }
std::vector<int64_t> pos(const Tensor& t, DimnameRef dims) { return dimnames_to_positions(t, dims); }

[[noreturn]] void not_yet(const char* op) {
  TORCH_CHECK(false, op,
              ": You passed a dimname (string) to this op in place of a dimension index but it does not yet support "
              "this behavior. Please pass a dimension index to work around this.");
}

// What torch checks before it names a new tensor.
void check_namable(const std::optional<DimnameRef>& names, std::optional<Layout> layout,
                   std::optional<Device> device) {
  if (!names.has_value()) return;
  TORCH_CHECK(layout.value_or(kStrided) == kStrided, "NYI: named tensors only support strided layout");
  TORCH_CHECK(!device.has_value() || device->is_cpu(), "NYI: named tensors only support CPU and CUDA tensors");
}

Tensor named(Tensor result, const std::optional<DimnameRef>& names) {
  if (names.has_value()) internal_set_names_inplace(result, DimnameList(names->begin(), names->end()));
  return result;
}

Tensor& cat_named_out(TensorList tensors, Dimname dim, Tensor& out) {
  TORCH_CHECK(!tensors.empty(), "expected a non-empty list of Tensors");
  return at::cat_outf(tensors, pos(tensors[0], dim), out);
}

Tensor cat_named(TensorList tensors, Dimname dim) {
  TORCH_CHECK(!tensors.empty(), "expected a non-empty list of Tensors");
  return at::cat(tensors, pos(tensors[0], dim));
}

}  // namespace

// ---- reductions and scans: one dim or a list of dims looked up by name

Tensor sum_dim_DimnameList(const Tensor& self, DimnameRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return at::sum(self, pos(self, dim), keepdim, dtype);
}
Tensor& sum_DimnameList_out(const Tensor& self, DimnameRef dim, bool keepdim, std::optional<ScalarType> dtype,
                            Tensor& out) {
  return at::sum_outf(self, pos(self, dim), keepdim, dtype, out);
}
Tensor mean_names_dim(const Tensor& self, DimnameRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return at::mean(self, pos(self, dim), keepdim, dtype);
}
Tensor& mean_names_out(const Tensor& self, DimnameRef dim, bool keepdim, std::optional<ScalarType> dtype, Tensor& out) {
  return at::mean_outf(self, pos(self, dim), keepdim, dtype, out);
}
Tensor norm_names_ScalarOpt_dim(const Tensor& self, const std::optional<c10::Scalar>& p, DimnameRef dim,
                                bool keepdim) {
  return at::norm(self, p, pos(self, dim), keepdim);
}
Tensor norm_names_ScalarOpt_dim_dtype(const Tensor& self, const std::optional<c10::Scalar>& p, DimnameRef dim,
                                      bool keepdim, ScalarType dtype) {
  return at::norm(self, p, pos(self, dim), keepdim, dtype);
}
Tensor& norm_names_out(const Tensor& self, const std::optional<c10::Scalar>& p, DimnameRef dim, bool keepdim,
                       Tensor& out) {
  return at::norm_outf(self, p, pos(self, dim), keepdim, out);
}
Tensor& norm_names_dtype_out(const Tensor& self, const std::optional<c10::Scalar>& p, DimnameRef dim, bool keepdim,
                             ScalarType dtype, Tensor& out) {
  return at::norm_outf(self, p, pos(self, dim), keepdim, dtype, out);
}
Tensor prod_dim_Dimname(const Tensor& self, Dimname dim, bool keepdim, std::optional<ScalarType> dtype) {
  return at::prod(self, pos(self, dim), keepdim, dtype);
}
Tensor& prod_Dimname_out(const Tensor& self, Dimname dim, bool keepdim, std::optional<ScalarType> dtype, Tensor& out) {
  return at::prod_outf(self, pos(self, dim), keepdim, dtype, out);
}
Tensor logsumexp_names(const Tensor& self, DimnameRef dim, bool keepdim) {
  return at::logsumexp(self, pos(self, dim), keepdim);
}
Tensor& logsumexp_names_out(const Tensor& self, DimnameRef dim, bool keepdim, Tensor& out) {
  return at::logsumexp_outf(self, pos(self, dim), keepdim, out);
}

Tensor std_names_dim(const Tensor& self, DimnameRef dim, bool unbiased, bool keepdim) {
  return at::std(self, pos(self, dim), unbiased, keepdim);
}
Tensor& std_names_out(const Tensor& self, DimnameRef dim, bool unbiased, bool keepdim, Tensor& out) {
  return at::std_outf(self, pos(self, dim), unbiased, keepdim, out);
}
Tensor std_correction_names(const Tensor& self, DimnameRef dim, std::optional<int64_t> correction, bool keepdim) {
  return at::std(self, pos(self, dim), correction, keepdim);
}
Tensor& std_correction_names_out(const Tensor& self, DimnameRef dim, std::optional<int64_t> correction, bool keepdim,
                                 Tensor& out) {
  return at::std_outf(self, pos(self, dim), correction, keepdim, out);
}
Tensor var_names_dim(const Tensor& self, DimnameRef dim, bool unbiased, bool keepdim) {
  return at::var(self, pos(self, dim), unbiased, keepdim);
}
Tensor& var_names_out(const Tensor& self, DimnameRef dim, bool unbiased, bool keepdim, Tensor& out) {
  return at::var_outf(self, pos(self, dim), unbiased, keepdim, out);
}
Tensor var_correction_names(const Tensor& self, DimnameRef dim, std::optional<int64_t> correction, bool keepdim) {
  return at::var(self, pos(self, dim), correction, keepdim);
}
Tensor& var_correction_names_out(const Tensor& self, DimnameRef dim, std::optional<int64_t> correction, bool keepdim,
                                 Tensor& out) {
  return at::var_outf(self, pos(self, dim), correction, keepdim, out);
}
std::tuple<Tensor, Tensor> std_mean_names_dim(const Tensor& self, DimnameRef dim, bool unbiased, bool keepdim) {
  return at::std_mean(self, pos(self, dim), unbiased, keepdim);
}
std::tuple<Tensor, Tensor> std_mean_correction_names(const Tensor& self, DimnameRef dim,
                                                     std::optional<int64_t> correction, bool keepdim) {
  return at::std_mean(self, pos(self, dim), correction, keepdim);
}
std::tuple<Tensor, Tensor> var_mean_names_dim(const Tensor& self, DimnameRef dim, bool unbiased, bool keepdim) {
  return at::var_mean(self, pos(self, dim), unbiased, keepdim);
}
std::tuple<Tensor, Tensor> var_mean_correction_names(const Tensor& self, DimnameRef dim,
                                                     std::optional<int64_t> correction, bool keepdim) {
  return at::var_mean(self, pos(self, dim), correction, keepdim);
}

std::tuple<Tensor, Tensor> max_names_dim(const Tensor& self, Dimname dim, bool keepdim) {
  return at::max(self, pos(self, dim), keepdim);
}
std::tuple<Tensor&, Tensor&> max_names_dim_max(const Tensor& self, Dimname dim, bool keepdim, Tensor& max,
                                               Tensor& max_values) {
  return at::max_outf(self, pos(self, dim), keepdim, max, max_values);
}
std::tuple<Tensor, Tensor> min_names_dim(const Tensor& self, Dimname dim, bool keepdim) {
  return at::min(self, pos(self, dim), keepdim);
}
std::tuple<Tensor&, Tensor&> min_names_dim_min(const Tensor& self, Dimname dim, bool keepdim, Tensor& min,
                                               Tensor& min_indices) {
  return at::min_outf(self, pos(self, dim), keepdim, min, min_indices);
}
std::tuple<Tensor, Tensor> median_names_dim(const Tensor& self, Dimname dim, bool keepdim) {
  return at::median(self, pos(self, dim), keepdim);
}
std::tuple<Tensor&, Tensor&> median_names_dim_values(const Tensor& self, Dimname dim, bool keepdim, Tensor& values,
                                                     Tensor& indices) {
  return at::median_outf(self, pos(self, dim), keepdim, values, indices);
}
std::tuple<Tensor, Tensor> nanmedian_names_dim(const Tensor& self, Dimname dim, bool keepdim) {
  return at::nanmedian(self, pos(self, dim), keepdim);
}
std::tuple<Tensor&, Tensor&> nanmedian_names_dim_values(const Tensor& self, Dimname dim, bool keepdim, Tensor& values,
                                                        Tensor& indices) {
  return at::nanmedian_outf(self, pos(self, dim), keepdim, values, indices);
}
std::tuple<Tensor, Tensor> mode_dimname(const Tensor& self, Dimname dim, bool keepdim) {
  return at::mode(self, pos(self, dim), keepdim);
}
std::tuple<Tensor&, Tensor&> mode_dimname_out(const Tensor& self, Dimname dim, bool keepdim, Tensor& values,
                                              Tensor& indices) {
  return at::mode_outf(self, pos(self, dim), keepdim, values, indices);
}
std::tuple<Tensor, Tensor> kthvalue_dimname(const Tensor& self, int64_t k, Dimname dim, bool keepdim) {
  return at::kthvalue(self, k, pos(self, dim), keepdim);
}
std::tuple<Tensor&, Tensor&> kthvalue_dimname_out(const Tensor& self, int64_t k, Dimname dim, bool keepdim,
                                                  Tensor& values, Tensor& indices) {
  return at::kthvalue_outf(self, k, pos(self, dim), keepdim, values, indices);
}

std::tuple<Tensor, Tensor> cummax_dimname(const Tensor& self, Dimname dim) { return at::cummax(self, pos(self, dim)); }
std::tuple<Tensor&, Tensor&> cummax_dimname_out(const Tensor& self, Dimname dim, Tensor& values, Tensor& indices) {
  return at::cummax_outf(self, pos(self, dim), values, indices);
}
std::tuple<Tensor, Tensor> cummin_dimname(const Tensor& self, Dimname dim) { return at::cummin(self, pos(self, dim)); }
std::tuple<Tensor&, Tensor&> cummin_dimname_out(const Tensor& self, Dimname dim, Tensor& values, Tensor& indices) {
  return at::cummin_outf(self, pos(self, dim), values, indices);
}
Tensor cumsum_dimname(const Tensor& self, Dimname dim, std::optional<ScalarType> dtype) {
  return at::cumsum(self, pos(self, dim), dtype);
}
Tensor& cumsum_dimname_out(const Tensor& self, Dimname dim, std::optional<ScalarType> dtype, Tensor& out) {
  return at::cumsum_outf(self, pos(self, dim), dtype, out);
}
// As torch, the in-place scans by name are their out= forms writing into self: out='s
// dtype check and its refusal of autograd apply.
Tensor& cumsum__dimname(Tensor& self, Dimname dim, std::optional<ScalarType> dtype) {
  return at::cumsum_outf(self, pos(self, dim), dtype, self);
}
Tensor cumprod_dimname(const Tensor& self, Dimname dim, std::optional<ScalarType> dtype) {
  return at::cumprod(self, pos(self, dim), dtype);
}
Tensor& cumprod_dimname_out(const Tensor& self, Dimname dim, std::optional<ScalarType> dtype, Tensor& out) {
  return at::cumprod_outf(self, pos(self, dim), dtype, out);
}
Tensor& cumprod__dimname(Tensor& self, Dimname dim, std::optional<ScalarType> dtype) {
  return at::cumprod_outf(self, pos(self, dim), dtype, self);
}
Tensor logcumsumexp_dimname(const Tensor& self, Dimname dim) { return at::logcumsumexp(self, pos(self, dim)); }
Tensor& logcumsumexp_dimname_out(const Tensor& self, Dimname dim, Tensor& out) {
  return at::logcumsumexp_outf(self, pos(self, dim), out);
}
Tensor softmax_Dimname(const Tensor& self, Dimname dim, std::optional<ScalarType> dtype) {
  return at::softmax(self, pos(self, dim), dtype);
}
Tensor log_softmax_Dimname(const Tensor& self, Dimname dim, std::optional<ScalarType> dtype) {
  return at::log_softmax(self, pos(self, dim), dtype);
}

// ---- indexing along a named dim

Tensor index_fill_Dimname_Scalar(const Tensor& self, Dimname dim, const Tensor& index, const Scalar& value) {
  return at::index_fill(self, pos(self, dim), index, value);
}
Tensor index_fill_Dimname_Tensor(const Tensor& self, Dimname dim, const Tensor& index, const Tensor& value) {
  return at::index_fill(self, pos(self, dim), index, value);
}
Tensor& index_fill__Dimname_Scalar(Tensor& self, Dimname dim, const Tensor& index, const Scalar& value) {
  return self.index_fill_(pos(self, dim), index, value);
}
Tensor& index_fill__Dimname_Tensor(Tensor& self, Dimname dim, const Tensor& index, const Tensor& value) {
  return self.index_fill_(pos(self, dim), index, value);
}

// torch 1.13 (and current PyTorch) registers these and raises: the name is accepted by the
// parser, the op is not implemented for it.
Tensor all_dimname(const Tensor&, Dimname, bool) { not_yet("all"); }
Tensor& all_dimname_out(const Tensor&, Dimname, bool, Tensor&) { not_yet("all"); }
Tensor any_dimname(const Tensor&, Dimname, bool) { not_yet("any"); }
Tensor& any_dimname_out(const Tensor&, Dimname, bool, Tensor&) { not_yet("any"); }
Tensor argsort_dimname(const Tensor&, Dimname, bool) { not_yet("argsort"); }
Tensor gather_dimname(const Tensor&, Dimname, const Tensor&, bool) { not_yet("gather"); }
Tensor& gather_dimname_out(const Tensor&, Dimname, const Tensor&, bool, Tensor&) { not_yet("gather"); }
Tensor index_add_dimname(const Tensor&, Dimname, const Tensor&, const Tensor&, const Scalar&) { not_yet("index_add"); }
Tensor index_copy_dimname(const Tensor&, Dimname, const Tensor&, const Tensor&) { not_yet("index_copy"); }
Tensor& index_copy__dimname(Tensor&, Dimname, const Tensor&, const Tensor&) { not_yet("index_copy"); }
Tensor index_select_dimname(const Tensor&, Dimname, const Tensor&) { not_yet("index_select"); }
Tensor& index_select_dimname_out(const Tensor&, Dimname, const Tensor&, Tensor&) { not_yet("index_select"); }
Tensor scatter_dimname_src(const Tensor&, Dimname, const Tensor&, const Tensor&) { not_yet("scatter"); }
Tensor scatter_dimname_value(const Tensor&, Dimname, const Tensor&, const Scalar&) { not_yet("scatter"); }
Tensor scatter_add_dimname(const Tensor&, Dimname, const Tensor&, const Tensor&) { not_yet("scatter_add"); }
std::tuple<Tensor, Tensor> sort_dimname(const Tensor&, Dimname, bool) { not_yet("sort"); }
std::tuple<Tensor&, Tensor&> sort_dimname_values(const Tensor&, Dimname, bool, Tensor&, Tensor&) { not_yet("sort"); }
std::tuple<Tensor, Tensor> sort_dimname_stable(const Tensor&, std::optional<bool>, Dimname, bool) {
  not_yet("sort");
}
std::tuple<Tensor&, Tensor&> sort_dimname_values_stable(const Tensor&, std::optional<bool>, Dimname, bool, Tensor&,
                                                        Tensor&) {
  not_yet("sort");
}
Tensor& squeeze__dimname(Tensor&, Dimname) { not_yet("squeeze"); }

// ---- views and joins

Tensor select_Dimname(const Tensor& self, Dimname dim, int64_t index) { return at::select(self, pos(self, dim), index); }
Tensor squeeze_dimname(const Tensor& self, Dimname dim) { return at::squeeze(self, pos(self, dim)); }
std::vector<Tensor> unbind_Dimname(const Tensor& self, Dimname dim) { return at::unbind(self, pos(self, dim)); }

// torch looks dim1 up before dim0 (its arguments are evaluated right to left), so the
// first missing name it reports is the last one: kept, so both report the same name.
Tensor transpose_Dimname(const Tensor& self, Dimname dim0, Dimname dim1) {
  const int64_t second = pos(self, dim1);
  return at::transpose(self, pos(self, dim0), second);
}

Tensor diagonal_Dimname(const Tensor& self, Dimname outdim, Dimname dim1, Dimname dim2, int64_t offset) {
  const int64_t second = pos(self, dim2);
  Tensor result = at::diagonal(self, offset, pos(self, dim1), second);
  DimnameList names = names_of(result);
  names.back() = outdim;
  return refine_names(result, names);
}

Tensor cat_names(TensorList tensors, Dimname dim) { return cat_named(tensors, dim); }
Tensor& cat_names_out(TensorList tensors, Dimname dim, Tensor& out) { return cat_named_out(tensors, dim, out); }
Tensor concat_names(TensorList tensors, Dimname dim) { return cat_named(tensors, dim); }
Tensor& concat_names_out(TensorList tensors, Dimname dim, Tensor& out) { return cat_named_out(tensors, dim, out); }
Tensor concatenate_names(TensorList tensors, Dimname dim) { return cat_named(tensors, dim); }
Tensor& concatenate_names_out(TensorList tensors, Dimname dim, Tensor& out) {
  return cat_named_out(tensors, dim, out);
}

// dims start..end become one dim named out_dim. Two deliberate departures from torch 1.13,
// whose code here differs from its int overload: negative dims are wrapped (1.13 takes
// end_dim=-1 literally and fails), and when there is nothing to flatten the result is a
// renamed alias (1.13 returns self and renames the caller's tensor in place).
Tensor flatten_named_out_dim(const Tensor& self, int64_t start_dim, int64_t end_dim, Dimname out_dim) {
  const int64_t ndim = self.dim();
  const int64_t start = wrap_dim(start_dim, ndim);
  const int64_t end = wrap_dim(end_dim, ndim);
  Tensor result;
  {
    NoNamesGuard guard;
    result = at::flatten(self, start, end);
    if (result.is_same(self)) result = at::alias(self);
  }
  DimnameList names = names_of(self);
  if (ndim == 0) {
    names = {out_dim};
  } else {
    names.erase(names.begin() + start, names.begin() + end + 1);
    names.insert(names.begin() + start, out_dim);
  }
  internal_set_names_inplace(result, names);
  return result;
}

Tensor flatten_using_names(const Tensor& self, Dimname start_dim, Dimname end_dim, Dimname out_dim) {
  const int64_t end = pos(self, end_dim);
  return flatten_named_out_dim(self, pos(self, start_dim), end, out_dim);
}

Tensor flatten_DimnameList(const Tensor& self, DimnameRef dims, Dimname out_dim) {
  const std::vector<int64_t> positions = pos(self, dims);
  TORCH_CHECK(!positions.empty(), "flatten(tensor, dims, out_dim): dims cannot be empty");
  for (size_t i = 0; i + 1 < positions.size(); ++i) {
    TORCH_CHECK(positions[i] + 1 == positions[i + 1], "flatten(tensor, dims, out_dim): dims ",
                c10::namesToString(DimnameList(dims.begin(), dims.end())), " must be consecutive in ",
                c10::tensorNamesToString(names_of(self)));
  }
  return flatten_named_out_dim(self, positions.front(), positions.back(), out_dim);
}

// dim becomes len(sizes) dims with the given names (Tensor.unflatten(dim, (('A', 2), ...))
// in Python unzips its named shape into these two lists).
Tensor unflatten_Dimname(const Tensor& self, Dimname dim, IntArrayRef sizes, DimnameRef names) {
  const int64_t d = pos(self, dim);
  TORCH_CHECK(names.size() == sizes.size(), "unflatten: got ", names.size(), " names for ", sizes.size(), " sizes");
  const std::vector<int64_t> shape = unflatten_shape(self, d, sizes);
  Tensor result;
  {
    NoNamesGuard guard;
    result = self.view(shape);
  }
  DimnameList out_names = names_of(self);
  out_names.erase(out_names.begin() + d);
  out_names.insert(out_names.begin() + d, names.begin(), names.end());
  internal_set_names_inplace(result, out_names);
  return result;
}

// ---- factories with names=

Tensor empty_names(IntArrayRef size, std::optional<DimnameRef> names, std::optional<ScalarType> dtype,
                   std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory,
                   std::optional<MemoryFormat> memory_format) {
  check_namable(names, layout, device);
  return named(at::empty(size, dtype, layout, device, pin_memory, memory_format), names);
}
Tensor zeros_names(IntArrayRef size, std::optional<DimnameRef> names, std::optional<ScalarType> dtype,
                   std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) {
  check_namable(names, layout, device);
  return named(at::zeros(size, dtype, layout, device, pin_memory), names);
}
Tensor ones_names(IntArrayRef size, std::optional<DimnameRef> names, std::optional<ScalarType> dtype,
                  std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) {
  check_namable(names, layout, device);
  return named(at::ones(size, dtype, layout, device, pin_memory), names);
}
Tensor full_names(IntArrayRef size, const Scalar& fill_value, std::optional<DimnameRef> names,
                  std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device,
                  std::optional<bool> pin_memory) {
  check_namable(names, layout, device);
  return named(at::full(size, fill_value, dtype, layout, device, pin_memory), names);
}
Tensor rand_names(IntArrayRef size, std::optional<DimnameRef> names, std::optional<ScalarType> dtype,
                  std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) {
  check_namable(names, layout, device);
  return named(at::rand(size, dtype, layout, device, pin_memory), names);
}
Tensor rand_generator_with_names(IntArrayRef size, std::optional<Generator> generator, std::optional<DimnameRef> names,
                                 std::optional<ScalarType> dtype, std::optional<Layout> layout,
                                 std::optional<Device> device, std::optional<bool> pin_memory) {
  check_namable(names, layout, device);
  return named(at::rand(size, generator, dtype, layout, device, pin_memory), names);
}
Tensor randn_names(IntArrayRef size, std::optional<DimnameRef> names, std::optional<ScalarType> dtype,
                   std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) {
  check_namable(names, layout, device);
  return named(at::randn(size, dtype, layout, device, pin_memory), names);
}
Tensor randn_generator_with_names(IntArrayRef size, std::optional<Generator> generator,
                                  std::optional<DimnameRef> names, std::optional<ScalarType> dtype,
                                  std::optional<Layout> layout, std::optional<Device> device,
                                  std::optional<bool> pin_memory) {
  check_namable(names, layout, device);
  return named(at::randn(size, generator, dtype, layout, device, pin_memory), names);
}

}  // namespace at::inline tessera::native
