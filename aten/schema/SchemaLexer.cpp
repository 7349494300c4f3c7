// The character-level half of the schema parser: identifiers, number and string
// literals, and error messages with a column and a caret.
#include <aten/schema/SchemaLexer.h>

#include <c10/util/Exception.h>

#include <cctype>
#include <charconv>

namespace c10::inline tessera::schema_detail {

std::string SchemaLexer::identifier(const char* what) {
  skip_ws();
  if (pos_ >= text_.size() || !is_ident_start(text_[pos_])) expected(pos_, what);
  const size_t start = pos_;
  while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
  return std::string(text_.substr(start, pos_ - start));
}

std::string SchemaLexer::found_at(size_t at) const {
  if (at >= text_.size()) return "end of schema";
  size_t end = at;
  while (end < text_.size() && (is_ident_char(text_[end]) || text_[end] == '.') && end - at < 40) ++end;
  if (end == at) end = at + 1;
  std::string quoted = "'";  // appended, not `"'" + string`: GCC 12 -O3 warns falsely on that (-Wrestrict)
  quoted.append(text_.substr(at, end - at)).push_back('\'');
  return quoted;
}

void SchemaLexer::fail(size_t at, const std::string& message) const {
  TORCH_ERROR_WITH(Error, "schema parse error at column ", at + 1, ": ", message, "\n  ", text_, "\n  ",
                   std::string(at, ' '), "^");
}

void SchemaLexer::expected(size_t at, const std::string& what) const {
  fail(at, "expected " + what + " but found " + found_at(at));
}

bool SchemaLexer::accept_word(std::string_view word) {
  skip_ws();
  if (text_.substr(pos_, word.size()) != word) return false;
  const size_t end = pos_ + word.size();
  if (end < text_.size() && is_ident_char(text_[end])) return false;
  pos_ = end;
  return true;
}

int64_t SchemaLexer::integer_literal() {
  const size_t start = skip_ws();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), value);
  if (ec == std::errc::result_out_of_range) fail(start, "integer out of range");
  if (ec != std::errc()) expected(start, "an integer");
  pos_ = static_cast<size_t>(end - text_.data());
  return value;
}

NumberLiteral SchemaLexer::number(bool negative) {
  const size_t start = skip_ws();
  NumberLiteral n = unsigned_number(negative);
  // torch prints complex defaults as `1.+2.j`: a real part, a sign, an imaginary part.
  if (!n.is_complex && pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-') &&
      pos_ + 1 < text_.size() && (is_digit(text_[pos_ + 1]) || text_[pos_ + 1] == '.')) {
    const bool minus = text_[pos_++] == '-';
    NumberLiteral im = unsigned_number(minus);
    if (!im.is_complex) expected(start, "a complex number such as 1.+2.j");
    n.is_complex = true;
    n.is_integer = false;
    n.imag = im.imag;
  }
  return n;
}

NumberLiteral SchemaLexer::unsigned_number(bool negative) {
  const size_t start = pos_;
  size_t end = pos_;
  bool integral = true;
  while (end < text_.size() && is_digit(text_[end])) ++end;
  if (end < text_.size() && text_[end] == '.') {
    integral = false;
    ++end;
    while (end < text_.size() && is_digit(text_[end])) ++end;
  }
  const size_t mantissa_end = end;
  if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
    size_t e = end + 1;
    if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
    if (e < text_.size() && is_digit(text_[e])) {
      integral = false;
      end = e;
      while (end < text_.size() && is_digit(text_[end])) ++end;
    }
  }
  const std::string_view digits = text_.substr(start, end - start);
  if (mantissa_end == start || digits == ".") expected(start, "a default value");
  NumberLiteral n;
  std::string spelled(negative ? "-" : "");
  spelled.append(digits);
  if (integral) {
    auto [p, ec] = std::from_chars(spelled.data(), spelled.data() + spelled.size(), n.integer);
    if (ec != std::errc() || p != spelled.data() + spelled.size()) fail(start, "integer out of range");
    n.is_integer = true;
  }
  auto [p, ec] = std::from_chars(spelled.data(), spelled.data() + spelled.size(), n.real);
  if (ec != std::errc() || p != spelled.data() + spelled.size()) fail(start, "malformed number");
  pos_ = end;
  if (pos_ < text_.size() && text_[pos_] == 'j') {
    ++pos_;
    n.is_complex = true;
    n.is_integer = false;
    n.imag = n.real;
    n.real = 0.0;
  }
  if (pos_ < text_.size() && is_ident_char(text_[pos_])) fail(pos_, "malformed number");
  return n;
}

std::string SchemaLexer::string_literal() {
  const size_t start = skip_ws();
  const char quote = text_[pos_++];
  std::string out;
  for (;;) {
    if (pos_ >= text_.size()) fail(start, "unterminated string literal");
    char c = text_[pos_++];
    if (c == quote) return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= text_.size()) fail(start, "unterminated string literal");
    const size_t escape_at = pos_ - 1;
    c = text_[pos_++];
    switch (c) {
      case '\\': case '"': case '\'': out += c; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      default: {
        if (c < '0' || c > '7') fail(escape_at, "unknown escape sequence");
        int value = c - '0';
        for (int i = 0; i < 2 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7'; ++i) {
          value = value * 8 + (text_[pos_++] - '0');
        }
        if (value > 0xff) fail(escape_at, "octal escape out of range");
        out += static_cast<char>(value);
      }
    }
  }
}
}  // namespace c10::inline tessera::schema_detail
