// Lexing of relation files (internal to src/relation).
//
// Two stages: splitStatements turns the file into logical statements (comments
// stripped, lines inside open parentheses/brackets joined), then tokenize cuts
// one statement into words and punctuation. A "word" is a maximal run of
// characters other than whitespace and , ( ) [ ] = ; it is classified later
// (tensor name, op name, number), which keeps HLO names such as `p0.1` or
// `all-reduce.3` one token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relation/relation.h"

namespace tangle::rel {

struct Statement {
  std::string text;  // physical lines joined with '\n' (so line numbers can be recovered)
  int line = 0;      // line of the first physical line
};

// Throws InputError on unbalanced or unclosed parentheses/brackets.
std::vector<Statement> splitStatements(std::string_view source, const std::string& file);

struct Token {
  enum class Kind { Word, LParen, RParen, LBracket, RBracket, Comma, Equals, End } kind = Kind::End;
  std::string_view text;  // points into the Statement's text
  int line = 0;
};

// Always ends with a Kind::End token.
std::vector<Token> tokenize(const Statement& stmt);

// Word classification.
std::optional<TensorName> parseTensorName(std::string_view word);  // S.x, D3.x, D*.x
bool looksLikeTensorName(std::string_view word);                   // has an S./Dk./D*. style prefix or a dot
std::optional<int64_t> parseInt(std::string_view word);
std::optional<double> parseNumber(std::string_view word);  // int or float, inf, nan

// Printable form of a token for error messages.
std::string describe(const Token& tok);

}  // namespace tangle::rel
