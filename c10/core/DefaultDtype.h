// The default floating dtype (torch.get_default_dtype / set_default_dtype): what factories
// without a dtype, Python floats, true division and float-valued ops on integers produce.
// Process-wide, float32 unless set; the default complex dtype follows it.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/macros/Export.h>

namespace c10::inline tessera {

C10_API ScalarType get_default_dtype();
// Float, Double, Half or BFloat16; anything else raises TypeError as torch does.
C10_API void set_default_dtype(ScalarType dtype);
// ComplexDouble when the default is Double, else ComplexFloat (no ComplexHalf here).
C10_API ScalarType get_default_complex_dtype();

}  // namespace c10::inline tessera
