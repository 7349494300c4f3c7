// The store processes on different machines rendezvous through (torch's TCPStore): the
// master process runs a small server thread holding the keys; every TCPStore, the master's
// included, is a client of it. Blocking waits happen on the server, so a client's wait
// costs no polling; a client that times out drops its connection and opens a fresh one.
#pragma once

#include <distributed/Store.h>

#include <optional>

namespace c10d::inline tessera {

struct TCPStoreOptions {
  uint16_t port = 29500;  // 0 on the master: any free port (see TCPStore::port())
  bool is_master = false;
  std::optional<int64_t> num_workers;  // with wait_for_workers, the master waits for this many
  bool wait_for_workers = true;
  std::chrono::milliseconds timeout = Store::kDefaultTimeout;
  bool multi_tenant = false;  // masters of one process on one port share the server
};

class TCPServer;
class TCPClient;

class TORCH_API TCPStore final : public Store {
 public:
  TCPStore(std::string host, const TCPStoreOptions& options = {});
  ~TCPStore() override;

  void set(const std::string& key, const Bytes& value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

 private:
  void wait_raw(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  void wait_for_workers(int64_t workers);
  std::string host_;
  uint16_t port_;
  std::shared_ptr<TCPServer> server_;  // the master's
  std::mutex mu_;                      // one request on the connection at a time
  std::unique_ptr<TCPClient> client_;
  // Blocking waits (and get's) go on a second connection, so that a thread waiting for a
  // key does not hold up another thread of this process that is about to set it.
  std::mutex wait_mu_;
  std::unique_ptr<TCPClient> wait_client_;
};

}  // namespace c10d::inline tessera
