#include "relation/lexer.h"

#include <charconv>
#include <cmath>

namespace tangle::rel {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

bool isDelimiter(char c) {
  return isSpace(c) || c == '\n' || c == ',' || c == '(' || c == ')' || c == '[' || c == ']' ||
         c == '=';
}

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view firstWord(std::string_view line) {
  size_t end = 0;
  while (end < line.size() && !isSpace(line[end])) ++end;
  return line.substr(0, end);
}

// Statements whose argument is raw text (a path, an option value): no
// bracket matching and no continuation lines.
bool isRawStatement(std::string_view word) {
  return word == "spec" || word == "impl" || word == "option";
}

// A continuation line that can only be the start of a new statement (a
// keyword, or `X.name =`): the previous statement forgot a closing paren.
bool startsStatement(std::string_view line) {
  std::string_view w = firstWord(line);
  static constexpr std::string_view kKeywords[] = {"spec",   "impl",   "const", "input",
                                                   "output", "expect", "group", "option", "zero"};
  for (std::string_view k : kKeywords)
    if (w == k && w.size() < line.size()) return true;
  size_t end = 0;
  while (end < line.size() && !isDelimiter(line[end])) ++end;
  if (line.substr(0, end).find('.') == std::string_view::npos) return false;
  while (end < line.size() && isSpace(line[end])) ++end;
  return end < line.size() && line[end] == '=';
}

}  // namespace

std::vector<Statement> splitStatements(std::string_view source, const std::string& file) {
  std::vector<Statement> out;
  struct Open {
    char c;
    int line;
  };
  std::vector<Open> open;  // unclosed ( and [ of the current statement
  Statement cur;
  bool inStatement = false;
  int lineNo = 0;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t nl = source.find('\n', pos);
    if (nl == std::string_view::npos) nl = source.size();
    std::string_view line = source.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineNo;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);

    if (!inStatement) {
      if (line.empty()) continue;
      cur = Statement{std::string(line), lineNo};
      if (isRawStatement(firstWord(line))) {
        out.push_back(std::move(cur));
        continue;
      }
      inStatement = true;
    } else {
      if (startsStatement(line))
        throw InputError({file, open.back().line},
                         std::string("unclosed '") + open.back().c + "' (line " +
                             std::to_string(lineNo) + " starts a new statement)");
      cur.text += '\n';
      cur.text += line;
    }
    for (char c : line) {
      if (c == '(' || c == '[') {
        open.push_back({c, lineNo});
      } else if (c == ')' || c == ']') {
        if (open.empty())
          throw InputError({file, lineNo}, std::string("unmatched '") + c + "'");
        char want = open.back().c == '(' ? ')' : ']';
        if (c != want)
          throw InputError({file, lineNo}, std::string("'") + c + "' closes the '" + open.back().c +
                                               "' opened on line " +
                                               std::to_string(open.back().line));
        open.pop_back();
      }
    }
    if (open.empty()) {
      out.push_back(std::move(cur));
      inStatement = false;
    }
  }
  if (!open.empty())
    throw InputError({file, open.back().line},
                     std::string("unclosed '") + open.back().c + "' (never closed before end of file)");
  return out;
}

std::vector<Token> tokenize(const Statement& stmt) {
  std::vector<Token> toks;
  std::string_view s = stmt.text;
  int line = stmt.line;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (isSpace(c)) {
      ++i;
      continue;
    }
    Token::Kind kind = Token::Kind::Word;
    switch (c) {
      case '(': kind = Token::Kind::LParen; break;
      case ')': kind = Token::Kind::RParen; break;
      case '[': kind = Token::Kind::LBracket; break;
      case ']': kind = Token::Kind::RBracket; break;
      case ',': kind = Token::Kind::Comma; break;
      case '=': kind = Token::Kind::Equals; break;
      default: break;
    }
    if (kind != Token::Kind::Word) {
      toks.push_back({kind, s.substr(i, 1), line});
      ++i;
      continue;
    }
    size_t start = i;
    while (i < s.size() && !isDelimiter(s[i])) ++i;
    toks.push_back({Token::Kind::Word, s.substr(start, i - start), line});
  }
  toks.push_back({Token::Kind::End, {}, line});
  return toks;
}

bool looksLikeTensorName(std::string_view w) { return w.find('.') != std::string_view::npos; }

std::optional<TensorName> parseTensorName(std::string_view w) {
  TensorName t;
  size_t dot = w.find('.');
  if (dot == std::string_view::npos || dot + 1 >= w.size()) return std::nullopt;
  std::string_view prefix = w.substr(0, dot), name = w.substr(dot + 1);
  if (prefix == "S") {
    t.side = TensorName::Side::Spec;
  } else if (prefix == "D*") {
    t.side = TensorName::Side::Impl;
    t.allRanks = true;
  } else if (prefix.size() >= 2 && prefix[0] == 'D') {
    std::string_view digits = prefix.substr(1);
    for (char c : digits)
      if (c < '0' || c > '9') return std::nullopt;
    int rank = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
    if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
    t.side = TensorName::Side::Impl;
    t.rank = rank;
  } else {
    return std::nullopt;
  }
  for (char c : name)
    if (!isNameChar(c)) return std::nullopt;
  t.name = std::string(name);
  return t;
}

std::optional<int64_t> parseInt(std::string_view w) {
  if (!w.empty() && w.front() == '+') w.remove_prefix(1);
  if (w.empty()) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || p != w.data() + w.size()) return std::nullopt;
  return v;
}

std::optional<double> parseNumber(std::string_view w) {
  if (w == "inf" || w == "+inf") return INFINITY;
  if (w == "-inf") return -INFINITY;
  if (w == "nan") return NAN;
  if (!w.empty() && w.front() == '+') w.remove_prefix(1);
  if (w.empty()) return std::nullopt;
  char c = w.front() == '-' && w.size() > 1 ? w[1] : w.front();
  if (!((c >= '0' && c <= '9') || c == '.')) return std::nullopt;  // no "infinity", hex, ...
  double v = 0;
  auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v, std::chars_format::general);
  if (ec != std::errc() || p != w.data() + w.size()) return std::nullopt;
  return v;
}

std::string describe(const Token& tok) {
  if (tok.kind == Token::Kind::End) return "end of statement";
  return "'" + std::string(tok.text) + "'";
}

}  // namespace tangle::rel
