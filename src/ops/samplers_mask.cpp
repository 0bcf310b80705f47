// Attribute samplers of the mask-construction ops.
#include "ops/samplers.h"

namespace tangle::ops::samplers {

// arange: start in [-3, 3], step in {-2, -1, 1, 2}, end giving 0..6 elements.
Out arange(AttrSampling& s, size_t pos, const eg::AttrList& filled) {
  if (pos == 0) return eg::Attr::integer(s.uniform(-3, 3));
  if (pos == 1) return eg::Attr::integer(*eg::attrInt(filled, 0) + s.uniform(-6, 6));
  auto start = eg::attrInt(filled, 0), end = eg::attrInt(filled, 1);
  int64_t step = s.uniform(1, 2);
  return eg::Attr::integer(*end >= *start ? step : -step);
}

}  // namespace tangle::ops::samplers
