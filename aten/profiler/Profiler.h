// The operator profiler behind tessera.profiler: while a session is on, the Profiler
// dispatch key is in the profiling threads' included set, and its boxed fallback times each
// operator call (nested calls included) into the session's event list. With no session the
// key is in no key set, so an ordinary call pays nothing.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <string>
#include <vector>

namespace at::inline tessera::profiler {

struct ProfilerConfig {
  bool record_shapes = false;  // input sizes and dtypes of every operator call
};

// One timed range: an operator call or a record_function block.
struct Event {
  std::string name;  // "aten::add" or the block's label
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t thread = 0;    // 1, 2, ... in the order threads first record
  uint64_t sequence = 0;  // order of starting, session-wide
  bool user_range = false;
  // record_shapes: per argument, its sizes (empty for a non-tensor) and its dtype name
  // ("" for a non-tensor), as torch's Input Shapes / Input type.
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> dtypes;
};

// Starts a session on the calling thread. Another session already on raises, as torch's.
TORCH_API void enable(const ProfilerConfig& config);
// Ends the session and returns its events in start order. Raises when none is on.
TORCH_API std::vector<Event> disable();
// Whether a session is on (any thread).
TORCH_API bool is_enabled();
// Adds the calling thread to the running session (its later calls are recorded too).
TORCH_API void enable_on_this_thread();

// record_function: a labelled range around arbitrary code. enter returns a handle for exit
// (0 when no session is on; exit then does nothing).
TORCH_API uint64_t enter_range(std::string name);
TORCH_API void exit_range(uint64_t handle);

}  // namespace at::inline tessera::profiler
