#include "import/hlo_importer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "import/text_file.h"

namespace tangle {

namespace {

constexpr int kMaxNesting = 64;  // tuple shapes and nested attribute lists

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isWordChar(char c) { return isAlpha(c) || isDigit(c) || c == '_'; }
// Instruction and computation names: `custom-call.50`, `reduce.98.Reducer.103`.
bool isNameChar(char c) { return isWordChar(c) || c == '.' || c == '-'; }
bool isOpcodeChar(char c) { return isWordChar(c) || c == '-'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// HLO element type spelling -> DType. `token` is handled by the caller.
DType hloDType(std::string_view s) {
  static const std::pair<std::string_view, DType> kTypes[] = {
      {"pred", DType::Bool}, {"s8", DType::I8},   {"s16", DType::I16},   {"s32", DType::I32},
      {"s64", DType::I64},   {"u8", DType::U8},   {"f16", DType::F16},   {"bf16", DType::BF16},
      {"f32", DType::F32},   {"f64", DType::F64}, {"c64", DType::C64},   {"c128", DType::C128}};
  for (const auto& [name, type] : kTypes)
    if (name == s) return type;
  return DType::Unknown;
}

bool isIntegral(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64 || t == DType::U8;
}

// Index just past the string literal starting at s[i] == '"', or npos when it
// is not closed on its line.
size_t stringEnd(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') return i + 1;
    if (c == '\n') return std::string_view::npos;
    if (c == '\\') {
      if (i + 1 >= s.size() || s[i + 1] == '\n') return std::string_view::npos;
      ++i;
    }
  }
  return std::string_view::npos;
}

// Decodes C escapes (`\n`, `\'`, `\"`, `\\`, `\xNN`, octal) of a string body (no quotes).
std::string unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c != '\\' || i + 1 >= raw.size()) {
      out += c;
      continue;
    }
    char e = raw[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': case '\'': case '"': case '?': out += e; break;
      case 'x': {
        int v = 0;
        size_t j = i + 1;
        auto [ptr, ec] = std::from_chars(raw.data() + j, raw.data() + std::min(raw.size(), j + 2), v, 16);
        if (ec == std::errc() && ptr > raw.data() + j) {
          out += static_cast<char>(v);
          i = static_cast<size_t>(ptr - raw.data()) - 1;
        } else {
          out += "\\x";
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = 0;
          size_t j = i;
          while (j < raw.size() && j < i + 3 && raw[j] >= '0' && raw[j] <= '7') v = v * 8 + (raw[j++] - '0');
          out += static_cast<char>(v);
          i = j - 1;
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

// "File: <frame>" from a `metadata={... source_file="..." source_line=N}`
// attribute. transformers-neuronx stores a traceback in source_file:
// "file\n----\n['a.py:46', 'b.py:97', ...]"; the last frame outside
// site-packages is the model code that created the instruction. Works on the
// raw (escaped) text, so only the chosen frame is copied.
std::string sourceOf(std::string_view meta) {
  constexpr std::string_view kKey = "source_file=\"";
  size_t k = meta.find(kKey);
  if (k == std::string_view::npos) return {};
  size_t begin = k + kKey.size();
  size_t end = stringEnd(meta, begin - 1);
  if (end == std::string_view::npos) return {};
  std::string_view raw = meta.substr(begin, end - 1 - begin);
  constexpr std::string_view kSitePackages = "site-packages";

  size_t list = raw.find("----");
  if (list != std::string_view::npos) list = raw.find('[', list);
  if (list != std::string_view::npos) {
    std::string_view best;
    size_t pos = list + 1;
    for (;;) {
      size_t open = raw.find('\'', pos);
      if (open == std::string_view::npos) break;
      size_t close = raw.find('\'', open + 1);
      if (close == std::string_view::npos) break;
      std::string_view frame = raw.substr(open + 1, close - open - 1);
      if (!frame.empty() && frame.back() == '\\') frame.remove_suffix(1);  // the quote was escaped: \'
      if (!frame.empty() && frame.find(kSitePackages) == std::string_view::npos) best = frame;
      pos = close + 1;
    }
    return best.empty() ? std::string() : "File: " + unescape(best);
  }
  // Plain XLA metadata: source_file="a.py" source_line=46.
  if (raw.empty() || raw.find(kSitePackages) != std::string_view::npos) return {};
  std::string out = "File: " + unescape(raw);
  constexpr std::string_view kLine = "source_line=";
  if (size_t l = meta.find(kLine, end); l != std::string_view::npos) {
    size_t b = l + kLine.size(), e = b;
    while (e < meta.size() && isDigit(meta[e])) ++e;
    if (e > b) out += ":" + std::string(meta.substr(b, e - b));
  }
  return out;
}

// ------------------------------------------------------- attribute values ----

void skipWs(std::string_view v, size_t& i) {
  while (i < v.size() && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r')) ++i;
}

bool parseInt(std::string_view v, size_t& i, int64_t& out) {
  auto [ptr, ec] = std::from_chars(v.data() + i, v.data() + v.size(), out);
  if (ec != std::errc()) return false;
  i = static_cast<size_t>(ptr - v.data());
  return true;
}

// `{1,0}`, `{}`, `{{0,1},{2,3}}` starting at v[i] == '{'.
bool parseIntList(std::string_view v, size_t& i, ValueList& out, int depth) {
  if (depth > kMaxNesting) return false;
  ++i;
  skipWs(v, i);
  if (i < v.size() && v[i] == '}') {
    ++i;
    return true;
  }
  for (;;) {
    skipWs(v, i);
    if (i < v.size() && v[i] == '{') {
      ValueList sub;
      if (!parseIntList(v, i, sub, depth + 1)) return false;
      out.emplace_back(std::move(sub));
    } else {
      int64_t x = 0;
      if (!parseInt(v, i, x)) return false;
      out.emplace_back(x);
    }
    skipWs(v, i);
    if (i >= v.size()) return false;
    if (v[i] == '}') {
      ++i;
      return true;
    }
    if (v[i] != ',') return false;
    ++i;
  }
}

// `{[0:256], [0:1024:2]}` -> [[0, 256, 1], [0, 1024, 2]].
bool parseSlices(std::string_view v, ValueList& out) {
  size_t i = 1;
  for (;;) {
    skipWs(v, i);
    if (i >= v.size() || v[i] != '[') return false;
    ++i;
    int64_t bound[3] = {0, 0, 1};
    for (int k = 0; k < 3; ++k) {
      skipWs(v, i);
      if (!parseInt(v, i, bound[k])) return false;
      skipWs(v, i);
      if (i >= v.size()) return false;
      if (v[i] == ']' && k >= 1) break;
      if (v[i] != ':' || k == 2) return false;
      ++i;
    }
    ++i;  // ']'
    out.emplace_back(ValueList{bound[0], bound[1], bound[2]});
    skipWs(v, i);
    if (i >= v.size()) return false;
    if (v[i] == '}') return i + 1 == v.size();
    if (v[i] != ',') return false;
    ++i;
  }
}

// The value of a `key=value` attribute (everything but to_apply).
Value attributeValue(std::string_view v) {
  if (v.front() == '"' && stringEnd(v, 0) == v.size()) return unescape(v.substr(1, v.size() - 2));
  if (v.front() == '{') {
    ValueList list;
    size_t i = 0;
    if (parseIntList(v, i, list, 0) && i == v.size()) return list;
    list.clear();
    if (parseSlices(v, list)) return list;
    return Symbol{std::string(v)};
  }
  if (v == "true") return true;
  if (v == "false") return false;
  if (isDigit(v.front()) || ((v.front() == '-' || v.front() == '.') && v.size() > 1 && isDigit(v[1]))) {
    int64_t x = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec == std::errc() && ptr == v.data() + v.size()) return x;
    double d = 0;
    auto [dptr, dec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (dec == std::errc() && dptr == v.data() + v.size()) return d;
  }
  return Symbol{std::string(v)};
}

// A floating-point literal as HLO prints it: 1e-05, -30000, 8, -inf, inf, nan.
std::optional<double> parseFloating(std::string_view s) {
  bool neg = !s.empty() && s.front() == '-';
  std::string_view body = neg ? s.substr(1) : s;
  if (body == "inf") return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (body.substr(0, 3) == "nan") return std::numeric_limits<double>::quiet_NaN();  // also nan(0x7fffff)
  double d = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return d;
}

// ----------------------------------------------------------------- parser ----

struct Shape {
  std::optional<TensorType> type;  // unset for tuples and tokens
  bool tuple = false;
};

struct Attr {
  std::string_view key, value;
};

// One instruction as written; views point into the module text.
struct Instr {
  std::string_view name;  // without '%'
  int line = 0;
  bool root = false;
  Shape shape;
  std::string_view opcode;
  std::vector<std::string_view> operands;  // names without '%'
  std::string_view literal;                // constant: the text inside the parentheses
  int64_t parameter = -1;                  // parameter: its number
  std::vector<Attr> attrs;                 // in order, metadata excluded
  std::string_view metadata;               // the raw `{...}` value, empty when absent
};

struct Computation {
  int line = 0;
  std::string_view rootOpcode;
};

class HloParser {
 public:
  HloParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Graph run() {
    skipBlank();
    if (startsWith("HloModule")) {
      size_t eol = s_.find('\n', p_);
      p_ = eol == std::string_view::npos ? s_.size() : eol;
    }
    for (;;) {
      skipBlank();
      if (p_ >= s_.size()) break;
      errLine_ = line_;
      context_.clear();
      bool entry = acceptWord("ENTRY");
      skipSpaces();
      parseComputation(entry);
    }
    if (!hasEntry_)
      throw InputError(SourceLoc{path_, 1},
                       "no ENTRY computation (expected 'ENTRY %name (...) -> shape { ... }'; is this an HLO text module?)");
    return build();
  }

 private:
  // ---- errors: reported at the line where the current instruction (or
  // computation) starts, naming the line reached when it differs.
  [[noreturn]] void fail(const std::string& msg) const {
    std::string full = context_ + msg;
    if (line_ != errLine_ && p_ < s_.size()) full += " (at line " + std::to_string(line_) + ")";
    throw InputError(SourceLoc{path_, errLine_}, full);
  }
  std::string here() const {
    if (p_ >= s_.size()) return "end of file (truncated file?)";
    if (s_[p_] == '\n' || s_[p_] == '\r') return "end of line";
    size_t e = p_;
    while (e < s_.size() && e - p_ < 24 && s_[e] != '\n' && s_[e] != '\r') ++e;
    return "'" + std::string(s_.substr(p_, e - p_)) + "'";
  }

  // ---- cursor
  char cur() const { return p_ < s_.size() ? s_[p_] : '\0'; }
  bool startsWith(std::string_view w) const { return s_.compare(p_, w.size(), w) == 0; }
  bool acceptWord(std::string_view w) {
    if (!startsWith(w) || (p_ + w.size() < s_.size() && isNameChar(s_[p_ + w.size()]))) return false;
    p_ += w.size();
    return true;
  }
  // Spaces and /* comments */ (as in `/*index=5*/`), not line breaks.
  void skipSpaces() {
    for (;;) {
      char c = cur();
      if (c == ' ' || c == '\t' || c == '\r') {
        ++p_;
      } else if (c == '/' && p_ + 1 < s_.size() && s_[p_ + 1] == '*') {
        size_t e = s_.find("*/", p_ + 2);
        if (e == std::string_view::npos) fail("unterminated '/*' comment");
        line_ += static_cast<int>(std::count(s_.begin() + static_cast<ptrdiff_t>(p_), s_.begin() + static_cast<ptrdiff_t>(e), '\n'));
        p_ = e + 2;
      } else {
        return;
      }
    }
  }
  // Spaces, comments and line breaks.
  void skipBlank() {
    for (;;) {
      skipSpaces();
      char c = cur();
      if (c == '\n') {
        ++p_;
        ++line_;
      } else if (c == '/' && p_ + 1 < s_.size() && s_[p_ + 1] == '/') {
        size_t eol = s_.find('\n', p_);
        p_ = eol == std::string_view::npos ? s_.size() : eol;
      } else {
        return;
      }
    }
  }
  // `%name` or `name`; returns it without '%' (empty when there is none).
  // After a list element: true on ',' (another element follows), false on
  // `close` (consumed); anything else fails with `expected` and what was found.
  bool nextInList(char close, const std::string& expected) {
    skipSpaces();
    if (cur() == ',' || cur() == close) return s_[p_++] == ',';
    fail(expected + ", found " + here());
  }

  std::string_view readName() {
    size_t b = p_ + (cur() == '%' ? 1 : 0);
    size_t e = b;
    while (e < s_.size() && isNameChar(s_[e])) ++e;
    if (e == b) return {};
    p_ = e;
    return s_.substr(b, e - b);
  }
  void skipString() {
    size_t e = stringEnd(s_, p_);
    if (e == std::string_view::npos) {
      p_ = std::min(s_.find('\n', p_), s_.size());
      fail("unterminated string literal (expected a closing '\"' on the same line)");
    }
    p_ = e;
  }
  // A balanced bracket group starting at the current '(', '[' or '{'.
  std::string_view scanGroup() {
    size_t b = p_;
    int depth = 0;
    do {
      if (p_ >= s_.size()) fail("unexpected end of file: missing closing bracket (truncated file?)");
      char c = s_[p_];
      if (c == '"') {
        skipString();
        continue;
      }
      if (c == '\n') ++line_;
      else if (c == '(' || c == '[' || c == '{') ++depth;
      else if (c == ')' || c == ']' || c == '}') --depth;
      ++p_;
    } while (depth > 0);
    return s_.substr(b, p_ - b);
  }
  // An attribute value: up to the next ',' outside brackets, the end of the
  // line, or an unmatched closing bracket.
  std::string_view scanValue() {
    size_t b = p_;
    int depth = 0;
    while (p_ < s_.size()) {
      char c = s_[p_];
      if (c == '"') {
        skipString();
        continue;
      }
      if (c == '\n') {
        if (depth == 0) break;
        ++line_;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
      ++p_;
    }
    if (depth > 0) fail("unexpected end of file inside an attribute value (truncated file?)");
    return trim(s_.substr(b, p_ - b));
  }

  // ---- shapes: `f16[2048,64,4]{2,1,0}`, `f32[]`, `(s32[], f16[4]{0})`, `token[]`
  Shape parseShape(int depth = 0) {
    skipSpaces();
    Shape sh;
    if (cur() == '(') {
      if (depth >= kMaxNesting) fail("malformed shape: tuple shapes nested too deeply");
      ++p_;
      sh.tuple = true;
      skipSpaces();
      if (cur() == ')') {
        ++p_;
        return sh;
      }
      do parseShape(depth + 1);
      while (nextInList(')', "malformed shape: expected ',' or ')' in a tuple shape"));
      return sh;
    }
    size_t b = p_;
    while (p_ < s_.size() && isWordChar(s_[p_])) ++p_;
    std::string_view dtype = s_.substr(b, p_ - b);
    if (dtype.empty() || cur() != '[') {
      p_ = b;
      fail("malformed shape: expected 'type[dims]' (e.g. f32[8,16]{1,0}), found " + here());
    }
    TensorType type;
    bool token = dtype == "token";
    if (!token) {
      type.dtype = hloDType(dtype);
      if (type.dtype == DType::Unknown) {
        p_ = b;
        fail("unsupported element type '" + std::string(dtype) +
             "' (supported: pred, s8, s16, s32, s64, u8, f16, bf16, f32, f64, c64, c128, token)");
      }
    }
    ++p_;  // '['
    skipSpaces();
    if (cur() == ']') {
      ++p_;
    } else {
      for (;;) {
        skipSpaces();
        int64_t d = 0;
        auto [ptr, ec] = std::from_chars(s_.data() + p_, s_.data() + s_.size(), d);
        if (ec != std::errc() || d < 0) {
          if (cur() == '<' || cur() == '?') fail("dynamic dimensions are not supported, found " + here());
          fail("malformed shape: expected a dimension size, found " + here());
        }
        p_ = static_cast<size_t>(ptr - s_.data());
        type.shape.push_back(d);
        if (!nextInList(']', "malformed shape: expected ',' or ']' after a dimension")) break;
      }
    }
    if (!numelFits(type.shape)) {
      p_ = b;
      fail("shape with more elements than a 64-bit count holds, found " + here());
    }
    if (cur() == '{') scanGroup();  // layout, ignored
    if (token) {
      if (!type.shape.empty()) fail("malformed shape: a token has no dimensions");
    } else {
      sh.type = std::move(type);
    }
    return sh;
  }

  // ---- `[ROOT] %name = shape opcode(operands), key=value, ...`
  Instr parseInstruction() {
    Instr in;
    in.line = errLine_ = line_;
    context_.clear();
    if (acceptWord("ROOT")) {
      in.root = true;
      skipSpaces();
    }
    in.name = readName();
    if (in.name.empty()) fail("expected an instruction '%name = shape opcode(...)' or '}', found " + here());
    context_ = "instruction '" + std::string(in.name) + "': ";
    skipSpaces();
    if (cur() != '=') fail("expected '=' after the instruction name, found " + here());
    ++p_;
    in.shape = parseShape();
    skipSpaces();
    size_t b = p_;
    while (p_ < s_.size() && isOpcodeChar(s_[p_])) ++p_;
    in.opcode = s_.substr(b, p_ - b);
    if (in.opcode.empty()) fail("expected an opcode after the shape, found " + here());
    if (cur() != '(') fail("expected '(' after opcode '" + std::string(in.opcode) + "', found " + here());

    if (in.opcode == "constant") {
      std::string_view group = scanGroup();
      in.literal = trim(group.substr(1, group.size() - 2));
      if (in.literal.empty()) fail("constant without a literal");
    } else if (in.opcode == "parameter") {
      ++p_;
      skipSpaces();
      auto [ptr, ec] = std::from_chars(s_.data() + p_, s_.data() + s_.size(), in.parameter);
      if (ec != std::errc() || in.parameter < 0) fail("expected a parameter number in 'parameter(N)', found " + here());
      p_ = static_cast<size_t>(ptr - s_.data());
      skipSpaces();
      if (cur() != ')') fail("expected ')' after the parameter number, found " + here());
      ++p_;
    } else {
      parseOperands(in);
    }
    parseAttributes(in);
    return in;
  }

  // `(%a, %b)`; an operand may be preceded by its shape (`f32[4]{0} %a`).
  void parseOperands(Instr& in) {
    ++p_;  // '('
    skipSpaces();
    if (cur() == ')') {
      ++p_;
      return;
    }
    for (;;) {
      skipSpaces();
      if (cur() == '(') {
        parseShape();
      } else if (cur() != '%') {
        size_t e = p_;
        while (e < s_.size() && isWordChar(s_[e])) ++e;
        if (e < s_.size() && s_[e] == '[') parseShape();
      }
      skipSpaces();
      std::string_view name = readName();
      if (name.empty()) fail("expected an operand name ('%name'), found " + here());
      in.operands.push_back(name);
      if (!nextInList(')', "expected ',' or ')' after operand '%" + std::string(name) + "'")) return;
    }
  }

  void parseAttributes(Instr& in) {
    for (;;) {
      skipSpaces();
      if (p_ >= s_.size() || cur() == '\n') return;
      if (cur() != ',') fail("expected ', key=value' or the end of the line, found " + here());
      ++p_;
      skipSpaces();
      size_t b = p_;
      while (p_ < s_.size() && isWordChar(s_[p_])) ++p_;
      std::string_view key = s_.substr(b, p_ - b);
      if (key.empty()) fail("expected an attribute name after ',', found " + here());
      skipSpaces();
      if (cur() != '=') fail("expected '=' after attribute '" + std::string(key) + "', found " + here());
      ++p_;
      skipSpaces();
      std::string_view value = scanValue();
      if (value.empty()) fail("attribute '" + std::string(key) + "' has no value");
      if (key == "metadata") in.metadata = value;
      else in.attrs.push_back(Attr{key, value});
    }
  }

  // ---- `[ENTRY] %name (params) -> shape { instructions }`
  void parseComputation(bool entry) {
    const int start = line_;
    std::string_view name = readName();
    if (name.empty())
      fail(entry ? "expected a computation name after 'ENTRY', found " + here()
                 : "expected a computation ('[ENTRY] %name (params) -> shape {'), found " + here());
    const std::string label = "computation '" + std::string(name) + "': ";
    context_ = label;
    skipSpaces();
    if (cur() == '(') scanGroup();  // parameters: repeated by the parameter instructions
    skipSpaces();
    if (startsWith("->")) {
      p_ += 2;
      parseShape();
      skipSpaces();
    }
    if (cur() != '{') fail("expected '{' to open the computation body, found " + here());
    ++p_;

    std::string_view rootOpcode, lastOpcode;
    size_t rootIndex = entry_.size(), count = 0;
    bool sawRoot = false;
    for (;;) {
      skipBlank();
      if (p_ >= s_.size()) {
        errLine_ = start;
        context_ = label;
        fail("missing '}' at the end of the computation (truncated file?)");
      }
      if (cur() == '}') {
        ++p_;
        break;
      }
      Instr in = parseInstruction();
      if (in.root) {
        if (sawRoot) fail("a second ROOT instruction in the computation");
        sawRoot = true;
        rootOpcode = in.opcode;
        rootIndex = entry ? entry_.size() : 0;
      }
      lastOpcode = in.opcode;
      ++count;
      if (entry) entry_.push_back(std::move(in));
    }
    errLine_ = start;
    context_ = label;
    if (count == 0) fail("the computation has no instructions");
    if (entry) {
      if (hasEntry_) fail("a second ENTRY computation (the first one starts at line " + std::to_string(entryLine_) + ")");
      hasEntry_ = true;
      entryLine_ = start;
      entryRoot_ = sawRoot ? rootIndex : entry_.size() - 1;
    }
    auto [it, inserted] = computations_.try_emplace(name, Computation{start, sawRoot ? rootOpcode : lastOpcode});
    if (!inserted) fail("duplicate computation name (first defined at line " + std::to_string(it->second.line) + ")");
    context_.clear();
  }

  // ---- building the Graph from the ENTRY computation
  Graph build() {
    g_.path = path_;
    ids_.reserve(entry_.size() * 2);
    for (const Instr& in : entry_) defined_.try_emplace(in.name, in.line);

    std::vector<size_t> params;
    for (size_t i = 0; i < entry_.size(); ++i)
      if (entry_[i].opcode == "parameter") params.push_back(i);
    std::stable_sort(params.begin(), params.end(),
                     [&](size_t a, size_t b) { return entry_[a].parameter < entry_[b].parameter; });
    for (size_t k = 0; k < params.size(); ++k) {
      const Instr& in = entry_[params[k]];
      if (in.parameter != static_cast<int64_t>(k)) {
        errLine_ = in.line;
        context_ = "instruction '" + std::string(in.name) + "': ";
        if (k > 0 && entry_[params[k - 1]].parameter == in.parameter)
          fail("parameter(" + std::to_string(in.parameter) + ") is also declared by '" +
               std::string(entry_[params[k - 1]].name) + "' at line " + std::to_string(entry_[params[k - 1]].line));
        fail("parameter numbers must be 0.." + std::to_string(params.size() - 1) + ", found parameter(" +
             std::to_string(in.parameter) + ")");
      }
      addNode(in);
    }

    const Instr& root = entry_[entryRoot_];
    const bool tupleRoot = root.opcode == "tuple";
    for (size_t i = 0; i < entry_.size(); ++i) {
      if (entry_[i].opcode == "parameter" || (tupleRoot && i == entryRoot_)) continue;
      addNode(entry_[i]);
    }

    errLine_ = root.line;
    context_ = "instruction '" + std::string(root.name) + "': ";
    if (tupleRoot) {
      for (std::string_view op : root.operands) addOutput(resolve(op));
    } else {
      g_.outputs.emplace_back(TensorRef{ids_.at(root.name)});
    }
    g_.verify();
    return std::move(g_);
  }

  // Flattens nested `tuple` instructions of the ROOT tuple.
  void addOutput(NodeId id) {
    const Node& n = g_.node(id);
    if (n.op != "hlo.tuple") {
      g_.outputs.emplace_back(TensorRef{id});
      return;
    }
    for (const Value& a : n.args) addOutput(std::get<TensorRef>(a.v).node);
  }

  NodeId resolve(std::string_view operand) const {
    auto it = ids_.find(operand);
    if (it != ids_.end()) return it->second;
    std::string name = "'%" + std::string(operand) + "'";
    auto def = defined_.find(operand);
    if (def == defined_.end()) fail("operand " + name + " is not defined in the ENTRY computation");
    const Instr& root = entry_[entryRoot_];
    if (root.name == operand && root.opcode == "tuple")
      fail("operand " + name + " is the ROOT tuple, which only lists the outputs");
    fail("operand " + name + " is used before its definition at line " + std::to_string(def->second));
  }

  void addNode(const Instr& in) {
    errLine_ = in.line;
    context_ = "instruction '" + std::string(in.name) + "': ";
    Node n;
    n.name = std::string(in.name);
    n.loc = SourceLoc{path_, in.line};
    if (!in.metadata.empty()) n.source = sourceOf(in.metadata);
    n.isTuple = in.shape.tuple;
    n.type = in.shape.type;

    const bool gte = in.opcode == "get-tuple-element";
    if (in.opcode == "parameter") {
      n.op = "placeholder";
    } else if (gte) {
      n.op = "getitem";
      if (in.operands.size() != 1) fail("get-tuple-element takes exactly one operand");
      NodeId tuple = resolve(in.operands[0]);
      if (!g_.node(tuple).isTuple) fail("get-tuple-element of '%" + std::string(in.operands[0]) + "', which is not a tuple");
      auto index = std::find_if(in.attrs.begin(), in.attrs.end(), [](const Attr& a) { return a.key == "index"; });
      int64_t i = -1;
      if (index != in.attrs.end()) {
        auto [ptr, ec] = std::from_chars(index->value.data(), index->value.data() + index->value.size(), i);
        if (ec != std::errc() || ptr != index->value.data() + index->value.size()) i = -1;
      }
      if (i < 0) fail("get-tuple-element needs an attribute 'index=N'");
      n.args = {TensorRef{tuple}, i};
    } else {
      n.op = "hlo." + std::string(in.opcode);
      n.args.reserve(in.operands.size());
      for (std::string_view op : in.operands) n.args.emplace_back(TensorRef{resolve(op)});
    }
    if (in.opcode == "constant") addLiteral(in, n);

    for (const Attr& a : in.attrs) {
      if (gte && a.key == "index") continue;
      if (a.key == "to_apply") {
        std::string_view comp = a.value;
        if (!comp.empty() && comp.front() == '%') comp.remove_prefix(1);
        auto it = computations_.find(comp);
        if (it == computations_.end()) fail("to_apply refers to unknown computation " + quoted(a.value));
        n.kwargs.emplace_back("to_apply", std::string(it->second.rootOpcode));
        n.kwargs.emplace_back("to_apply_computation", std::string(comp));
        continue;
      }
      n.kwargs.emplace_back(std::string(a.key), attributeValue(a.value));
    }
    NodeId id = g_.add(std::move(n));
    ids_.emplace(in.name, id);
  }

  // A literal as quoted in an error: its first line, at most 40 characters (the
  // literal runs to the closing parenthesis, which a broken file may put lines later).
  static std::string quoted(std::string_view lit) {
    size_t end = std::min(lit.find_first_of("\r\n"), size_t{40});
    return "'" + std::string(lit.substr(0, end)) + (end < lit.size() ? "...'" : "'");
  }

  // `constant(1e-05)` -> args [1e-05]; `constant({...})` -> kwarg literal.
  void addLiteral(const Instr& in, Node& n) const {
    std::string_view lit = in.literal;
    if (!in.shape.type || lit.front() == '{' || lit.front() == '(') {
      n.kwargs.emplace_back("literal", Symbol{std::string(lit)});
      return;
    }
    DType t = in.shape.type->dtype;
    if (isFloating(t)) {
      auto d = parseFloating(lit);
      if (!d) fail("malformed floating-point constant " + quoted(lit));
      n.args.emplace_back(*d);
    } else if (isIntegral(t)) {
      int64_t x = 0;
      auto [ptr, ec] = std::from_chars(lit.data(), lit.data() + lit.size(), x);
      if (ec != std::errc() || ptr != lit.data() + lit.size()) fail("malformed integer constant " + quoted(lit));
      n.args.emplace_back(x);
    } else if (t == DType::Bool) {
      if (lit != "true" && lit != "false") fail("malformed pred constant " + quoted(lit) + " (expected true or false)");
      n.args.emplace_back(lit == "true");
    } else {
      n.kwargs.emplace_back("literal", Symbol{std::string(lit)});
    }
  }

  std::string_view s_;
  const std::string& path_;
  size_t p_ = 0;
  int line_ = 1;
  int errLine_ = 1;       // line errors are reported at
  std::string context_;   // "instruction 'x': " prefix of error messages

  std::unordered_map<std::string_view, Computation> computations_;
  std::vector<Instr> entry_;
  bool hasEntry_ = false;
  int entryLine_ = 0;
  size_t entryRoot_ = 0;

  Graph g_;
  std::unordered_map<std::string_view, NodeId> ids_;
  std::unordered_map<std::string_view, int> defined_;  // entry instruction -> line
};

}  // namespace

Graph importHloText(std::string_view text, const std::string& path) {
  HloParser parser(text, path);
  return parser.run();
}

Graph importHloFile(const std::string& path) {
  std::string text = readTextFile(path);
  return importHloText(text, path);
}

}  // namespace tangle
