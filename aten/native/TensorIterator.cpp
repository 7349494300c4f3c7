#include <aten/core/Parallel.h>
#include <aten/native/Broadcast.h>
#include <aten/native/MemoryOverlap.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/TensorIterator.h>
#include <aten/native/factory/TensorFactories.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace at::inline tessera {

// ---------------------------------------------------------------- config

TensorIteratorConfig& TensorIteratorConfig::add_output(const Tensor& t) {
  TORCH_INTERNAL_ASSERT(inputs_.empty(), "add outputs before inputs");
  outputs_.push_back(t);
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_input(const Tensor& t) {
  TORCH_CHECK(t.defined(), op_name_, "(): an input tensor is undefined");
  inputs_.push_back(t);
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::check_all_same_dtype(bool v) { check_all_same_dtype_ = v; return *this; }
TensorIteratorConfig& TensorIteratorConfig::promote_inputs_to_common_dtype(bool v) {
  promote_inputs_ = v;
  if (v) check_all_same_dtype_ = false;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::promote_integer_inputs_to_float(bool v) {
  promote_integer_to_float_ = v;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::cast_common_dtype_to_outputs(bool v) {
  cast_to_outputs_ = v;
  if (v) check_all_same_dtype_ = false;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::enforce_safe_casting_to_output(bool v) {
  enforce_safe_casting_ = v;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::resize_outputs(bool v) { resize_outputs_ = v; return *this; }
TensorIteratorConfig& TensorIteratorConfig::check_mem_overlap(bool v) { check_mem_overlap_ = v; return *this; }
TensorIteratorConfig& TensorIteratorConfig::output_dtype(c10::ScalarType t) { output_dtype_ = t; return *this; }
TensorIteratorConfig& TensorIteratorConfig::static_dtype(c10::ScalarType t) {
  static_dtype_ = t;
  check_all_same_dtype_ = false;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::op_name(const char* name) { op_name_ = name; return *this; }
TensorIteratorConfig& TensorIteratorConfig::is_reduction(bool v) {
  is_reduction_ = v;
  return *this;
}

TensorIterator TensorIteratorConfig::build() {
  TensorIterator it(*this);
  it.check_no_partial_overlap();
  it.allocate_and_cast(*this);
  it.compute_strides();
  it.coalesce_dimensions();
  return it;
}

meta::TensorMeta TensorIteratorConfig::output_meta() {
  TORCH_INTERNAL_ASSERT(!outputs_.empty(), "output_meta() needs an output");
  TensorIterator it(*this);
  return meta::TensorMeta{it.shape_.vec(), it.operands_[0].target_dtype, it.output_strides().vec()};
}

// ---------------------------------------------------------------- analysis

TensorIterator::TensorIterator(const TensorIteratorConfig& config) : op_name_(config.op_name_) {
  operands_.reserve(config.outputs_.size() + config.inputs_.size());
  auto add = [&](const Tensor& t, bool is_output) {
    // Kernels read memory raw: a conj()/negative view must have been resolved by the
    // math-bits fallback (a composite that calls a stub directly would bypass it).
    TORCH_INTERNAL_ASSERT(!t.defined() || !t.key_set().has_any(c10::math_bits_keyset), op_name_,
                          ": a conjugate or negative view reached a kernel unresolved");
    Operand& op = operands_.emplace_back();
    op.tensor = t;
    op.is_output = is_output;
  };
  for (const auto& t : config.outputs_) add(t, true);
  for (const auto& t : config.inputs_) add(t, false);
  noutputs_ = static_cast<int>(config.outputs_.size());
  compute_shape(config);
  compute_types(config);
  compute_permutation();
}

void TensorIterator::compute_shape(const TensorIteratorConfig& config) {
  bool first = true;
  auto is_also_input = [&](const Tensor& out) {
    return std::any_of(config.inputs_.begin(), config.inputs_.end(), [&](const Tensor& in) { return in.is_same(out); });
  };
  for (const auto& op : operands_) {
    if (!op.tensor.defined()) continue;
    // Outputs that may be resized do not shape the result; in-place outputs do.
    if (op.is_output && config.resize_outputs_ && !is_also_input(op.tensor)) continue;
    shape_ = first ? c10::DimVector(op.tensor.sizes()) : native::infer_size_dimvector(shape_, op.tensor.sizes());
    first = false;
  }
  for (const auto& op : operands_) {
    if (!op.is_output || !op.tensor.defined() || config.is_reduction_ || !config.check_mem_overlap_) continue;
    native::assert_no_internal_overlap(op.tensor);
  }
  for (auto& op : operands_) {
    if (!op.is_output || !op.tensor.defined() || op.tensor.sizes().equals(shape_)) continue;
    TORCH_CHECK(config.resize_outputs_ && !is_also_input(op.tensor), "output with shape ", op.tensor.sizes(),
                " doesn't match the broadcast shape ", IntArrayRef(shape_));
    op.will_resize = true;
  }
  numel_ = 1;
  for (int64_t s : shape_) numel_ *= s;
}

void TensorIterator::compute_types(const TensorIteratorConfig& config) {
  // The device: that of the operands, where 0-dim CPU inputs (numbers) may join any.
  auto is_number = [](const Operand& op) { return !op.is_output && op.tensor.dim() == 0 && op.tensor.is_cpu(); };
  bool have_device = false;
  for (const auto& op : operands_) {
    if (op.tensor.defined() && !is_number(op) && !have_device) {
      device_ = op.tensor.device();
      have_device = true;
    }
  }
  for (const auto& op : operands_) {
    if (!op.tensor.defined() || is_number(op) || op.tensor.device() == device_) continue;
    TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", device_,
                " and ", op.tensor.device(), "!");
  }

  if (config.static_dtype_ != c10::ScalarType::Undefined) {
    common_dtype_ = config.static_dtype_;
  } else if (config.check_all_same_dtype_) {
    for (const auto& op : operands_) {
      if (!op.tensor.defined()) continue;
      if (common_dtype_ == c10::ScalarType::Undefined) common_dtype_ = op.tensor.scalar_type();
      TORCH_CHECK(op.tensor.scalar_type() == common_dtype_ || (op.is_output && config.output_dtype_ != c10::ScalarType::Undefined),
                  "Found dtype ", op.tensor.scalar_type(), " but expected ", common_dtype_);
    }
  } else {
    native::ResultTypeState state;
    for (int i = noutputs_; i < ntensors(); ++i) native::update_result_type_state(state, operands_[i].tensor);
    common_dtype_ = native::result_type(state);
  }
  if (config.promote_integer_to_float_ && c10::isIntegralType(common_dtype_, /*includeBool=*/true)) {
    common_dtype_ = c10::get_default_dtype();
  }

  for (auto& op : operands_) {
    if (!op.is_output) {
      op.target_dtype = config.promote_inputs_ ? common_dtype_ : op.tensor.scalar_type();
      continue;
    }
    c10::ScalarType produced = config.output_dtype_ != c10::ScalarType::Undefined ? config.output_dtype_ : common_dtype_;
    if (!op.tensor.defined()) {
      op.target_dtype = produced;
      continue;
    }
    c10::ScalarType out_dtype = op.tensor.scalar_type();
    if (config.enforce_safe_casting_) {
      TORCH_CHECK(c10::canCast(produced, out_dtype), "result type ", produced,
                  " can't be cast to the desired output type ", out_dtype);
    }
    // A kernel computing in the common dtype writes the output directly unless it is cast.
    TORCH_CHECK(out_dtype == produced || config.cast_to_outputs_ || !config.promote_inputs_, op_name_,
                "(): expected the output to have dtype ", produced, " but got ", out_dtype);
    op.target_dtype = config.cast_to_outputs_ ? produced : out_dtype;
  }
}

// The stride an operand has along tensor dim d of the broadcast shape (0 when broadcast).
static int64_t broadcast_stride(const Tensor& t, IntArrayRef shape, size_t d) {
  int64_t offset = static_cast<int64_t>(shape.size()) - t.dim();
  int64_t td = static_cast<int64_t>(d) - offset;
  if (td < 0 || t.size(td) == 1) return 0;
  return t.stride(td);
}

// Iteration order: the dim with the smallest strides innermost, judged operand by operand
// (outputs first); ties and broadcast dims keep the natural order (last dim innermost).
void TensorIterator::compute_permutation() {
  const int64_t n = static_cast<int64_t>(shape_.size());
  perm_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm_[i] = n - 1 - i;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const auto& op : operands_) {
      if (!op.tensor.defined() || op.will_resize) continue;
      int64_t s0 = broadcast_stride(op.tensor, shape_, static_cast<size_t>(d0));
      int64_t s1 = broadcast_stride(op.tensor, shape_, static_cast<size_t>(d1));
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 > s1 ? 1 : -1;
      if (shape_[d0] != shape_[d1]) return shape_[d0] > shape_[d1] ? 1 : -1;
    }
    return 0;
  };
  for (int64_t i = 1; i < n; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      int c = should_swap(perm_[d0], perm_[d1]);
      if (c > 0) {
        std::swap(perm_[d0], perm_[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
}

// Contiguous strides in iteration order: an output laid out like its inputs.
c10::DimVector TensorIterator::output_strides() const {
  c10::DimVector strides(shape_.size());
  int64_t s = 1;
  for (int64_t d : perm_) {
    strides[static_cast<size_t>(d)] = s;
    s *= std::max<int64_t>(shape_[d], 1);
  }
  return strides;
}

// ---------------------------------------------------------------- memory

// A tensor's dims are a permutation of some contiguous layout (no gaps, no overlap).
static bool non_overlapping_and_dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  c10::DimVector dims(static_cast<size_t>(t.dim()));
  std::iota(dims.begin(), dims.end(), 0);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.stride(a) < t.stride(b); });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.size(d) == 1) continue;
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

namespace native {

// Torch's rule: two tensors sharing memory must share all of it, element for element
// (in-place ops); "partial" overlap is refused. Judged only when both are dense, as torch does.
static bool partially_overlap(const Tensor& a, const Tensor& b) {
  if (a.is_same(b) || a.numel() == 0 || b.numel() == 0 || a.is_meta() || b.is_meta()) return false;
  if (!a.storage().is_alias_of(b.storage())) return false;
  if (!non_overlapping_and_dense(a) || !non_overlapping_and_dense(b)) return false;
  const char* a_begin = static_cast<const char*>(a.data_ptr());
  const char* b_begin = static_cast<const char*>(b.data_ptr());
  const char* a_end = a_begin + a.nbytes();
  const char* b_end = b_begin + b.nbytes();
  if (a_begin == b_begin && a_end == b_end) return !a.strides().equals(b.strides());
  return a_begin < b_end && b_begin < a_end;
}

void assert_no_internal_overlap(const Tensor& written) {
  if (written.numel() == 0) return;
  for (int64_t d = 0; d < written.dim(); ++d) {
    TORCH_CHECK(written.size(d) <= 1 || written.stride(d) != 0,
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
  }
}

void assert_no_partial_overlap(const Tensor& written, const Tensor& read) {
  TORCH_CHECK(!partially_overlap(written, read),
              "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
              "memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace native

// An elementwise loop reading memory it has already written would give results that
// depend on vector width and on how the range is split across threads.
void TensorIterator::check_no_partial_overlap() const {
  for (const auto& out : operands_) {
    if (!out.is_output || !out.tensor.defined()) continue;
    for (const auto& in : operands_) {
      if (!in.is_output) native::assert_no_partial_overlap(out.tensor, in.tensor);
    }
  }
}

static Tensor converted(const Tensor& t, c10::ScalarType dtype) {
  Tensor out = non_overlapping_and_dense(t) ? at::make_empty_strided(t.sizes(), t.strides(), dtype, t.device())
                                            : at::make_empty(t.sizes(), dtype, t.device());
  if (!t.is_meta()) out.copy_(t);
  return out;
}

void TensorIterator::allocate_and_cast(const TensorIteratorConfig& config) {
  c10::DimVector strides = output_strides();
  for (auto& op : operands_) {
    if (op.is_output) {
      if (!op.tensor.defined()) {
        op.tensor = at::make_empty_strided(shape_, strides, op.target_dtype, device_);
        continue;
      }
      if (op.will_resize) {
        native::resize_out(op.tensor, meta::TensorMeta{shape_.vec(), op.tensor.scalar_type(), strides.vec()}, op_name_);
      }
      if (op.tensor.scalar_type() != op.target_dtype) {
        op.original = op.tensor;
        op.tensor = at::make_empty_strided(op.original.sizes(), op.original.strides(), op.target_dtype, device_);
      }
    } else if (op.tensor.scalar_type() != op.target_dtype) {
      op.tensor = converted(op.tensor, op.target_dtype);
    }
  }
  (void)config;
}

void TensorIterator::compute_strides() {
  for (auto& op : operands_) {
    const int64_t item = static_cast<int64_t>(op.tensor.itemsize());
    op.stride_bytes.resize(shape_.size());
    for (size_t i = 0; i < perm_.size(); ++i) {
      op.stride_bytes[i] = broadcast_stride(op.tensor, shape_, static_cast<size_t>(perm_[i])) * item;
    }
  }
  // From here on shape_ is in iteration order too.
  c10::DimVector shape(shape_.size());
  for (size_t i = 0; i < perm_.size(); ++i) shape[i] = shape_[static_cast<size_t>(perm_[i])];
  shape_ = std::move(shape);
}

void TensorIterator::coalesce_dimensions() {
  if (shape_.size() <= 1) return;
  // Can dims a (inner) and b (outer) be walked as one?
  auto can_merge = [&](size_t a, size_t b) {
    if (shape_[a] == 1 || shape_[b] == 1) return true;
    for (const auto& op : operands_) {
      if (op.stride_bytes[a] * shape_[a] != op.stride_bytes[b]) return false;
    }
    return true;
  };
  size_t prev = 0;
  for (size_t d = 1; d < shape_.size(); ++d) {
    if (can_merge(prev, d)) {
      if (shape_[prev] == 1) {
        for (auto& op : operands_) op.stride_bytes[prev] = op.stride_bytes[d];
      }
      shape_[prev] *= shape_[d];
    } else {
      ++prev;
      if (prev != d) {
        shape_[prev] = shape_[d];
        for (auto& op : operands_) op.stride_bytes[prev] = op.stride_bytes[d];
      }
    }
  }
  shape_.resize(prev + 1);
  for (auto& op : operands_) op.stride_bytes.resize(prev + 1);
}

const Tensor& TensorIterator::output(int i) const {
  const Operand& op = operands_[static_cast<size_t>(i)];
  return op.original.defined() ? op.original : op.tensor;
}

bool TensorIterator::is_scalar(int arg) const {
  for (int64_t s : operands_[static_cast<size_t>(arg)].stride_bytes) {
    if (s != 0) return false;
  }
  return true;
}

bool TensorIterator::is_contiguous() const {
  if (numel_ == 1) return true;
  if (shape_.size() != 1) return false;
  for (const auto& op : operands_) {
    if (op.stride_bytes[0] != static_cast<int64_t>(op.tensor.itemsize())) return false;
  }
  return true;
}

void TensorIterator::cast_outputs() {
  for (auto& op : operands_) {
    if (!op.is_output || !op.original.defined()) continue;
    op.original.copy_(op.tensor);
    op.tensor = op.original;
    op.original = Tensor();
  }
}

// ---------------------------------------------------------------- loops

namespace {

// Note [Tiled 2-D blocks]
// An operand walked across its layout (a transposed input: a long inner stride, a short
// outer one) touches a new cache line at every element of a row and needs the line's next
// element only a whole row later, by when a long row has evicted it. So a block of rows
// runs as tiles of kTileCols columns by enough rows to use four such lines up. The tile is
// narrow because such strides are often powers of two, which map every line of a tile
// column onto the same few cache sets (a 16 KiB stride: 8 sets of this machine's 16-way
// L2, 128 lines). Measured on 4096 x 4096 float, a.t() + b and a.t().contiguous(), two
// threads: 160 and 225 ms untiled, 40-60 and 30-45 ms tiled (64 to 256 columns alike).
constexpr int64_t kCacheLine = 64;
constexpr int64_t kTileCols = 64;
constexpr int64_t kTileLines = 4;

// The rows per tile for this block's strides, or 0 when no operand is walked across its
// layout. Never for a reduction's accumulator (an output with inner stride 0): a kernel
// folds such a row whole (pairwise sums), which tiles would cut into pieces.
int64_t tile_rows(const int64_t* strides, size_t nt, size_t noutputs) {
  for (size_t k = 0; k < noutputs; ++k) {
    if (strides[k] == 0) return 0;
  }
  int64_t rows = 0;
  for (size_t k = 0; k < nt; ++k) {
    const int64_t inner = std::abs(strides[k]), outer = std::abs(strides[nt + k]);
    if (outer != 0 && outer < kCacheLine && inner >= kCacheLine) rows = std::max(rows, kTileLines * kCacheLine / outer);
  }
  return rows;
}

// loop over size0 x size1 elements from ptrs, in tiles when tile_rows says so.
void run_block(TensorIterator::loop2d_t loop, char** ptrs, const int64_t* strides, size_t nt, size_t noutputs,
               int64_t size0, int64_t size1) {
  const int64_t rows = size1 > 1 && size0 > kTileCols ? tile_rows(strides, nt, noutputs) : 0;
  if (rows == 0) {
    loop(ptrs, strides, size0, size1);
    return;
  }
  c10::SmallVector<char*, 4> t(nt);
  for (int64_t j = 0; j < size1; j += rows) {
    const int64_t n1 = std::min(rows, size1 - j);
    for (int64_t i = 0; i < size0; i += kTileCols) {
      for (size_t k = 0; k < nt; ++k) t[k] = ptrs[k] + i * strides[k] + j * strides[nt + k];
      loop(t.data(), strides, std::min(kTileCols, size0 - i), n1);
    }
  }
}

}  // namespace

void TensorIterator::serial_for_each(loop2d_t loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const size_t nt = operands_.size();
  const size_t nd = shape_.size();
  c10::SmallVector<char*, 4> base(nt), ptrs(nt);
  c10::SmallVector<int64_t, 8> strides(2 * nt, 0);
  for (size_t k = 0; k < nt; ++k) {
    base[k] = static_cast<char*>(operands_[k].tensor.data_ptr());
    if (nd >= 1) strides[k] = operands_[k].stride_bytes[0];
    if (nd >= 2) strides[nt + k] = operands_[k].stride_bytes[1];
  }
  if (nd <= 1) {
    for (size_t k = 0; k < nt; ++k) ptrs[k] = base[k] + begin * strides[k];
    loop(ptrs.data(), strides.data(), end - begin, 1);
    return;
  }
  // The multi-index of `begin`, innermost first.
  c10::DimVector index(nd, 0);
  int64_t rest = begin;
  for (size_t d = 0; d < nd; ++d) {
    index[d] = rest % shape_[d];
    rest /= shape_[d];
  }
  while (begin < end) {
    for (size_t k = 0; k < nt; ++k) {
      char* p = base[k];
      for (size_t d = 0; d < nd; ++d) p += index[d] * operands_[k].stride_bytes[d];
      ptrs[k] = p;
    }
    int64_t remaining = end - begin, size0, size1;
    if (index[0] != 0 || remaining < shape_[0]) {
      size0 = std::min(shape_[0] - index[0], remaining);
      size1 = 1;
    } else {
      size0 = shape_[0];
      size1 = std::min(shape_[1] - index[1], remaining / shape_[0]);
    }
    run_block(loop, ptrs.data(), strides.data(), nt, static_cast<size_t>(noutputs_), size0, size1);
    // Advance the multi-index by size0 * size1 elements.
    index[0] += size0;
    if (size1 > 1) index[1] += size1 - 1;
    for (size_t d = 0; d + 1 < nd && index[d] >= shape_[d]; ++d) {
      index[d + 1] += index[d] / shape_[d];
      index[d] %= shape_[d];
    }
    begin += size0 * size1;
  }
}

void TensorIterator::for_each(loop2d_t loop, int64_t grain_size) const {
  // Small iterations never touch OpenMP: a region costs microseconds, more than the loop.
  if (numel_ <= grain_size || get_num_threads() == 1 || in_parallel_region()) {
    serial_for_each(loop, 0, numel_);
    return;
  }
  // Each chunk is a contiguous range of iteration order, so every element is written by
  // exactly one thread; the loop (a function_ref) is shared and must not mutate state.
  parallel_for(0, numel_, grain_size, [&](int64_t begin, int64_t end) { serial_for_each(loop, begin, end); });
}

// ---------------------------------------------------------------- configurations

TensorIteratorConfig TensorIterator::config_for(IteratorFamily family) {
  TensorIteratorConfig config;
  config.promote_inputs_to_common_dtype(true).cast_common_dtype_to_outputs(true);
  switch (family) {
    case IteratorFamily::Unary:
    case IteratorFamily::Binary:
    case IteratorFamily::Ternary:
      config.enforce_safe_casting_to_output(true);
      break;
    case IteratorFamily::UnaryFloat:
    case IteratorFamily::BinaryFloat:
      config.promote_integer_inputs_to_float(true).enforce_safe_casting_to_output(true);
      break;
    case IteratorFamily::UnaryBool:
    case IteratorFamily::Comparison:
      config.output_dtype(c10::kBool);
      break;
    case IteratorFamily::UnaryRealOutput:
      break;
  }
  return config;
}

TensorIterator TensorIterator::binary_op(const Tensor& out, const Tensor& a, const Tensor& b) {
  return config_for(IteratorFamily::Binary).add_output(out).add_input(a).add_input(b).build();
}

TensorIterator TensorIterator::comparison_op(const Tensor& out, const Tensor& a, const Tensor& b) {
  return config_for(IteratorFamily::Comparison).add_output(out).add_input(a).add_input(b).build();
}

TensorIterator TensorIterator::unary_float_op(const Tensor& out, const Tensor& a) {
  return config_for(IteratorFamily::UnaryFloat).add_output(out).add_input(a).build();
}

TensorIterator TensorIterator::nullary_op(const Tensor& out) {
  return TensorIteratorConfig().add_output(out).check_all_same_dtype(false).resize_outputs(false).build();
}

}  // namespace at::inline tessera
