// Backward formulas too long for one line of derivatives.yaml. Each is written with
// differentiable ops, so a backward pass recorded with create_graph=True differentiates
// again.
#pragma once

#include <aten/core/Tensor.h>

#include <array>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

namespace torch::autograd::generated::details {

using at::IntArrayRef;
using at::Tensor;

// Complex grads follow torch's convention, the conjugate Wirtinger derivative: for a real
// loss L of z = x + iy the grad is dL/dx + i dL/dy, so a holomorphic f's formula multiplies
// by conj(f'(z)). conjugate(t) is conj_physical for complex t and t itself otherwise (no
// dispatch on the real path).
inline Tensor conjugate(const Tensor& t) { return t.is_complex() ? t.conj_physical() : t; }
// The conjugate transpose of each matrix of a batch (the plain transpose for real t).
inline Tensor mH(const Tensor& t) { return conjugate(t.transpose(-2, -1)); }
Tensor sgn_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
Tensor angle_backward(const Tensor& grad, const Tensor& self);
Tensor cast_grad_back(const Tensor& grad, c10::ScalarType input_dtype);
// The real transforms' adjoints: r2c's is the inverse complex transform of the grad
// zero-filled to the full spectrum (real part); c2r's the forward real transform of the
// grad, with the bins that stand for two (their mirror images) counted twice.
Tensor fft_r2c_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization, bool onesided,
                        IntArrayRef input_sizes);
Tensor fft_c2r_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization);
// at::real / at::imag under names no argument shadows (complex(Tensor real, Tensor imag)).
Tensor real_part(const Tensor& t);
Tensor imag_part(const Tensor& t);

// Sparse operands (aten/native/sparse). The grad of a COO constructor's values: the grad
// at each entry's position (duplicates each get the whole grad there, as to_dense sums them).
Tensor sparse_constructor_values_backward(const Tensor& grad, const Tensor& indices);
// sparse_sampled_addmm's grads for mat1 and mat2 (2-D, or a batch of 3-D CSR grads).
Tensor sampled_addmm_mat1_backward(const Tensor& grad, const Tensor& mat2, const at::Scalar& alpha);
Tensor sampled_addmm_mat2_backward(const Tensor& grad, const Tensor& mat1, const at::Scalar& alpha);
// values() of a COO or compressed tensor: a sparse grad with self's pattern.
Tensor values_backward(const Tensor& grad, const Tensor& self);
// torch.sparse.mm of two COO matrices: grad @ other^T at self's pattern (which = 0), or
// self^T @ grad at other's pattern (which = 1).
Tensor sparse_sparse_matmul_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int64_t which);
// A layout conversion's grad in the input's layout: dense for a strided input, the grad at
// the input's pattern for a sparse one.
Tensor sparse_layout_backward(const Tensor& grad, const Tensor& self);

[[noreturn]] TORCH_API void not_implemented(const char* op, const char* input);
// A formula that refuses at backward, as torch's derivatives.yaml writes
// `not_implemented("inplace version of acosh")`.
[[noreturn]] TORCH_API Tensor not_implemented(const char* what);

// torch.special: the derivative of I1 (scaled: of e^-|x| I1), whose I1(x)/x term is 0/0 at 0.
Tensor special_i1_backward(const Tensor& grad, const Tensor& self, const Tensor& result, bool scaled);

// Reductions: the grad of the reduced tensor spread back over the input's shape.
Tensor restore_reduced_dims(const Tensor& grad, std::optional<IntArrayRef> dims, int64_t ndim, bool keepdim);
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dims, bool keepdim);
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim, bool keepdim);
Tensor var_backward(const Tensor& grad, const Tensor& self, std::optional<IntArrayRef> dim,
                    std::optional<int64_t> correction, bool keepdim);
Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self, std::optional<IntArrayRef> dim,
                    std::optional<int64_t> correction, bool keepdim);
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dim, bool keepdim);
Tensor mean_backward(const Tensor& grad, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim);
// amax/amin: the grad shared equally among the elements equal to the result.
Tensor amaxamin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim);
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
// Ops that pick elements along `dim` by index (max.dim, sort, topk, kthvalue, cummax):
// grad_input[..., indices[..., j, ...], ...] += grad[..., j, ...].
Tensor index_select_backward_along(const Tensor& grad, const Tensor& indices, int64_t dim, IntArrayRef sizes,
                                   bool keepdim);

// Indexing: grads scattered back to the positions the forward read (accumulating repeats).
Tensor index_select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, const Tensor& index);
Tensor gather_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index);
// scatter_reduce.two: (grad_self, grad_src) for sum, mean, prod (zeros handled by dividing
// out of products taken with them replaced by 1) and amax/amin (grad shared among ties).
std::tuple<Tensor, Tensor> scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim,
                                                   const Tensor& index, const Tensor& src, std::string_view reduce,
                                                   bool include_self, const Tensor& result);
Tensor index_backward(const Tensor& grad, IntArrayRef sizes, at::ArrayRef<std::optional<Tensor>> indices);
Tensor index_put_values_backward(const Tensor& grad, at::ArrayRef<std::optional<Tensor>> indices, const Tensor& values);
Tensor take_backward(const Tensor& grad, const Tensor& self, const Tensor& index);
Tensor masked_select_backward(const Tensor& grad, const Tensor& self, const Tensor& mask);
Tensor masked_fill_value_backward(const Tensor& grad, const Tensor& mask);

// Scans.
Tensor cumsum_backward(const Tensor& grad, int64_t dim);
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim);

// Views and shape ops.
Tensor unsqueeze_to(const Tensor& grad, int64_t dim, IntArrayRef sizes);
Tensor select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index);
Tensor slice_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step);
Tensor diagonal_backward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2);
Tensor unfold_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t size, int64_t step);
Tensor as_strided_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef self_strides, int64_t self_offset,
                           IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset);
Tensor permute_backward(const Tensor& grad, IntArrayRef dims);
Tensor repeat_backward(const Tensor& grad, IntArrayRef repeats, IntArrayRef sizes);
Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims);
std::vector<Tensor> cat_tensors_backward(const Tensor& grad, const std::vector<Tensor>& tensors, int64_t dim);
// mkldnn_convolution's grads: convolution_backward with its arguments in torch's order.
std::tuple<Tensor, Tensor, Tensor> mkldnn_convolution_backward(const Tensor& grad, const Tensor& self,
                                                               const Tensor& weight, const std::optional<Tensor>& bias,
                                                               IntArrayRef padding, IntArrayRef stride,
                                                               IntArrayRef dilation, int64_t groups,
                                                               std::array<bool, 3> mask);
// The gradient of a nested tensor's to_padded_tensor: each component's corner of the dense grad.
Tensor to_padded_tensor_backward(const Tensor& grad, const Tensor& self);
// unbind's: the grads stacked along dim, or for a nested self a nested tensor of them.
Tensor unbind_backward(const std::vector<Tensor>& grads, const Tensor& self, int64_t dim);
// grad reshaped to self's shape, or for a nested self (nested_sizes given) each component
// reshaped to self's component's.
Tensor view_backward(const Tensor& grad, IntArrayRef self_sizes,
                     const std::optional<std::vector<std::vector<int64_t>>>& nested_sizes);

// Elementwise.
Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<at::Scalar>& min,
                      const std::optional<at::Scalar>& max);
std::tuple<Tensor, Tensor, Tensor> clamp_tensor_backward(const Tensor& grad, const Tensor& self,
                                                         const std::optional<Tensor>& min,
                                                         const std::optional<Tensor>& max,
                                                         std::array<bool, 3> grad_input_mask);
Tensor pow_self_backward(const Tensor& grad, const Tensor& self, const Tensor& exponent);
Tensor pow_exponent_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps);
Tensor scale(const Tensor& grad, const at::Scalar& factor);

// Matrix products.
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, at::IntArrayRef mat1_sizes,
                        at::IntArrayRef mat1_strides, const at::Scalar& alpha);
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, at::IntArrayRef mat2_sizes,
                        at::IntArrayRef mat2_strides, const at::Scalar& alpha);

// Softmax.
Tensor softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim);
Tensor log_softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim);

// nn activations (FunctionsManualNN.cpp): second derivatives behind the fused backward ops.
Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const at::Scalar& alpha,
                           const at::Scalar& scale, const at::Scalar& input_scale, bool is_result,
                           const Tensor& self_or_result);
Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            std::string_view approximate);
Tensor silu_double_backward(const Tensor& grad, const Tensor& self);
Tensor mish_double_backward(const Tensor& grad, const Tensor& self);
Tensor softplus_double_backward(const Tensor& grad, const Tensor& self, const at::Scalar& beta,
                                const at::Scalar& threshold);
Tensor hardswish_double_backward(const Tensor& grad, const Tensor& self);
Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& self);
std::tuple<Tensor, Tensor> prelu_backward(const Tensor& grad, const Tensor& self, const Tensor& weight);

// Pooling (FunctionsManualNN.cpp): grad picked at each plane's recorded indices.
Tensor gather_at_pooling_indices(const Tensor& grad, const Tensor& indices, int64_t spatial);
// The other way: grad added into self's shape at each plane's recorded indices (the
// backward of a pooling that records argmaxes; fractional max pooling uses it).
Tensor scatter_at_pooling_indices(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t spatial);

// Normalization (FunctionsManualNN.cpp).
std::tuple<Tensor, Tensor, Tensor> layer_norm_double_backward(const Tensor& grad_dx, const Tensor& grad_dw,
                                                              const Tensor& grad_db, const Tensor& dy,
                                                              const Tensor& input, IntArrayRef normalized_shape,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight,
                                                              std::array<bool, 3> grad_input_mask);
std::tuple<Tensor, Tensor, Tensor> batch_norm_double_backward(
    const Tensor& grad_dx, const Tensor& grad_dw, const Tensor& grad_db, const Tensor& dy, const Tensor& input,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var, const std::optional<Tensor>& save_mean,
    const std::optional<Tensor>& save_invstd, bool train, double eps, std::array<bool, 3> grad_input_mask);
std::tuple<Tensor, Tensor, Tensor> group_norm_double_backward(const Tensor& grad_dx, const Tensor& grad_dw,
                                                              const Tensor& grad_db, const Tensor& dy,
                                                              const Tensor& input, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              int64_t N, int64_t C, int64_t HxW, int64_t group,
                                                              std::array<bool, 3> grad_input_mask);

// Convolution (FunctionsManualNN.cpp): the backward of convolution_backward. convolution
// is bilinear in (input, weight), so each second-order term is again a convolution or
// one of its backward passes.
std::tuple<Tensor, Tensor, Tensor> convolution_double_backward(
    const Tensor& ggI, const Tensor& ggW, const Tensor& ggb, const Tensor& gO, const Tensor& input,
    const Tensor& weight, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
    IntArrayRef output_padding, int64_t groups, std::array<bool, 3> grad_input_mask);

// Losses (FunctionsManualNN.cpp).
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction);
Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction);

// Linear algebra (FunctionsManualLinalg.cpp), for real inputs.
Tensor lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots);
Tensor lu_unpack_backward(const Tensor& grad_L, const Tensor& grad_U, int64_t m, int64_t n);
Tensor lu_solve_LU_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots, const Tensor& X, bool left,
                            bool adjoint);
std::tuple<Tensor, Tensor> linalg_solve_backward(const Tensor& grad, const Tensor& X, const Tensor& A, const Tensor& B,
                                                 const Tensor& LU, const Tensor& pivots, bool left,
                                                 std::array<bool, 2> grad_input_mask);
Tensor linalg_det_backward(const Tensor& grad, const Tensor& det, const Tensor& A);
Tensor slogdet_backward(const Tensor& grad_sign, const Tensor& grad_logabsdet, const Tensor& A, const Tensor& sign);
Tensor cholesky_backward(const Tensor& grad, bool upper, const Tensor& L);
std::tuple<Tensor, Tensor> linalg_solve_triangular_backward(const Tensor& grad, const Tensor& A, const Tensor& X,
                                                            bool upper, bool left, bool unitriangular,
                                                            std::array<bool, 2> grad_input_mask);
Tensor linalg_eigh_backward(const Tensor& grad_L, const Tensor& grad_V, const Tensor& L, const Tensor& V);
// linalg.eig's: eigenvectors of norm one, unique up to a complex phase (the loss must not
// depend on it: torch's check and message).
Tensor linalg_eig_backward(const Tensor& grad_L, const Tensor& grad_V, const Tensor& L, const Tensor& V);
Tensor svd_backward(const Tensor& grad_U, const Tensor& grad_S, const Tensor& grad_Vh, const Tensor& U, const Tensor& S,
                    const Tensor& Vh, bool full_matrices);
Tensor linalg_qr_backward(const Tensor& grad_Q, const Tensor& grad_R, const Tensor& Q, const Tensor& R,
                          std::string_view mode);
Tensor linalg_matrix_exp_differential(const Tensor& self, const Tensor& grad, bool adjoint);
Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A);
std::tuple<Tensor, Tensor> linalg_lstsq_backward(const Tensor& grad, const Tensor& A, const Tensor& B,
                                                 std::array<bool, 2> grad_input_mask);
// Householder reflectors (FunctionsManualHouseholder.cpp).
std::tuple<Tensor, Tensor> householder_product_backward(const Tensor& grad, const Tensor& input, const Tensor& tau);
std::tuple<Tensor, Tensor, Tensor> ormqr_backward(const Tensor& grad, const Tensor& input, const Tensor& tau,
                                                  const Tensor& other, bool left, bool transpose,
                                                  std::array<bool, 3> grad_input_mask);

}  // namespace torch::autograd::generated::details
