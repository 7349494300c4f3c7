// Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): while a pair is active on
// this thread, every tensor a backward formula saves goes through pack() and only what pack
// returns is kept; backward gets the tensor back from unpack(). Activation checkpointing
// and offloading to host memory are built on this.
#pragma once

#include <aten/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace torch::autograd {

// One saved tensor's hooks: pack() runs once when the tensor is saved, unpack() each time
// backward needs it.
struct TORCH_API SavedVariableHooks {
  virtual ~SavedVariableHooks() = default;
  virtual void call_pack_hook(const at::Tensor& tensor) = 0;
  virtual at::Tensor call_unpack_hook() = 0;
};

// What a `with saved_tensors_hooks(...)` block pushes: makes the hooks of each tensor saved
// inside it.
using SavedVariableHooksFactory = std::function<std::unique_ptr<SavedVariableHooks>()>;

namespace saved_tensor_hooks {
// The innermost factory applies; blocks nest.
TORCH_API void push(SavedVariableHooksFactory factory);
TORCH_API void pop();
// Hooks for a tensor being saved now, or nullptr when no block is active.
TORCH_API std::unique_ptr<SavedVariableHooks> make_for_saved_tensor();
// disable_saved_tensors_hooks(message): pushing hooks fails with `message` until enable().
TORCH_API void disable(std::string message);
TORCH_API void enable();
// The message set by disable(), or nullopt when hooks are allowed.
TORCH_API const std::optional<std::string>& disabled_message();
}  // namespace saved_tensor_hooks

}  // namespace torch::autograd
