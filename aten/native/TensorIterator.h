// TensorIterator: the one piece of shape logic every elementwise kernel shares. From its
// operands (outputs first, then inputs) it computes the broadcast shape, the common dtype
// (torch's result_type) and the casts it implies, allocates or resizes outputs (in the
// inputs' memory order), checks unsafe casts, then orders the dimensions by stride and
// coalesces them so kernels see the fewest, longest rows. Kernels run a 2-D loop over it,
// split across threads in chunks of about 32K elements.
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/TensorMeta.h>
#include <c10/util/FunctionRef.h>
#include <c10/util/SmallVector.h>

#include <vector>

namespace at::inline tessera {

class TensorIterator;

// The usual configurations, by what the operator computes. ops.yaml names them in
// `iterator:` entries (unary, unary_float, ...), from which the shape function and CPU
// kernel of such an operator are generated.
enum class IteratorFamily {
  Unary,        // inputs promoted to their common dtype; result cast to the output's
  UnaryFloat,   // the same, integers and bools computed in the default float dtype
  UnaryBool,    // a Bool result (isnan, logical_not)
  UnaryRealOutput,  // the output's dtype set by the shape function (abs of complex is real)
  Binary,
  BinaryFloat,
  Comparison,   // inputs promoted to their common dtype, a Bool result
  Ternary,
};

class TORCH_API TensorIteratorConfig {
 public:
  // An undefined output is allocated; a defined one is written (resized if it must be).
  TensorIteratorConfig& add_output(const Tensor& t);
  TensorIteratorConfig& add_input(const Tensor& t);
  // Every operand must have one dtype (the default) ...
  TensorIteratorConfig& check_all_same_dtype(bool v);
  // ... or inputs are converted to the common dtype (torch's result_type) ...
  TensorIteratorConfig& promote_inputs_to_common_dtype(bool v);
  // ... with integral and bool inputs lifted to the default float dtype (true division, exp).
  TensorIteratorConfig& promote_integer_inputs_to_float(bool v);
  // Outputs of another dtype get a temporary in the common dtype, copied back by cast_outputs().
  TensorIteratorConfig& cast_common_dtype_to_outputs(bool v);
  // The common dtype must cast to each output's without changing category.
  TensorIteratorConfig& enforce_safe_casting_to_output(bool v);
  TensorIteratorConfig& resize_outputs(bool v);
  // Outputs (allocated ones) get this dtype whatever the inputs' (comparisons: Bool).
  TensorIteratorConfig& output_dtype(c10::ScalarType t);
  // Operations run in this dtype whatever the inputs' (check_all_same_dtype is then moot).
  TensorIteratorConfig& static_dtype(c10::ScalarType t);
  TensorIteratorConfig& op_name(const char* name);
  // The output is a reduction's accumulator: stride 0 along reduced dims is intended.
  TensorIteratorConfig& is_reduction(bool v);
  // Outputs that write one element through several indices (stride 0) are refused unless
  // this is off: scatter and index_put write through such views on purpose.
  TensorIteratorConfig& check_mem_overlap(bool v);

  TensorIterator build();
  // What build() would allocate for output 0 (sizes, strides, dtype), touching no data:
  // the shape function of structured operators, shared by Meta and every backend.
  meta::TensorMeta output_meta();

 private:
  friend class TensorIterator;
  c10::SmallVector<Tensor, 2> outputs_;
  c10::SmallVector<Tensor, 4> inputs_;
  bool check_all_same_dtype_ = true;
  bool promote_inputs_ = false;
  bool promote_integer_to_float_ = false;
  bool cast_to_outputs_ = false;
  bool enforce_safe_casting_ = false;
  bool resize_outputs_ = true;
  c10::ScalarType output_dtype_ = c10::ScalarType::Undefined;
  c10::ScalarType static_dtype_ = c10::ScalarType::Undefined;
  const char* op_name_ = "operator";
  bool is_reduction_ = false;
  bool check_mem_overlap_ = true;
};

class TORCH_API TensorIterator {
 public:
  // data[ntensors]; strides[2 * ntensors] in bytes: every operand's inner stride, then
  // every operand's outer stride; size0 the inner extent, size1 the outer.
  using loop2d_t = c10::function_ref<void(char** data, const int64_t* strides, int64_t size0, int64_t size1)>;

  int ntensors() const { return static_cast<int>(operands_.size()); }
  int noutputs() const { return noutputs_; }
  int ninputs() const { return ntensors() - noutputs_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  IntArrayRef shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  c10::ScalarType dtype(int arg = 0) const { return operands_[arg].tensor.scalar_type(); }
  c10::ScalarType common_dtype() const { return common_dtype_; }
  c10::ScalarType input_dtype(int i = 0) const { return dtype(noutputs_ + i); }
  char* data_ptr(int arg) const { return static_cast<char*>(operands_[arg].tensor.data_ptr()); }
  IntArrayRef strides(int arg) const { return operands_[arg].stride_bytes; }
  // The tensor the loop writes (a temporary when casting) and the one the user gets.
  const Tensor& output(int i = 0) const;
  const Tensor& input(int i = 0) const { return operands_[noutputs_ + i].tensor; }
  c10::Device device() const { return device_; }

  bool is_scalar(int arg) const;
  bool is_contiguous() const;

  // Runs loop over every element, in parallel chunks of about grain_size elements.
  void for_each(loop2d_t loop, int64_t grain_size = 32768) const;
  // Runs it over the linear range [begin, end) of iteration order, on this thread.
  void serial_for_each(loop2d_t loop, int64_t begin, int64_t end) const;
  void serial_for_each(loop2d_t loop) const { serial_for_each(loop, 0, numel_); }

  // Copies temporary outputs back into the user's outputs (after the kernel ran).
  void cast_outputs();

  // A config with the family's flags; add the output(s), then the inputs.
  static TensorIteratorConfig config_for(IteratorFamily family);
  static TensorIterator binary_op(const Tensor& out, const Tensor& a, const Tensor& b);
  static TensorIterator comparison_op(const Tensor& out, const Tensor& a, const Tensor& b);
  static TensorIterator unary_float_op(const Tensor& out, const Tensor& a);
  static TensorIterator nullary_op(const Tensor& out);

 private:
  friend class TensorIteratorConfig;
  struct Operand {
    Tensor tensor;    // what the loop reads or writes
    Tensor original;  // the user's output, when `tensor` is a temporary of another dtype
    c10::ScalarType target_dtype = c10::ScalarType::Undefined;
    bool is_output = false;
    bool will_resize = false;
    c10::DimVector stride_bytes;  // in iteration order
  };

  // Shape, dtypes and dimension order: everything but memory (build() goes on from there).
  explicit TensorIterator(const TensorIteratorConfig& config);
  void compute_shape(const TensorIteratorConfig& config);
  void compute_types(const TensorIteratorConfig& config);
  void compute_permutation();
  c10::DimVector output_strides() const;
  void check_no_partial_overlap() const;
  void allocate_and_cast(const TensorIteratorConfig& config);
  void compute_strides();
  void coalesce_dimensions();

  const char* op_name_;
  c10::SmallVector<Operand, 4> operands_;
  int noutputs_ = 0;
  c10::DimVector shape_;               // broadcast shape in the tensors' own dim order, then iteration order
  c10::DimVector perm_;                // perm_[i]: the tensor dim that iteration dim i walks (0 innermost)
  int64_t numel_ = 1;
  c10::ScalarType common_dtype_ = c10::ScalarType::Undefined;
  c10::Device device_ = c10::Device(c10::DeviceType::CPU);
};

namespace native {
// Raises torch's "unsupported operation: some elements of the input tensor and the
// written-to tensor refer to a single memory location" when `written` and `read` share
// some but not all of their memory (both dense); TensorIterator checks every output
// against every input, copy_'s memcpy path calls it directly.
TORCH_API void assert_no_partial_overlap(const Tensor& written, const Tensor& read);
}  // namespace native

}  // namespace at::inline tessera
