#include "equiv/propose.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/error.h"

namespace tangle::equiv {

namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shapeText(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

bool close(double a, double b, double tol) { return std::fabs(a - b) <= tol * (1.0 + std::fabs(b)); }

bool sameData(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!close(a[i], b[i], tol)) return false;
  return true;
}

// Values that cannot tell candidates apart: all elements equal (zeros, ones).
bool uninformative(const std::vector<double>& d, double tol) {
  for (double v : d)
    if (!close(v, d.front(), tol)) return false;
  return true;
}

// x viewed as [outer, n, inner] around dim d.
struct Around {
  int64_t outer, n, inner;
};
Around around(const Shape& s, size_t d) {
  Around a{1, s[d], 1};
  for (size_t i = 0; i < d; ++i) a.outer *= s[i];
  for (size_t i = d + 1; i < s.size(); ++i) a.inner *= s[i];
  return a;
}

// The elements [start, start + len) along dim d of y.
std::vector<double> sliceOf(const Tensor& y, size_t d, int64_t start, int64_t len) {
  Around a = around(y.shape, d);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(a.outer * len * a.inner));
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = start; i < start + len; ++i)
      for (int64_t k = 0; k < a.inner; ++k) out.push_back(y.data[static_cast<size_t>((o * a.n + i) * a.inner + k)]);
  return out;
}

std::vector<double> transposed2d(const Tensor& y) {
  int64_t r = y.shape[0], c = y.shape[1];
  std::vector<double> out(y.data.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) out[static_cast<size_t>(j * r + i)] = y.data[static_cast<size_t>(i * c + j)];
  return out;
}

std::string withShape(const std::string& e, const Shape& from, const Shape& to) {
  return from == to ? e : "reshape(" + e + ", " + shapeText(to) + ")";
}

// Expressions over implementation tensor y whose value equals x (x's shape);
// candidates are y itself (or reshaped), y transposed (2-D), and contiguous
// slices of y along one dim.
std::vector<std::string> matchesOf(const Tensor& x, const std::string& yName, const Tensor& y, double tol) {
  std::vector<std::string> out;
  std::string ref = "D0." + yName;
  if (numel(x.shape) == numel(y.shape)) {
    if (sameData(x.data, y.data, tol)) out.push_back(withShape(ref, y.shape, x.shape));
    if (y.shape.size() == 2 && y.shape[0] != 1 && y.shape[1] != 1 && sameData(x.data, transposed2d(y), tol))
      out.push_back(withShape("transpose(" + ref + ", 0, 1)", Shape{y.shape[1], y.shape[0]}, x.shape));
    return out;
  }
  if (x.shape.size() != y.shape.size()) return out;
  for (size_t d = 0; d < y.shape.size(); ++d) {
    bool others = true;
    for (size_t k = 0; k < y.shape.size(); ++k) others = others && (k == d || x.shape[k] == y.shape[k]);
    if (!others || x.shape[d] >= y.shape[d]) continue;
    for (int64_t s = 0; s + x.shape[d] <= y.shape[d]; ++s)
      if (sameData(x.data, sliceOf(y, d, s, x.shape[d]), tol))
        out.push_back("slice(" + ref + ", dim=" + std::to_string(d) + ", start=" + std::to_string(s) +
                      ", end=" + std::to_string(s + x.shape[d]) + ")");
  }
  return out;
}

// x whose last dim holds two equal halves (HF's rotary cos = cat(c, c)):
// concat(y, y) over an implementation tensor y equal to one half.
std::vector<std::string> doubledMatches(const Tensor& x, const std::string& yName, const Tensor& y, double tol) {
  std::vector<std::string> out;
  if (x.shape.empty() || x.shape.back() % 2 || y.shape.empty()) return out;
  int64_t h = x.shape.back() / 2;
  Tensor half{x.shape, {}, x.kind, x.dataDependent, true, {}, {}};
  half.shape.back() = h;
  half.data = sliceOf(x, x.shape.size() - 1, 0, h);
  if (!sameData(half.data, sliceOf(x, x.shape.size() - 1, h, h), tol)) return out;
  if (numel(y.shape) != numel(half.shape) || y.shape.back() != h || !sameData(half.data, y.data, tol)) return out;
  std::string ref = "D0." + yName;
  Shape cat = y.shape;
  cat.back() *= 2;
  out.push_back(withShape("concat(" + ref + ", " + ref + ", dim=" + std::to_string(y.shape.size() - 1) + ")", cat,
                          x.shape));
  return out;
}

}  // namespace

Values readValues(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0}, "cannot open the values file");
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(in);
  } catch (const std::exception& e) {
    throw InputError({path, 0}, std::string("not a values file (JSON): ") + e.what());
  }
  Values v;
  if (!j.is_object() || !j.contains("tensors") || !j["tensors"].is_object())
    throw InputError({path, 0}, "a values file needs an object \"tensors\"");
  v.graph = j.value("graph", "");
  if (j.contains("frontier"))
    for (const auto& f : j["frontier"]) v.frontier.push_back(f.get<std::string>());
  for (const auto& [name, t] : j["tensors"].items()) {
    Tensor x;
    try {
      x.shape = t.at("shape").get<Shape>();
      x.data = t.at("data").get<std::vector<double>>();
      x.kind = t.value("kind", "call_function");
      x.dataDependent = t.value("data_dependent", true);
      x.feedsData = t.value("feeds_data", true);
      if (t.contains("inputs")) x.inputs = t["inputs"].get<std::vector<std::string>>();
      x.source = t.value("source", "");
    } catch (const std::exception& e) {
      throw InputError({path, 0}, "tensor '" + name + "': " + e.what());
    }
    if (static_cast<int64_t>(x.data.size()) != numel(x.shape))
      throw InputError({path, 0}, "tensor '" + name + "': " + std::to_string(x.data.size()) +
                                      " values for shape " + shapeText(x.shape));
    v.order.push_back(name);
    v.tensors.emplace(name, std::move(x));
  }
  return v;
}

std::vector<Proposal> propose(const Values& spec, const Values& impl, double tol, const std::vector<std::string>& extra) {
  std::vector<std::string> wanted;
  for (const auto& n : spec.order) {
    const Tensor& x = spec.tensors.at(n);
    // graph constants (a lifted 0-d tensor) too: a mask evaluated by the checker may read them
    if ((x.kind == "placeholder" && x.feedsData) || (x.kind == "get_attr" && x.data.size() == 1)) wanted.push_back(n);
  }
  for (const auto& n : extra) wanted.push_back(n);
  std::vector<Proposal> out;
  // Constant-only tensors the data reads (masks) are no longer cut points:
  // the checker evaluates them exactly and relates them by their values
  // (src/infer/closed.h). Listed for the reader, not related here.
  for (const auto& n : spec.frontier)
    if (std::find(extra.begin(), extra.end(), n) == extra.end())
      out.push_back({n, "", "computed from constants alone: the checker relates it by exact evaluation (not assumed)",
                     false, true});
  for (const auto& n : wanted) {
    Proposal p{n, "", "", !spec.tensors.count(n) || spec.tensors.at(n).kind != "placeholder"};
    auto it = spec.tensors.find(n);
    if (it == spec.tensors.end()) {
      p.note = "no values recorded (not a float or integer tensor of the spec graph)";
      out.push_back(p);
      continue;
    }
    const Tensor& x = it->second;
    if (x.kind == "get_attr" && x.data.size() == 1) {
      p.expr = "const";
      p.note = std::to_string(x.data[0]);
      out.push_back(p);
      continue;
    }
    // Inputs match implementation inputs; constant-region tensors any implementation tensor.
    std::vector<std::string> found;
    for (const auto& yn : impl.order) {
      const Tensor& y = impl.tensors.at(yn);
      if (!p.cut && y.kind != "placeholder") continue;
      for (auto& e : matchesOf(x, yn, y, tol)) found.push_back(e);
      if (p.cut)
        for (auto& e : doubledMatches(x, yn, y, tol)) found.push_back(e);
    }
    if (found.empty()) {
      p.note = "no implementation tensor holds these values (up to equal/reshape/transpose/slice/concat)";
    } else if (found.size() > 1 && (uninformative(x.data, tol) || !p.cut)) {
      // Values that cannot tell the candidates apart (e.g. all ones): refuse to guess.
      p.note = "ambiguous: " + std::to_string(found.size()) + " implementation tensors hold these values (" + found[0] +
               ", " + found[1] + (found.size() > 2 ? ", ..." : "") + ")";
    } else {
      p.expr = found[0];
      p.note = found.size() > 1 ? std::to_string(found.size()) + " candidates, first taken" : "";
    }
    out.push_back(p);
  }
  return out;
}

std::string relationText(const std::vector<Proposal>& ps, const std::string& specGraph, const std::string& implGraph,
                         const std::map<std::string, std::string>& specNames,
                         const std::map<std::string, std::string>& implNames) {
  std::ostringstream o;
  o << "# proposed by `tangle propose` from values recorded on one random input: review before trusting\n";
  o << "spec " << specGraph << "\nimpl " << implGraph << " ranks 1\n";
  auto nameOf = [](const std::map<std::string, std::string>& m, const std::string& n) {
    auto it = m.find(n);
    return it == m.end() ? std::string() : it->second;
  };
  for (const auto& p : ps) {
    std::string fqn = nameOf(specNames, p.spec);
    if (p.expr == "const") {
      o << "const S." << p.spec << " = " << p.note << "\n";
      continue;
    }
    if (p.expr.empty()) {
      o << "# S." << p.spec << (fqn.empty() ? "" : " (" + fqn + ")") << ": " << p.note << "\n";
      continue;
    }
    o << "S." << p.spec << " = " << p.expr;
    std::string impl;
    auto d0 = p.expr.find("D0.");
    if (d0 != std::string::npos) {
      auto end = p.expr.find_first_of(",) ", d0);
      impl = nameOf(implNames, p.expr.substr(d0 + 3, end == std::string::npos ? std::string::npos : end - d0 - 3));
    }
    std::string comment = p.cut ? "cut point: an input relation to review, taken as given (value-checked, not proved)" : "";
    if (!fqn.empty() || !impl.empty()) comment += (comment.empty() ? "" : "; ") + fqn + " <- " + impl;
    if (!p.note.empty()) comment += (comment.empty() ? "" : "; ") + p.note;
    if (!comment.empty()) o << "   # " << comment;
    o << "\n";
  }
  return o.str();
}

}  // namespace tangle::equiv

namespace tangle::equiv {

namespace {

std::vector<double> sortedValues(const Tensor& t) {
  std::vector<double> v = t.data;
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

std::optional<Divergence> firstDivergence(const Values& spec, const Values& impl, double tol) {
  std::vector<std::pair<std::string, std::vector<double>>> implSorted;
  for (const auto& n : impl.order) implSorted.emplace_back(n, sortedValues(impl.tensors.at(n)));
  std::map<std::string, std::string> match;  // spec tensor -> an impl tensor holding its values (rearranged)
  for (const auto& n : spec.order) {
    const Tensor& x = spec.tensors.at(n);
    if (uninformative(x.data, tol)) continue;  // all-equal values say nothing
    auto sv = sortedValues(x);
    for (const auto& [in, iv] : implSorted)
      if (sameData(sv, iv, tol)) {
        match[n] = in;
        break;
      }
  }
  // An intermediate one framework never materializes (HF's q * cos, where vLLM multiplies each half)
  // is not a divergence when what is computed from it meets the implementation again: "healed".
  std::map<std::string, std::vector<std::string>> readers;
  for (const auto& n : spec.order)
    for (const auto& a : spec.tensors.at(n).inputs) readers[a].push_back(n);
  std::map<std::string, bool> healed;
  for (auto it = spec.order.rbegin(); it != spec.order.rend(); ++it) {
    bool h = false;
    for (const auto& r : readers[*it]) h = h || match.count(r) || healed[r];
    healed[*it] = h;
  }
  for (const auto& n : spec.order) {
    const Tensor& x = spec.tensors.at(n);
    if (match.count(n) || healed[n] || !x.dataDependent || x.kind != "call_function" || uninformative(x.data, tol))
      continue;
    Divergence d{n, "", x.source, "", {}};
    std::vector<std::string> implInputs;
    for (const auto& a : x.inputs)
      if (match.count(a)) {
        d.matchedInputs.push_back("S." + a + " ~ D0." + match[a]);
        implInputs.push_back(match[a]);
      }
    // The implementation's side of the pair: computed from those inputs, of its size, and holding values
    // the spec never computes (the diverging value); else the first operator of its size reading them.
    std::set<std::string> held, reach(implInputs.begin(), implInputs.end());
    for (const auto& [sn, in] : match) held.insert(in);
    std::string firstReader;
    for (const auto& in : impl.order) {
      const Tensor& y = impl.tensors.at(in);
      bool reads = false, direct = false;
      for (const auto& a : y.inputs) {
        reads = reads || reach.count(a);
        direct = direct || std::count(implInputs.begin(), implInputs.end(), a);
      }
      if (!reads) continue;
      reach.insert(in);
      if (y.data.size() != x.data.size()) continue;
      if (direct && firstReader.empty()) firstReader = in;
      if (!held.count(in) && !uninformative(y.data, tol)) {
        d.impl = in;
        break;
      }
    }
    if (d.impl.empty()) d.impl = firstReader;
    if (!d.impl.empty()) d.implSource = impl.tensors.at(d.impl).source;
    return d;
  }
  return std::nullopt;
}

std::string divergenceText(const Divergence& d, const std::string& specGraph, const std::string& implGraph) {
  std::ostringstream o;
  o << "first divergence: S." << d.spec << " (" << specGraph << ") holds values no implementation tensor holds\n";
  o << "  spec source: " << (d.specSource.empty() ? "(unknown)" : d.specSource) << "\n";
  if (!d.impl.empty())
    o << "  implementation counterpart: D0." << d.impl << " (" << implGraph << ")\n  implementation source: "
      << (d.implSource.empty() ? "(unknown)" : d.implSource) << "\n";
  else
    o << "  no implementation operator of its size reads the matching inputs\n";
  if (!d.matchedInputs.empty()) {
    o << "  its inputs agree:";
    for (const auto& m : d.matchedInputs) o << " " << m << ";";
    o << "\n";
  }
  return o.str();
}

}  // namespace tangle::equiv
