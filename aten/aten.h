// Umbrella header for C++ users of Tessera: tensors, options, every operator (at::add,
// at::empty, ...), the dispatcher and TORCH_LIBRARY.
#pragma once

#include <aten/core/Generator.h>
#include <aten/core/IValue.h>
#include <aten/core/Tensor.h>
#include <aten/core/TensorOperators.h>
#include <aten/core/TensorOptions.h>
#include <aten/library.h>
#include <aten/ops/Functions.h>
#include <aten/ops/RedispatchFunctions.h>
#include <c10/c10.h>
