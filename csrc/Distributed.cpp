// tessera._C._distributed_c10d: the stores, Work, the process-group API and the Gloo
// backend for Python. Every call that can block (a store's get or wait, Work.wait, the
// Gloo rendezvous) releases the GIL. python/tessera/distributed builds torch's API on these.
#include "python_api.h"

#include <c10/core/ThreadLocalState.h>
#include <distributed/FileStore.h>
#include <distributed/ProcessGroup.h>
#include <distributed/ProcessGroupWrapper.h>
#include <distributed/Reducer.h>
#include <distributed/Store.h>
#include <distributed/TCPStore.h>
#ifdef TESSERA_GLOO
#include <distributed/ProcessGroupGloo.h>
#endif
#ifdef TESSERA_MPI
#include <distributed/ProcessGroupMPI.h>
#endif

#include <pybind11/chrono.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace c10d;
using ms = std::chrono::milliseconds;

namespace tessera::python {

namespace {

Bytes to_bytes(py::handle value) {
  if (PyUnicode_Check(value.ptr())) {
    const std::string s = value.cast<std::string>();
    return Bytes(s.begin(), s.end());
  }
  if (PyByteArray_Check(value.ptr())) {
    const auto* data = reinterpret_cast<const uint8_t*>(PyByteArray_AsString(value.ptr()));
    return Bytes(data, data + PyByteArray_Size(value.ptr()));
  }
  TORCH_CHECK_TYPE(PyBytes_Check(value.ptr()), "a store value must be str or bytes, not ",
                   Py_TYPE(value.ptr())->tp_name);
  const auto* data = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(value.ptr()));
  return Bytes(data, data + PyBytes_GET_SIZE(value.ptr()));
}

py::bytes to_py_bytes(const Bytes& b) { return py::bytes(reinterpret_cast<const char*>(b.data()), b.size()); }

at::Tensor tensor_of(py::handle h) {
  TORCH_CHECK_TYPE(is_tensor(h.ptr()), "expected a Tensor, got ", Py_TYPE(h.ptr())->tp_name);
  return unwrap(h.ptr());
}

std::vector<at::Tensor> tensors_of(py::handle seq) {
  std::vector<at::Tensor> out;
  if (is_tensor(seq.ptr())) {
    out.push_back(unwrap(seq.ptr()));
    return out;
  }
  for (py::handle h : seq) out.push_back(tensor_of(h));
  return out;
}

std::vector<std::vector<at::Tensor>> tensor_lists_of(py::handle seq) {
  std::vector<std::vector<at::Tensor>> out;
  for (py::handle h : seq) out.push_back(tensors_of(h));
  return out;
}

// Objects whose destructor joins a thread that may need the GIL (a process group's worker
// runs Python done-callbacks): the last reference drops with the GIL released.
template <typename T, typename... Args>
std::shared_ptr<T> make_nogil_shared(Args&&... args) {
  return std::shared_ptr<T>(new T(std::forward<Args>(args)...), [](T* p) {
    if (Py_IsInitialized() && PyGILState_Check()) {
      py::gil_scoped_release nogil;
      delete p;
    } else {
      delete p;
    }
  });
}

py::list to_py(const std::vector<at::Tensor>& ts) {
  py::list out;
  for (const auto& t : ts) out.append(py::reinterpret_steal<py::object>(wrap(t)));
  return out;
}

void bind_stores(py::module_& d) {
  py::class_<Store, std::shared_ptr<Store>>(d, "Store", "A key-value store processes rendezvous through.")
      .def("set", [](Store& s, const std::string& key, py::handle value) {
        Bytes v = to_bytes(value);
        py::gil_scoped_release nogil;
        s.set(key, v);
      }, py::arg("key"), py::arg("value"))
      .def("get", [](Store& s, const std::string& key) {
        Bytes v;
        {
          py::gil_scoped_release nogil;
          v = s.get(key);
        }
        return to_py_bytes(v);
      }, py::arg("key"))
      .def("add", [](Store& s, const std::string& key, int64_t value) {
        py::gil_scoped_release nogil;
        return s.add(key, value);
      }, py::arg("key"), py::arg("value"))
      .def("compare_set", [](Store& s, const std::string& key, py::handle expected, py::handle desired) {
        Bytes e = to_bytes(expected), d = to_bytes(desired), r;
        {
          py::gil_scoped_release nogil;
          r = s.compare_set(key, e, d);
        }
        return to_py_bytes(r);
      }, py::arg("key"), py::arg("expected_value"), py::arg("desired_value"))
      .def("delete_key", [](Store& s, const std::string& key) {
        py::gil_scoped_release nogil;
        return s.delete_key(key);
      }, py::arg("key"))
      .def("num_keys", [](Store& s) {
        py::gil_scoped_release nogil;
        return s.num_keys();
      })
      .def("check", [](Store& s, const std::vector<std::string>& keys) {
        py::gil_scoped_release nogil;
        return s.check(keys);
      }, py::arg("keys"))
      .def("wait", [](Store& s, const std::vector<std::string>& keys) {
        py::gil_scoped_release nogil;
        s.wait(keys);
      }, py::arg("keys"))
      .def("wait", [](Store& s, const std::vector<std::string>& keys, ms timeout) {
        py::gil_scoped_release nogil;
        s.wait(keys, timeout);
      }, py::arg("keys"), py::arg("timeout"))
      .def("set_timeout", &Store::set_timeout, py::arg("timeout"))
      .def_property_readonly("timeout", &Store::timeout);

  py::class_<HashStore, Store, std::shared_ptr<HashStore>>(d, "HashStore", "A store within one process.")
      .def(py::init<>());

  py::class_<PrefixStore, Store, std::shared_ptr<PrefixStore>>(d, "PrefixStore",
                                                               "Another store's keys under a prefix.")
      .def(py::init<std::string, std::shared_ptr<Store>>(), py::arg("prefix"), py::arg("store"))
      .def_property_readonly("underlying_store", &PrefixStore::underlying_store);

  py::class_<FileStore, Store, std::shared_ptr<FileStore>>(d, "FileStore", "A store in a shared file.")
      .def(py::init([](const std::string& path, int64_t world_size) {
             py::gil_scoped_release nogil;
             return std::make_shared<FileStore>(path, world_size);
           }),
           py::arg("file_name"), py::arg("world_size") = -1)
      .def_property_readonly("path", &FileStore::path);

  py::class_<TCPStore, Store, std::shared_ptr<TCPStore>>(d, "TCPStore", "A store served over TCP by the master.")
      .def(py::init([](const std::string& host, int port, std::optional<int64_t> world_size, bool is_master,
                       ms timeout, bool wait_for_workers, bool multi_tenant) {
             TORCH_CHECK_VALUE(port >= 0 && port < 65536, "TCPStore: port must be in [0, 65535], got ", port);
             TCPStoreOptions o;
             o.port = static_cast<uint16_t>(port);
             o.is_master = is_master;
             o.num_workers = world_size;
             o.wait_for_workers = wait_for_workers;
             o.timeout = timeout;
             o.multi_tenant = multi_tenant;
             py::gil_scoped_release nogil;
             return std::make_shared<TCPStore>(host, o);
           }),
           py::arg("host_name"), py::arg("port"), py::arg("world_size") = std::nullopt,
           py::arg("is_master") = false, py::arg("timeout") = ms(Store::kDefaultTimeout),
           py::arg("wait_for_workers") = true, py::arg("multi_tenant") = false)
      .def_property_readonly("host", &TCPStore::host)
      .def_property_readonly("port", &TCPStore::port);
}

void bind_work(py::module_& d) {
  py::class_<Work, std::shared_ptr<Work>>(d, "Work", "The handle of a running collective.")
      .def("is_completed", &Work::is_completed)
      .def("is_success", &Work::is_success)
      .def("wait", [](Work& w, ms timeout) {
        py::gil_scoped_release nogil;
        return w.wait(timeout);
      }, py::arg("timeout") = ms(0))
      .def("result", [](Work& w) { return to_py(w.result()); })
      .def("source_rank", &Work::source_rank)
      .def("exception", [](Work& w) -> py::object {
        std::exception_ptr e = w.exception();
        if (!e) return py::none();
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& err) {
          return py::reinterpret_borrow<py::object>(PyExc_RuntimeError)(err.what());
        }
      })
      .def("_add_done_callback", [](Work& w, py::function fn) {
        auto holder = std::make_shared<py::object>(std::move(fn));
        w.add_done_callback([holder] {
          py::gil_scoped_acquire gil;
          try {
            (*holder)();
          } catch (py::error_already_set& e) {
            e.discard_as_unraisable("Work done callback");
          }
          holder->release().dec_ref();
        });
      });
}

template <typename Options>
py::class_<Options> options_class(py::module_& d, const char* name) {
  return py::class_<Options>(d, name).def(py::init<>()).def_readwrite("timeout", &Options::timeout);
}

void bind_process_group(py::module_& d) {
  py::enum_<ReduceOp>(d, "ReduceOp", "The reductions of all_reduce, reduce and reduce_scatter.")
      .value("SUM", ReduceOp::SUM).value("AVG", ReduceOp::AVG).value("PRODUCT", ReduceOp::PRODUCT)
      .value("MIN", ReduceOp::MIN).value("MAX", ReduceOp::MAX).value("BAND", ReduceOp::BAND)
      .value("BOR", ReduceOp::BOR).value("BXOR", ReduceOp::BXOR).value("PREMUL_SUM", ReduceOp::PREMUL_SUM)
      .value("UNUSED", ReduceOp::UNUSED);

  options_class<AllreduceOptions>(d, "AllreduceOptions").def_readwrite("reduceOp", &AllreduceOptions::reduce_op);
  options_class<BroadcastOptions>(d, "BroadcastOptions")
      .def_readwrite("rootRank", &BroadcastOptions::root_rank)
      .def_readwrite("rootTensor", &BroadcastOptions::root_tensor);
  options_class<ReduceOptions>(d, "ReduceOptions")
      .def_readwrite("reduceOp", &ReduceOptions::reduce_op)
      .def_readwrite("rootRank", &ReduceOptions::root_rank)
      .def_readwrite("rootTensor", &ReduceOptions::root_tensor);
  options_class<AllgatherOptions>(d, "AllgatherOptions");
  options_class<GatherOptions>(d, "GatherOptions").def_readwrite("rootRank", &GatherOptions::root_rank);
  options_class<ScatterOptions>(d, "ScatterOptions").def_readwrite("rootRank", &ScatterOptions::root_rank);
  options_class<ReduceScatterOptions>(d, "ReduceScatterOptions")
      .def_readwrite("reduceOp", &ReduceScatterOptions::reduce_op);
  options_class<AllToAllOptions>(d, "AllToAllOptions");
  options_class<BarrierOptions>(d, "BarrierOptions").def_readwrite("device_ids", &BarrierOptions::device_ids);

  using PG = ProcessGroup;
  py::class_<PG, std::shared_ptr<PG>>(d, "ProcessGroup", "A group of processes that run collectives together.")
      .def("rank", &PG::rank)
      .def("size", &PG::size)
      .def("name", &PG::backend_name)
      .def("broadcast", [](PG& pg, py::handle ts, const BroadcastOptions& o) {
        auto v = tensors_of(ts);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.broadcast(v, o);
      }, py::arg("tensors"), py::arg("opts") = BroadcastOptions())
      .def("allreduce", [](PG& pg, py::handle ts, const AllreduceOptions& o) {
        auto v = tensors_of(ts);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.allreduce(v, o);
      }, py::arg("tensors"), py::arg("opts") = AllreduceOptions())
      .def("reduce", [](PG& pg, py::handle ts, const ReduceOptions& o) {
        auto v = tensors_of(ts);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.reduce(v, o);
      }, py::arg("tensors"), py::arg("opts") = ReduceOptions())
      .def("allgather", [](PG& pg, py::handle outs, py::handle ins, const AllgatherOptions& o) {
        auto out = tensor_lists_of(outs);
        auto in = tensors_of(ins);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.allgather(out, in, o);
      }, py::arg("output_tensors"), py::arg("input_tensors"), py::arg("opts") = AllgatherOptions())
      .def("_allgather_base", [](PG& pg, py::handle out, py::handle in, const AllgatherOptions& o) {
        at::Tensor a = tensor_of(out), b = tensor_of(in);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.allgather_base(a, b, o);
      }, py::arg("output"), py::arg("input"), py::arg("opts") = AllgatherOptions())
      .def("gather", [](PG& pg, py::handle outs, py::handle ins, const GatherOptions& o) {
        auto out = tensor_lists_of(outs);
        auto in = tensors_of(ins);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.gather(out, in, o);
      }, py::arg("output_tensors"), py::arg("input_tensors"), py::arg("opts") = GatherOptions())
      .def("scatter", [](PG& pg, py::handle outs, py::handle ins, const ScatterOptions& o) {
        auto out = tensors_of(outs);
        auto in = tensor_lists_of(ins);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.scatter(out, in, o);
      }, py::arg("output_tensors"), py::arg("input_tensors"), py::arg("opts") = ScatterOptions())
      .def("reduce_scatter", [](PG& pg, py::handle outs, py::handle ins, const ReduceScatterOptions& o) {
        auto out = tensors_of(outs);
        auto in = tensor_lists_of(ins);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.reduce_scatter(out, in, o);
      }, py::arg("output_tensors"), py::arg("input_tensors"), py::arg("opts") = ReduceScatterOptions())
      .def("_reduce_scatter_base", [](PG& pg, py::handle out, py::handle in, const ReduceScatterOptions& o) {
        at::Tensor a = tensor_of(out), b = tensor_of(in);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.reduce_scatter_base(a, b, o);
      }, py::arg("outputTensor"), py::arg("inputTensor"), py::arg("opts") = ReduceScatterOptions())
      .def("alltoall_base", [](PG& pg, py::handle out, py::handle in, std::vector<int64_t> out_splits,
                               std::vector<int64_t> in_splits, const AllToAllOptions& o) {
        at::Tensor a = tensor_of(out), b = tensor_of(in);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.alltoall_base(a, b, out_splits, in_splits, o);
      }, py::arg("output_tensor"), py::arg("input_tensor"), py::arg("output_split_sizes"),
         py::arg("input_split_sizes"), py::arg("opts") = AllToAllOptions())
      .def("alltoall", [](PG& pg, py::handle outs, py::handle ins, const AllToAllOptions& o) {
        auto out = tensors_of(outs);
        auto in = tensors_of(ins);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.alltoall(out, in, o);
      }, py::arg("output_tensor"), py::arg("input_tensor"), py::arg("opts") = AllToAllOptions())
      .def("barrier", [](PG& pg, const BarrierOptions& o) {
        py::gil_scoped_release nogil;
        return pg.barrier(o);
      },
           py::arg("opts") = BarrierOptions())
      .def("send", [](PG& pg, py::handle ts, int dst, int tag) {
        auto v = tensors_of(ts);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.send(v, dst, tag);
      }, py::arg("tensors"), py::arg("dstRank"), py::arg("tag"))
      .def("recv", [](PG& pg, py::handle ts, int src, int tag) {
        auto v = tensors_of(ts);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.recv(v, src, tag);
      }, py::arg("tensors"), py::arg("srcRank"), py::arg("tag"))
      .def("recv_anysource", [](PG& pg, py::handle ts, int tag) {
        auto v = tensors_of(ts);
        py::gil_scoped_release nogil;  // a DETAIL check or an MPI lock may block
        return pg.recv_anysource(v, tag);
      }, py::arg("tensors"), py::arg("tag"));

  py::class_<ProcessGroupWrapper, PG, std::shared_ptr<ProcessGroupWrapper>>(
      d, "_ProcessGroupWrapper", "TORCH_DISTRIBUTED_DEBUG=DETAIL: checks each collective's fingerprint first.")
      .def(py::init<std::shared_ptr<PG>, std::shared_ptr<PG>, ms>(), py::arg("pg"), py::arg("gloo_pg"),
           py::arg("timeout"))
      .def_property_readonly("wrapped_pg", &ProcessGroupWrapper::wrapped);

#ifdef TESSERA_GLOO
  py::class_<ProcessGroupGloo, PG, std::shared_ptr<ProcessGroupGloo>>(d, "ProcessGroupGloo",
                                                                      "The CPU process group on Gloo.")
      .def(py::init([](std::shared_ptr<Store> store, int rank, int size, ms timeout, std::string interface,
                       std::string hostname) {
             ProcessGroupGloo::Options o;
             o.timeout = timeout;
             o.interface = std::move(interface);
             o.hostname = std::move(hostname);
             py::gil_scoped_release nogil;
             return make_nogil_shared<ProcessGroupGloo>(std::move(store), rank, size, std::move(o));
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout") = ms(std::chrono::minutes(30)),
           py::arg("interface") = "", py::arg("hostname") = "")
      .def_property_readonly("timeout", &ProcessGroupGloo::timeout);
  d.attr("_GLOO_AVAILABLE") = true;
#else
  d.attr("_GLOO_AVAILABLE") = false;
#endif

#ifdef TESSERA_MPI
  py::class_<ProcessGroupMPI, PG, std::shared_ptr<ProcessGroupMPI>>(d, "ProcessGroupMPI",
                                                                    "The process group on MPI (programs run by mpirun).")
      .def_static("create", [](std::vector<int> ranks) -> std::shared_ptr<ProcessGroupMPI> {
        std::shared_ptr<ProcessGroupMPI> pg;
        {
          py::gil_scoped_release nogil;
          pg = ProcessGroupMPI::create(std::move(ranks));
        }
        if (!pg) return nullptr;
        // dropped without the GIL: its worker may be finishing a job that calls back into Python
        return std::shared_ptr<ProcessGroupMPI>(pg.get(), [keep = pg](ProcessGroupMPI*) mutable {
          if (Py_IsInitialized() && PyGILState_Check()) {
            py::gil_scoped_release nogil;
            keep.reset();
          } else {
            keep.reset();
          }
        });
      }, py::arg("ranks") = std::vector<int>());
  d.attr("_MPI_AVAILABLE") = true;
#else
  d.attr("_MPI_AVAILABLE") = false;
#endif
}

// py::object that may be dropped on a thread without the GIL (the reducer's, the engine's).
std::shared_ptr<py::object> gil_safe(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      delete p;
    } else {
      p->release();  // the interpreter is gone: leak the reference rather than touch it
      delete p;
    }
  });
}

// DDP.register_comm_hook with a Python callable: hook(state, GradBucket) -> a
// tessera.futures.Future whose value is the reduced tensor (or a list holding it).
class PythonCommHook final : public CommHookInterface {
 public:
  PythonCommHook(py::object state, py::object hook)
      : state_(gil_safe(std::move(state))), hook_(gil_safe(std::move(hook))) {}

  std::function<at::Tensor()> run(Bucket& bucket) override {
    py::gil_scoped_acquire gil;
    auto future = gil_safe((*hook_)(*state_, bucket));
    return [future] {
      py::gil_scoped_acquire gil;
      py::object value = future->attr("wait")();
      if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
        TORCH_CHECK(py::len(value) == 1, "Communication hook: expected the future's value to be a tensor or a list "
                    "of one tensor, got ", py::len(value), " values");
        value = value[py::int_(0)];
      }
      return tensor_of(value);
    };
  }

 private:
  std::shared_ptr<py::object> state_, hook_;
};

void bind_reducer(py::module_& d) {
  using Bucket = CommHookInterface::Bucket;
  py::class_<Bucket>(d, "GradBucket", "One bucket of DistributedDataParallel's gradients, as a comm hook sees it.")
      .def("index", [](const Bucket& b) { return b.index; })
      .def("buffer", [](const Bucket& b) { return py::reinterpret_steal<py::object>(wrap(b.buffer)); })
      .def("gradients", [](const Bucket& b) { return to_py(b.gradients); })
      .def("parameters", [](const Bucket& b) { return to_py(b.parameters); })
      .def("is_last", [](const Bucket& b) { return b.is_last; })
      .def("set_buffer", [](Bucket& b, py::handle t) {
        at::Tensor value = tensor_of(t);
        TORCH_CHECK(value.numel() == b.buffer.numel(), "GradBucket.set_buffer: expected ", b.buffer.numel(),
                    " elements, got ", value.numel());
        c10::AutoGradMode no_grad(false);
        b.buffer.copy_(value.reshape({-1}));
      });

  py::class_<Reducer, std::shared_ptr<Reducer>>(d, "Reducer", "DistributedDataParallel's bucketed gradient reducer.")
      .def(py::init([](py::handle params, std::vector<std::vector<int64_t>> buckets, std::shared_ptr<ProcessGroup> pg,
                       bool find_unused, bool as_bucket_view) {
             return Reducer::create(tensors_of(params), std::move(buckets), std::move(pg), find_unused, as_bucket_view);
           }),
           py::arg("params"), py::arg("bucket_indices"), py::arg("process_group"),
           py::arg("find_unused_parameters") = false, py::arg("gradient_as_bucket_view") = false)
      // The reducer's lock is taken without the GIL: a Python comm hook runs under that lock
      // and takes the GIL (from the backward thread).
      .def("prepare_for_backward", [](Reducer& r, py::handle outputs) {
        auto ts = tensors_of(outputs);
        py::gil_scoped_release nogil;
        r.prepare_for_backward(ts);
      }, py::arg("outputs"))
      .def("_set_builtin_comm_hook", [](Reducer& r, const std::string& name) {
        py::gil_scoped_release nogil;
        if (name == "allreduce") {
          r.set_comm_hook(CommHook::AllReduce);
        } else if (name == "fp16_compress") {
          r.set_comm_hook(CommHook::Fp16Compress);
        } else if (name == "bf16_compress") {
          r.set_comm_hook(CommHook::Bf16Compress);
        } else {
          TORCH_CHECK_VALUE(false, "unknown built-in communication hook ", name);
        }
      })
      .def("_set_comm_hook", [](Reducer& r, py::object state, py::object hook) {
        auto python_hook = std::make_shared<PythonCommHook>(std::move(state), std::move(hook));
        py::gil_scoped_release nogil;
        r.set_comm_hook(std::move(python_hook));
      }, py::arg("state"), py::arg("comm_hook"))
      .def("_get_unused_parameters", &Reducer::unused_parameters, py::call_guard<py::gil_scoped_release>())
      .def("_set_forward_pass_work_handle", &Reducer::set_forward_pass_work_handle, py::arg("work"),
           py::arg("use_static_world_size"), py::call_guard<py::gil_scoped_release>())
      .def("_match_all_reduce_for_bwd_pass", &Reducer::match_all_reduce_for_bwd_pass,
           py::call_guard<py::gil_scoped_release>());
}

}  // namespace

void init_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("_distributed_c10d", "c10d: stores, process groups and the Gloo backend.");
  bind_stores(d);
  bind_work(d);
  bind_process_group(d);
  bind_reducer(d);
}

}  // namespace tessera::python
