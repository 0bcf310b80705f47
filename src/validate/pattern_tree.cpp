#include "validate/pattern_tree.h"

#include <cctype>
#include <cstdlib>

namespace tangle::validate {

namespace {

class TreeParser {
 public:
  explicit TreeParser(std::string_view t) : t_(t) {}

  std::optional<PatTree> parse() {
    auto n = node();
    skip();
    if (!n || i_ != t_.size()) return std::nullopt;
    return n;
  }

 private:
  void skip() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::string atom() {
    skip();
    size_t s = i_;
    while (i_ < t_.size() && !std::isspace(static_cast<unsigned char>(t_[i_])) &&
           std::string_view("()[],\"").find(t_[i_]) == std::string_view::npos)
      ++i_;
    return std::string(t_.substr(s, i_ - s));
  }

  std::optional<PatTree> node() {
    PatTree n;
    if (!eat('(')) {
      std::string a = atom();
      if (a.size() < 2 || a[0] != '?') return std::nullopt;
      n.isVar = true;
      n.var = a.substr(1);
      return n;
    }
    n.op = atom();
    if (n.op.empty()) return std::nullopt;
    skip();
    if (i_ < t_.size() && t_[i_] == '[') {
      ++i_;
      do {
        auto a = attr();
        if (!a) return std::nullopt;
        n.attrs.push_back(std::move(*a));
      } while (eat(','));
      if (!eat(']')) return std::nullopt;
    }
    while (!eat(')')) {
      skip();
      if (i_ >= t_.size()) return std::nullopt;
      if (t_[i_] == '?') {
        size_t save = i_;
        std::string a = atom();
        if (a.size() > 4 && a.ends_with("...")) {
          n.listVar = a.substr(1, a.size() - 4);
          if (!eat(')')) return std::nullopt;
          return n;
        }
        i_ = save;
      }
      auto c = node();
      if (!c) return std::nullopt;
      n.children.push_back(std::move(*c));
    }
    return n;
  }

  std::optional<PatAttr> attr() {
    PatAttr a;
    skip();
    if (i_ >= t_.size()) return std::nullopt;
    if (t_[i_] == '[') {  // [int, ...]
      ++i_;
      std::vector<int64_t> v;
      if (!eat(']')) {
        do {
          std::string x = atom();
          char* end = nullptr;
          long long k = std::strtoll(x.c_str(), &end, 10);
          if (x.empty() || *end) return std::nullopt;
          v.push_back(k);
        } while (eat(','));
        if (!eat(']')) return std::nullopt;
      }
      a.literal = eg::Attr::ints(std::move(v));
      return a;
    }
    if (t_[i_] == '"') {
      size_t e = t_.find('"', i_ + 1);
      if (e == std::string_view::npos) return std::nullopt;
      a.literal = eg::Attr::str(t_.substr(i_ + 1, e - i_ - 1));
      i_ = e + 1;
      return a;
    }
    std::string x = atom();
    if (x.empty()) return std::nullopt;
    if (x[0] == '?') {
      a.kind = PatAttr::Kind::Var;
      a.var = x.substr(1);
    } else if (x == "_") {
      a.kind = PatAttr::Kind::Any;
    } else if (x == "true" || x == "false") {
      a.literal = eg::Attr::boolean(x == "true");
    } else if (x == "none") {
      a.literal = eg::Attr::none();
    } else {
      char* end = nullptr;
      long long k = std::strtoll(x.c_str(), &end, 10);
      if (!*end) {
        a.literal = eg::Attr::integer(k);
      } else {
        double f = std::strtod(x.c_str(), &end);
        if (*end) return std::nullopt;
        a.literal = eg::Attr::real(f);
      }
    }
    return a;
  }

  std::string_view t_;
  size_t i_ = 0;
};

}  // namespace

std::optional<PatTree> parsePatternTree(std::string_view text) { return TreeParser(text).parse(); }

}  // namespace tangle::validate
