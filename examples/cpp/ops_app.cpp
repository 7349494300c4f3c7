// An app on the installed libaten: native operators (registered when libaten loads), a
// custom operator from a library it links, and the dispatcher's view of both.
#include <aten/aten.h>

#include <iostream>

extern "C" int example_ops_linked();

int main() {
  at::Tensor x = at::empty({3});
  x.fill_(2.0);
  at::Tensor y = at::empty({3}, at::kDouble);
  y.fill_(0.5);
  at::Tensor z = at::add(x, y, 3);  // promotes to double
  std::cout << "add: " << z << " first=" << z.data_ptr<double>()[0] << "\n";

  auto& d = c10::Dispatcher::singleton();
  std::cout << "registered operators: " << d.allOperatorNames().size() << "\n";
  for (const char* name : {"add", "mul", "empty", "view"}) {
    bool found = false;
    for (const auto& op : d.allOperatorNames()) found = found || op.name == std::string("aten::") + name;
    std::cout << "aten::" << name << (found ? " found" : " MISSING") << "\n";
    if (!found) return 1;
  }

  if (!example_ops_linked()) return 1;
  auto axpy = d.findSchemaOrThrow("example::axpy", "").typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
  at::Tensor w = axpy.call(x, x, 10.0);
  std::cout << "example::axpy: " << w.data_ptr<float>()[0] << "\n";
  return w.data_ptr<float>()[0] == 22.0f ? 0 : 1;
}
