// What the int8 primitives here (Int8Matmul.cpp, Int8Conv.cpp) share: a PackedWeight's
// integers reordered into the layout a primitive chose (once per layout, kept with the
// weight), the requantizing epilogue (run-time zero points, so a plan serves every zero
// point; scales fixed in the plan where oneDNN's fast kernels need them, Int8Matmul.cpp), and
// the execution. Included only by this folder's .cpp files (it pulls in dnnl.hpp).
#pragma once

#include <aten/native/nn/onednn/OneDnnCommon.h>
#include <aten/native/quantized/PackedWeight.h>

#include <unordered_map>

namespace at::inline tessera::native {

struct PackedWeight::Blocked {
  dnnl::memory::desc desc;
  Tensor bytes;
};

namespace onednn {

// weight's integers, laid out as `plain` describes the contiguous tensor, in `layout`.
std::shared_ptr<const PackedWeight::Blocked> blocked_weight(const PackedWeight& weight, const dnnl::memory::desc& plain,
                                                            const dnnl::memory::desc& layout);

// The epilogue's attributes: output scales (one, or one per output channel: `scale_mask`
// names the channel dimension's bit), a source zero point, a destination zero point for an
// integer output, relu. The zero points are given at run time, the scales too unless
// `constant_scales` (oneDNN 2.6's int8 convolutions take only scales fixed at creation).
// The scratchpad is the caller's.
dnnl::primitive_attr requantize_attr(int scale_mask, const std::vector<float>* constant_scales, bool dst_zero_point,
                                     bool relu);

// The run-time values requantize_attr asked for (the pointed-to values must outlive the
// execution): scales null when constant, dst_zero_point null for a float output
// or a plan built without one.
void add_requantize_args(std::unordered_map<int, dnnl::memory>& args, const std::vector<float>* scales,
                         const int32_t* src_zero_point, const int32_t* dst_zero_point);

// A built int8 primitive and the layouts it reads and writes.
struct Int8Primitive {
  dnnl::primitive primitive;
  dnnl::memory::desc src, weights, bias, dst, scratchpad;
};

// Runs p: x (laid out as p.src) with the weight (plain layout `plain_weight`, reordered to
// p.weights once), the bias when defined, into out (p.dst); the epilogue's values as
// add_requantize_args takes them.
void execute_int8(const Int8Primitive& p, const void* x, const PackedWeight& weight,
                  const dnnl::memory::desc& plain_weight, void* out, const Tensor& bias,
                  const std::vector<float>* runtime_scales, int32_t x_zero_point, const int32_t* out_zero_point);

}  // namespace onednn
}  // namespace at::inline tessera::native
