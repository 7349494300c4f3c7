// at::vec::Vectorized<T>: the SIMD value type CPU kernels are written with. Include this
// (not the parts) from files under aten/native/cpu/, which are compiled once per CPU
// capability; each compilation sees the specialisations its ISA allows (vec_base.h says
// how the generic definition and the specialisations fit together).
#pragma once

#include <aten/cpu/vec/vec_base.h>
#include <aten/cpu/vec/vec_avx2_float.h>
#include <aten/cpu/vec/vec_avx2_int.h>
#include <aten/cpu/vec/vec_convert.h>
