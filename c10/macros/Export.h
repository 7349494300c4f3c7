// Symbol visibility and the ABI namespace for every Tessera library.
// Libraries build with hidden visibility; C10_API marks what c10 exports. Every public
// namespace is wrapped in `inline namespace tessera` so our symbols never clash with a
// PyTorch loaded into the same process (see docs/architecture.md, "Public API").
#pragma once

#define TESSERA_EXPORT __attribute__((visibility("default")))
#define TESSERA_HIDDEN __attribute__((visibility("hidden")))

// c10 exports through C10_API; aten, autograd and extensions use TORCH_API.
#define C10_API TESSERA_EXPORT
#define TORCH_API TESSERA_EXPORT
