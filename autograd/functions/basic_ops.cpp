#include <autograd/functions/basic_ops.h>

#include <c10/util/Exception.h>

namespace torch::autograd {

variable_list Error::apply(variable_list&&) { TORCH_CHECK(false, msg_); }

// NotImplementedError, which Python makes a subclass of RuntimeError (torch raises the latter).
variable_list NotImplemented::apply(variable_list&&) { TORCH_CHECK_NOT_IMPLEMENTED(false, msg_); }

}  // namespace torch::autograd
