// The TCPStore wire format and socket helpers, shared by its server and client (internal).
// A request is a command byte, an argument count (u32) and the arguments, each a u64 length
// and its bytes; a reply is one such length-prefixed value.
#pragma once

#include <distributed/Store.h>

#include <cstring>
#include <string>
#include <vector>

namespace c10d::inline tessera::tcp {

enum class Command : uint8_t { Set = 1, CompareSet, Get, Add, Check, Wait, Delete, NumKeys };

inline void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); }

inline void put_arg(std::string& out, const void* data, size_t n) {
  put_u64(out, n);
  out.append(static_cast<const char*>(data), n);
}
inline void put_arg(std::string& out, const std::string& s) { put_arg(out, s.data(), s.size()); }
inline void put_arg(std::string& out, const Bytes& b) { put_arg(out, b.data(), b.size()); }

inline std::string encode(Command cmd, const std::vector<std::string>& args) {
  std::string out(1, static_cast<char>(cmd));
  const auto n = static_cast<uint32_t>(args.size());
  out.append(reinterpret_cast<const char*>(&n), sizeof(n));
  for (const auto& a : args) put_arg(out, a);
  return out;
}

// Parses one whole request at the front of `in` (false when more bytes are needed).
inline bool decode(const std::string& in, size_t& consumed, Command& cmd, std::vector<std::string>& args) {
  if (in.size() < 5) return false;
  uint32_t n = 0;
  std::memcpy(&n, in.data() + 1, sizeof(n));
  size_t pos = 5;
  args.clear();
  for (uint32_t i = 0; i < n; ++i) {
    if (in.size() < pos + 8) return false;
    uint64_t len = 0;
    std::memcpy(&len, in.data() + pos, sizeof(len));
    pos += 8;
    if (in.size() - pos < len) return false;
    args.emplace_back(in.data() + pos, len);
    pos += len;
  }
  cmd = static_cast<Command>(in[0]);
  consumed = pos;
  return true;
}

std::string errno_text(int err);
// Sends every byte (false when the peer is gone).
bool send_all(int fd, const char* data, size_t n);

}  // namespace c10d::inline tessera::tcp
