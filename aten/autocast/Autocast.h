// Autocast: mixed precision as a dispatch key. While tessera.autocast('cpu') is on, the
// AutocastCPU key is in the thread's included set; every operator whose ops.yaml entry names
// an `autocast:` policy has one of the kernels below on that key, which casts the floating
// CPU arguments as the policy says and redispatches; every other operator falls through.
// Off, the key is in no key set, so an ordinary call pays nothing.
#pragma once

#include <aten/dispatch/Dispatcher.h>
#include <c10/core/ScalarType.h>
#include <c10/macros/Macros.h>

namespace at::inline tessera::autocast {

// The thread's autocast state, as torch's torch.is_autocast_cpu_enabled() and friends.
TORCH_API bool is_cpu_enabled();
TORCH_API void set_cpu_enabled(bool enabled);
TORCH_API c10::ScalarType get_cpu_dtype();  // bfloat16 until set
TORCH_API void set_cpu_dtype(c10::ScalarType dtype);
// The CUDA flag and dtype exist for torch's API (torch.is_autocast_enabled); with no CUDA
// tensors the AutocastCUDA key has no kernels and falls through.
TORCH_API bool is_gpu_enabled();
TORCH_API void set_gpu_enabled(bool enabled);
TORCH_API c10::ScalarType get_gpu_dtype();  // float16 until set
TORCH_API void set_gpu_dtype(c10::ScalarType dtype);

// The cast cache: a float32 leaf that requires grad (a weight) is cast to the lower
// precision once per outermost autocast region; the Python context clears it on leaving
// nesting level 0.
TORCH_API bool is_cache_enabled();
TORCH_API void set_cache_enabled(bool enabled);
TORCH_API void clear_cache();
TORCH_API int increment_nesting();  // returns the new level
TORCH_API int decrement_nesting();

// The policies of torch's autocast op lists (the `autocast:` field of ops.yaml):
//   lower_precision_fp: float16/bfloat16/float32 arguments run in the autocast dtype;
//   fp32: reduced-precision arguments run in float32;
//   promote: floating arguments run in float32 if any is float32, else in the autocast
//            dtype (another reduced type among them is an error, as torch's prioritize).
// float64 arguments, and tensors that are not floating or not on the CPU, are never cast.
TORCH_API void lower_precision_fp_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack);
TORCH_API void fp32_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack);
TORCH_API void promote_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack);
// The out= forms of listed operators: torch lists none of them, and their own kernels call
// nothing listed; tessera's often compute the functional form and copy it into `out`, so
// this kernel runs them with autocast off, casting nothing (the result lands in out's
// dtype, or fails on it, as torch's).
TORCH_API void as_called_kernel(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack);

}  // namespace at::inline tessera::autocast
