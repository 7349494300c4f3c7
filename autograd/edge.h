// Edge: where a gradient goes next — a Node and which of its inputs (an op with two
// differentiable outputs has a backward Node with two inputs).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace torch::autograd {

class Node;

struct Edge {
  Edge() = default;
  Edge(std::shared_ptr<Node> fn, uint32_t nr) : function(std::move(fn)), input_nr(nr) {}
  bool is_valid() const { return function != nullptr; }
  bool operator==(const Edge& o) const { return function == o.function && input_nr == o.input_nr; }

  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
};

using edge_list = std::vector<Edge>;

}  // namespace torch::autograd
