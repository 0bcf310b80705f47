#include "lower/all_to_all.h"

#include <string>

#include "support/error.h"

namespace tangle {

namespace {

InputError error(const Node& n, const std::string& what) {
  return InputError(n.loc, "node '" + n.name + "' (all_to_all_single): " + what);
}

// Split sizes argument i: a list of constant ints, one per member; an empty
// list or None means equal splits of dim 0.
std::vector<int64_t> splits(const Node& n, size_t i, const char* what, int64_t dim0, size_t members) {
  std::vector<int64_t> out;
  const Value* v = i < n.args.size() ? &n.args[i] : n.kwarg(what);
  auto list = v ? std::get_if<ValueList>(&v->v) : nullptr;
  if (list && !list->empty()) {
    for (const Value& e : *list) {
      auto p = std::get_if<int64_t>(&e.v);
      if (!p)
        throw error(n, std::string(what) + " must be constant integers (data-dependent split sizes are not "
                                           "supported: capture with fixed split sizes)");
      if (*p < 0) throw error(n, std::string(what) + " has a negative size");
      out.push_back(*p);
    }
    if (out.size() != members)
      throw error(n, std::string(what) + " has " + std::to_string(out.size()) + " sizes for a group of " +
                         std::to_string(members) + " ranks");
    return out;
  }
  if (v && !list && !std::holds_alternative<NoneValue>(v->v)) throw error(n, std::string(what) + " must be a list");
  if (dim0 < 0 || dim0 % static_cast<int64_t>(members) != 0)
    throw error(n, "equal splits need a dim 0 divisible by the group size " + std::to_string(members));
  return std::vector<int64_t>(members, dim0 / static_cast<int64_t>(members));
}

}  // namespace

std::vector<AllToAllBlock> allToAllBlocks(const std::vector<const Node*>& nodes, const std::vector<int64_t>& dim0,
                                          int pos, int64_t outDim0) {
  const size_t m = nodes.size();
  const Node& me = *nodes[static_cast<size_t>(pos)];
  std::vector<int64_t> outSplits = splits(me, 1, "output_split_sizes", outDim0, m);
  std::vector<AllToAllBlock> blocks;
  for (size_t s = 0; s < m; ++s) {
    const Node& src = *nodes[s];
    if (dim0[s] < 0) throw error(src, "needs an input with a known dim 0");
    std::vector<int64_t> in = splits(src, 2, "input_split_sizes", dim0[s], m);
    int64_t total = 0;
    for (int64_t k : in) total += k;
    if (total != dim0[s])
      throw error(src, "input_split_sizes sum to " + std::to_string(total) + " but dim 0 of the input is " +
                           std::to_string(dim0[s]));
    int64_t start = 0;
    for (int q = 0; q < pos; ++q) start += in[static_cast<size_t>(q)];
    int64_t len = in[static_cast<size_t>(pos)];
    // Equal output splits may be implied (empty list) only when the sender's block has that size too.
    if (outSplits[s] != len)
      throw error(me, "receives " + std::to_string(outSplits[s]) + " rows from group member " + std::to_string(s) +
                          " (output_split_sizes) but that rank sends " + std::to_string(len) +
                          " (its input_split_sizes, " + src.loc.file + ":" + std::to_string(src.loc.line) + ")");
    if (len > 0) blocks.push_back({static_cast<int>(s), start, start + len});
  }
  return blocks;
}

}  // namespace tangle
