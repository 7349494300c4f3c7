// libtessera_distributed from C++: the stores (waits across threads, timeouts, the TCP
// server serving several clients), Gloo process groups of three ranks as three threads of
// one process sharing a HashStore, the engine's final callbacks and the DDP Reducer.
#include <distributed/FileStore.h>
#include <distributed/ProcessGroupGloo.h>
#include <distributed/Reducer.h>
#include <distributed/Store.h>
#include <distributed/TCPStore.h>

#include <autograd/autograd.h>
#include <autograd/engine.h>
#include <autograd/variable.h>
#include <aten/core/TensorOperators.h>
#include <aten/ops/Functions.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

using namespace c10d;
using namespace std::chrono_literals;

namespace {

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

void exercise(Store& store) {
  store.set("a", bytes("1"));
  EXPECT_EQ(store.get("a"), bytes("1"));
  EXPECT_EQ(store.add("n", 4), 4);
  EXPECT_EQ(store.add("n", -1), 3);
  EXPECT_EQ(store.get("n"), bytes("3"));
  EXPECT_EQ(store.compare_set("a", bytes("1"), bytes("2")), bytes("2"));
  EXPECT_EQ(store.compare_set("a", bytes("1"), bytes("3")), bytes("2"));
  EXPECT_TRUE(store.check({"a", "n"}));
  EXPECT_FALSE(store.check({"a", "zz"}));
  // a waiter in another thread wakes when the key arrives
  std::thread setter([&] {
    std::this_thread::sleep_for(20ms);
    store.set("late", bytes("x"));
  });
  store.wait({"late"}, 10s);
  setter.join();
  EXPECT_THROW(store.wait({"never"}, 50ms), c10::Error);
}

TEST(Stores, HashPrefixFileAndTcpBehaveAlike) {
  HashStore hash;
  exercise(hash);
  auto inner = std::make_shared<HashStore>();
  PrefixStore prefix("p", inner);
  exercise(prefix);
  EXPECT_TRUE(inner->check({"p/a"}));
  const auto path = std::filesystem::temp_directory_path() / ("tessera_fs_" + std::to_string(::getpid()));
  {
    FileStore file(path.string(), 1);
    exercise(file);
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // the last store removed it
  TCPStoreOptions o;
  o.port = 0;
  o.is_master = true;
  o.timeout = 10s;
  TCPStore tcp("127.0.0.1", o);
  exercise(tcp);
}

TEST(Stores, TcpServerServesManyClients) {
  TCPStoreOptions master;
  master.port = 0;
  master.is_master = true;
  master.timeout = 20s;
  auto server = std::make_unique<TCPStore>("127.0.0.1", master);
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      TCPStoreOptions c;
      c.port = server->port();
      c.timeout = 20s;
      c.wait_for_workers = false;
      TCPStore client("127.0.0.1", c);
      for (int k = 0; k < 25; ++k) client.add("counter", 1);
      client.set("done" + std::to_string(i), bytes("1"));
    });
  }
  server->wait({"done0", "done1", "done2", "done3"}, 20s);
  for (auto& t : clients) t.join();
  EXPECT_EQ(server->add("counter", 0), 100);
}

// Runs fn(rank, group) on `world` threads, each rank with its own ProcessGroupGloo.
template <typename F>
void with_group(int world, F fn) {
  ::setenv("GLOO_SOCKET_IFNAME", "lo", 0);
  auto store = std::make_shared<HashStore>();
  std::vector<std::thread> ranks;
  std::vector<std::string> errors(world);
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      try {
        ProcessGroupGloo::Options o;
        o.timeout = 30s;
        o.interface = "lo";
        auto pg = std::make_shared<ProcessGroupGloo>(store, r, world, o);
        fn(r, pg);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(ProcessGroupGloo, CollectivesOnThreeRanks) {
  with_group(3, [](int rank, const std::shared_ptr<ProcessGroupGloo>& pg) {
    std::vector<at::Tensor> t{at::full({4}, rank + 1.0)};
    pg->allreduce(t)->wait();
    EXPECT_EQ(t[0].sum().item().toDouble(), 4 * 6.0);
    AllreduceOptions max;
    max.reduce_op = ReduceOp::MAX;
    std::vector<at::Tensor> m{at::full({3}, static_cast<int64_t>(rank), at::TensorOptions().dtype(at::kLong))};
    pg->allreduce(m, max)->wait();
    EXPECT_EQ(m[0].sum().item().toLong(), 6);
    std::vector<at::Tensor> b{at::full({2}, rank * 10.0)};
    BroadcastOptions from2;
    from2.root_rank = 2;
    auto work = pg->broadcast(b, from2);  // asynchronous: wait() completes it
    EXPECT_TRUE(work->wait());
    EXPECT_TRUE(work->is_completed() && work->is_success());
    EXPECT_EQ(b[0].sum().item().toDouble(), 40.0);
    std::vector<std::vector<at::Tensor>> gathered{{at::zeros({1}), at::zeros({1}), at::zeros({1})}};
    std::vector<at::Tensor> mine{at::full({1}, static_cast<double>(rank))};
    pg->allgather(gathered, mine)->wait();
    for (int r = 0; r < 3; ++r) EXPECT_EQ(gathered[0][r].item().toDouble(), r);
    std::vector<at::Tensor> msg{at::full({2}, static_cast<double>(rank))};
    if (rank == 0) {
      pg->send(msg, 1, 7)->wait();
    } else if (rank == 1) {
      pg->recv(msg, 0, 7)->wait();
      EXPECT_EQ(msg[0].sum().item().toDouble(), 0.0);
    }
    pg->barrier()->wait();
    AllreduceOptions avg;
    avg.reduce_op = ReduceOp::AVG;
    EXPECT_THROW(pg->allreduce(t, avg), c10::Error);
  });
}

TEST(Engine, FinalCallbacksRunAfterGradsAreStored) {
  EXPECT_THROW(torch::autograd::Engine::queue_callback([] {}), c10::Error);
  at::Tensor w = at::ones({3}).set_requires_grad(true);
  at::Tensor loss = (w * 2.0).sum();
  double seen = -1;
  auto acc = torch::autograd::impl::grad_accumulator(w);
  acc->add_post_hook([&](const auto&, const auto&) {
    torch::autograd::Engine::queue_callback([&] { seen = w.grad().sum().item().toDouble(); });
    return torch::autograd::variable_list{};
  });
  loss.backward();
  EXPECT_EQ(seen, 6.0);  // the callback saw the stored grad
}

TEST(Reducer, AveragesGradientsAcrossRanks) {
  with_group(2, [](int rank, const std::shared_ptr<ProcessGroupGloo>& pg) {
    at::Tensor w = at::ones({4}).set_requires_grad(true);
    at::Tensor v = at::ones({2}).set_requires_grad(true);
    auto reducer = Reducer::create({w, v}, {{1}, {0}}, pg, false, false);
    for (int step = 0; step < 2; ++step) {
      reducer->prepare_for_backward({});
      at::Tensor x = at::full({4}, rank + 1.0);
      ((w * x).sum() + (v * static_cast<double>(rank)).sum()).backward();
      // d/dw = x averaged over ranks (1.5 each), accumulated over the steps; d/dv = rank -> 0.5
      EXPECT_EQ(w.grad().sum().item().toDouble(), 4 * 1.5 * (step + 1));
      EXPECT_EQ(v.grad().sum().item().toDouble(), 2 * 0.5 * (step + 1));
    }
  });
}

}  // namespace
