// A custom-operator library as a user would write one: a schema in TORCH_LIBRARY and CPU
// kernels in TORCH_LIBRARY_IMPL, built as its own shared library against Tessera::aten.
// Tests load it with dlopen (C++) and tessera.ops.load_library (Python).
#include <aten/aten.h>

namespace {

// out = x * factor, elementwise.
at::Tensor scale(const at::Tensor& x, double factor) {
  at::Tensor f = at::empty({}, at::TensorOptions(x.scalar_type()));
  f.fill_(factor);
  return at::mul(x, f);
}

// The sum of all elements of a float tensor, as a Python float.
double total(const at::Tensor& x) {
  TORCH_CHECK(x.scalar_type() == at::kFloat, "myops::total: expected a float tensor, got ", x.scalar_type());
  at::Tensor c = at::empty(x.sizes());
  c.copy_(x);
  double sum = 0;
  for (int64_t i = 0; i < c.numel(); ++i) sum += c.data_ptr<float>()[i];
  return sum;
}

// Two results and a kwarg-only argument with a default.
std::tuple<at::Tensor, at::Tensor> split_sign(const at::Tensor& x, double threshold) {
  at::Tensor c = at::empty(x.sizes());
  c.copy_(x);
  at::Tensor pos = at::empty(x.sizes()), neg = at::empty(x.sizes());
  for (int64_t i = 0; i < c.numel(); ++i) {
    float v = c.data_ptr<float>()[i];
    pos.data_ptr<float>()[i] = v > threshold ? v : 0.f;
    neg.data_ptr<float>()[i] = v > threshold ? 0.f : v;
  }
  return {pos, neg};
}

// What the enum arguments arrived as, one decimal digit each (dtype, layout, memory format,
// optional memory format or 9 for None): defaults that torch writes as numbers
// (`MemoryFormat memory_format=0`) must reach the kernel as the enum.
int64_t enum_args(const at::Tensor& /*x*/, at::ScalarType dtype, at::Layout layout, at::MemoryFormat format,
                  std::optional<at::MemoryFormat> maybe_format) {
  return static_cast<int64_t>(dtype) * 1000 + static_cast<int64_t>(layout) * 100 + static_cast<int64_t>(format) * 10 +
         (maybe_format ? static_cast<int64_t>(*maybe_format) : 9);
}

// A custom class: operators take and return it, Python calls its methods and pickles it.
struct Counter : torch::CustomClassHolder {
  explicit Counter(int64_t start) : value(start) {}
  int64_t get() const { return value; }
  int64_t value;
};

c10::intrusive_ptr<Counter> make_counter(int64_t start) { return c10::make_intrusive<Counter>(start); }

// x + the counter's value.
at::Tensor counter_add(const c10::intrusive_ptr<Counter>& counter, const at::Tensor& x) {
  return scale(x, 1.0).add(static_cast<double>(counter->value));
}

}  // namespace

TORCH_LIBRARY(myops, m) {
  m.class_<Counter>("Counter")
      .def("get", &Counter::get)
      .def("doubled",
           [](const c10::intrusive_ptr<Counter>& self) { return c10::make_intrusive<Counter>(2 * self->value); })
      .def_pickle([](const c10::intrusive_ptr<Counter>& self) { return self->value; },
                  [](const c10::IValue& state) { return c10::make_intrusive<Counter>(state.toInt()); });
  m.def("make_counter(int start) -> __torch__.torch.classes.myops.Counter", TORCH_FN(make_counter));
  m.def("counter_add(__torch__.torch.classes.myops.Counter counter, Tensor x) -> Tensor");
  m.def("scale(Tensor x, float factor) -> Tensor");
  m.def("total(Tensor x) -> float");
  m.def("split_sign(Tensor x, *, float threshold=0.0) -> (Tensor, Tensor)");
  m.def(
      "enum_args(Tensor x, *, ScalarType dtype=6, Layout layout=0, MemoryFormat memory_format=0, "
      "MemoryFormat? maybe_format=2) -> int");
}

TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("scale", TORCH_FN(scale));
  m.impl("total", TORCH_FN(total));
  m.impl("split_sign", TORCH_FN(split_sign));
  m.impl("enum_args", TORCH_FN(enum_args));
  m.impl("counter_add", TORCH_FN(counter_add));
}
