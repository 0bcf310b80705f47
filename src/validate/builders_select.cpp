// Instances for the selection lemmas of lemmas/select.cpp whose operands the
// generic generator cannot draw (one_hot needs integers inside its classes).
#include "validate/generate.h"

namespace tangle::validate {

// one_hot[k](concat[d](x_1..x_n)), x_i integral in [0, k), rank 1 or 2.
std::optional<eg::Id> oneHotOfConcat(Gen& gen) {
  int64_t k = gen.uniform(1, 5), rank = gen.uniform(1, 2), d = gen.uniform(0, rank - 1);
  Shape base = rank == 1 ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  std::vector<eg::Id> parts;
  for (int64_t i = 0, n = gen.uniform(2, 3); i < n; ++i) {
    Shape s = base;
    s[static_cast<size_t>(d)] = gen.uniform(1, 3);
    parts.push_back(gen.intLeaf(s, 0, k));
  }
  auto cat = gen.node("concat", {eg::Attr::integer(d)}, parts);
  if (!cat) return std::nullopt;
  return gen.node("one_hot", {eg::Attr::integer(k)}, {*cat});
}

// index_rows(w, concat[d](ids_1..ids_n)), w [rows, D], ids integral in [0, rows).
std::optional<eg::Id> indexRowsOfConcat(Gen& gen) {
  int64_t rows = gen.uniform(1, 5), rank = gen.uniform(1, 2), d = gen.uniform(0, rank - 1);
  eg::Id w = gen.leaf({rows, gen.size()});
  Shape base = rank == 1 ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  std::vector<eg::Id> parts;
  for (int64_t i = 0, n = gen.uniform(2, 3); i < n; ++i) {
    Shape s = base;
    s[static_cast<size_t>(d)] = gen.uniform(1, 3);
    parts.push_back(gen.intLeaf(s, 0, rows));
  }
  auto cat = gen.node("concat", {eg::Attr::integer(d)}, parts);
  if (!cat) return std::nullopt;
  return gen.node("index_rows", {}, {w, *cat});
}

// index_rows(slice[0, 0, e](w), ids), w [rows, D], e <= rows, ids integral in [0, e).
std::optional<eg::Id> indexRowsOfPrefix(Gen& gen) {
  int64_t rows = gen.uniform(2, 6), e = gen.uniform(1, rows);
  eg::Id w = gen.leaf({rows, gen.size()});
  auto cut = gen.node("slice", {eg::Attr::integer(0), eg::Attr::integer(0), eg::Attr::integer(e), eg::Attr::integer(1)}, {w});
  if (!cut) return std::nullopt;
  Shape s = gen.uniform(1, 2) == 1 ? Shape{gen.size()} : Shape{gen.size(), gen.size()};
  return gen.node("index_rows", {}, {*cut, gen.intLeaf(s, 0, e)});
}

}  // namespace tangle::validate
