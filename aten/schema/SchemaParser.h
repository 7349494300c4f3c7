// Parsing torch's operator schema language: `parseSchema("aten::add.Tensor(Tensor self,
// Tensor other, *, Scalar alpha=1) -> Tensor")`. Syntax errors raise c10::Error naming the
// 1-based column, with the schema and a caret under the offending text.
#pragma once

#include <aten/schema/FunctionSchema.h>

#include <c10/macros/Macros.h>

#include <string_view>

namespace c10::inline tessera {

// A whole schema: name, overload, arguments, returns. Defaults are checked against their
// argument's type (`int x=1.5` is an error) and stored in torch's form (`int[2] s=1`
// becomes the list [1, 1]).
TORCH_API FunctionSchema parseSchema(std::string_view schema);

// An operator name alone: "aten::add.Tensor" -> {"aten::add", "Tensor"}; "aten::add" has
// an empty overload name.
TORCH_API OperatorName parseName(std::string_view name);

// A type alone ("int[2]", "Dict(str, Tensor)?"); alias annotations are not allowed here.
TORCH_API SchemaType parseType(std::string_view type);

}  // namespace c10::inline tessera
