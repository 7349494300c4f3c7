// The character-level half of the schema parser (internal to libaten, not installed API).
// It reads characters directly rather than producing a token stream: the grammar's tokens
// are simple, and every error then knows its exact column.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace c10::inline tessera::schema_detail {

inline bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A numeric literal as written: `1`, `-2`, `1.`, `1e-05`, `2j`, `1.+2.j`.
struct NumberLiteral {
  bool is_integer = false;  // no '.', exponent or 'j'
  bool is_complex = false;
  int64_t integer = 0;
  double real = 0.0;
  double imag = 0.0;
};

class SchemaLexer {
 public:
  explicit SchemaLexer(std::string_view text) : text_(text) {}

  // Whitespace is skipped before every token except inside names: `aten::add.Tensor`.
  size_t skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return pos_;
  }
  bool next_is(char c) { return skip_ws() < text_.size() && text_[pos_] == c; }
  bool next_is_identifier() { return skip_ws() < text_.size() && is_ident_start(text_[pos_]); }
  bool accept(char c) {
    if (!next_is(c)) return false;
    ++pos_;
    return true;
  }
  bool accept(std::string_view s) {
    skip_ws();
    return accept_raw(s);
  }
  bool accept_raw(std::string_view s) {
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  // A keyword, not the prefix of a longer identifier (`Nonempty` is not `None`).
  bool accept_word(std::string_view word);
  void expect(char c) {
    if (!accept(c)) expected(pos_, std::string("'") + c + "'");
  }
  void expect(std::string_view s) {
    if (!accept(s)) expected(pos_, "'" + std::string(s) + "'");
  }

  // `what` names the expected thing in the error ("an argument name").
  std::string identifier(const char* what);
  // A non-negative decimal integer (a fixed list size).
  int64_t integer_literal();
  // A number after an optional '-' already consumed; `1.+2.j` reads as one complex number.
  NumberLiteral number(bool negative);
  // Single- or double-quoted, with C escapes (including the octal ones the printer writes).
  std::string string_literal();

  // "schema parse error at column N: message", then the schema and a caret under column N.
  [[noreturn]] void fail(size_t at, const std::string& message) const;
  // fail() with "expected <what> but found <the text at `at`>".
  [[noreturn]] void expected(size_t at, const std::string& what) const;
  // A grammar rule the parser's loops cannot express, reported at the current column.
  void check_here(bool ok, const char* message) {
    if (!ok) fail(pos_, message);
  }

 protected:
  std::string_view text_;
  size_t pos_ = 0;

 private:
  NumberLiteral unsigned_number(bool negative);
  // What sits at `at`, for messages: a whole word or number, else one character.
  std::string found_at(size_t at) const;
};

}  // namespace c10::inline tessera::schema_detail
