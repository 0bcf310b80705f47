// Printing of relation expressions and the impl path list.
#include "relation/relation.h"

#include <charconv>
#include <filesystem>

namespace tangle {

RelExpr::RelExpr() = default;
RelExpr::RelExpr(const RelExpr&) = default;
RelExpr::RelExpr(RelExpr&&) noexcept = default;
RelExpr& RelExpr::operator=(const RelExpr&) = default;
RelExpr& RelExpr::operator=(RelExpr&&) noexcept = default;
RelExpr::~RelExpr() = default;

std::string TensorName::toString() const {
  if (side == Side::Spec) return "S." + name;
  if (allRanks) return "D*." + name;
  return "D" + std::to_string(rank) + "." + name;
}

namespace {

// Shortest text that reads back as the same double, and as a float (not an int).
std::string formatFloat(double f) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".ein") == std::string::npos) s += ".0";
  return s;
}

void print(const RelExpr& e, std::string& out) {
  switch (e.kind) {
    case RelExpr::Kind::Tensor: out += e.tensor.toString(); return;
    case RelExpr::Kind::Int: out += std::to_string(e.i); return;
    case RelExpr::Kind::Float: out += formatFloat(e.f); return;
    case RelExpr::Kind::IntList:
      out += '[';
      for (size_t k = 0; k < e.ints.size(); ++k) {
        if (k) out += ", ";
        out += std::to_string(e.ints[k]);
      }
      out += ']';
      return;
    case RelExpr::Kind::Call: {
      out += e.op;
      out += '(';
      bool first = true;
      for (const RelExpr& a : e.args) {
        if (!first) out += ", ";
        first = false;
        print(a, out);
      }
      for (const auto& [key, value] : e.kwargs) {
        if (!first) out += ", ";
        first = false;
        out += key;
        out += '=';
        print(value, out);
      }
      out += ')';
      return;
    }
  }
}

std::string substituteRank(const std::string& pattern, int rank) {
  static const std::string kRank = "{rank}";
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = pattern.find(kRank, pos)) != std::string::npos; pos = hit + kRank.size()) {
    out.append(pattern, pos, hit - pos);
    out += std::to_string(rank);
  }
  out.append(pattern, pos);
  return out;
}

}  // namespace

std::string RelExpr::toString() const {
  std::string out;
  print(*this, out);
  return out;
}

const RelExpr* RelExpr::kwarg(std::string_view key) const {
  for (const auto& [k, v] : kwargs)
    if (k == key) return &v;
  return nullptr;
}

std::vector<std::string> RelationFile::implPaths() const {
  std::vector<std::string> paths;
  if (!implPattern) return paths;
  const bool perRankFiles = implPattern->find("{rank}") != std::string::npos;
  int n = implRanks;
  if (n <= 0) {
    // No `ranks N`: one file for a pattern without {rank} (an SPMD program),
    // else as many as exist for ranks 0, 1, 2, ...
    n = 1;
    if (perRankFiles) {
      std::error_code ec;
      n = 0;
      while (n < 65536 && std::filesystem::exists(substituteRank(*implPattern, n), ec)) ++n;
    }
  }
  paths.reserve(n);
  for (int r = 0; r < n; ++r)
    paths.push_back(perRankFiles ? substituteRank(*implPattern, r) : *implPattern);
  return paths;
}

}  // namespace tangle
