// TCPStore's server (internal): the master's thread that holds the keys. See TCPStore.h.
#pragma once

#include <distributed/TCPProtocol.h>

#include <thread>
#include <unordered_map>

namespace c10d::inline tessera {

class TCPServer {
 public:
  // A new server on host:port, or with multi_tenant the one this process already runs there.
  static std::shared_ptr<TCPServer> start(const std::string& host, uint16_t port, bool multi_tenant);
  ~TCPServer();
  uint16_t port() const { return port_; }

 private:
  struct Waiter {
    int fd;
    std::vector<std::string> keys;
  };
  TCPServer(const std::string& host, uint16_t port);
  void loop();
  void drop(int fd);
  bool answer(int fd, tcp::Command cmd, const std::vector<std::string>& args);
  bool reply(int fd, const std::string& value);
  bool has_all(const std::vector<std::string>& keys) const;
  void wake_waiters();

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::thread thread_;
  // Only the server thread touches these.
  std::unordered_map<std::string, std::string> data_;
  std::unordered_map<int, std::string> conns_;  // fd -> bytes received, not yet a whole request
  std::vector<Waiter> waiters_;
};

}  // namespace c10d::inline tessera
