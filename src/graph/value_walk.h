// Walking the tensor references inside an argument value.
#pragma once

#include <variant>

#include "graph/graph.h"

namespace tangle {

// Calls f(NodeId) on each tensor reference inside `v` (recursing into lists), in
// the order Graph::operands lists them; allocates nothing.
template <class F>
void forEachTensor(const Value& v, F&& f) {
  if (const auto* t = std::get_if<TensorRef>(&v.v)) {
    f(t->node);
  } else if (const auto* list = std::get_if<ValueList>(&v.v)) {
    for (const Value& e : *list) forEachTensor(e, f);
  }
}

}  // namespace tangle
