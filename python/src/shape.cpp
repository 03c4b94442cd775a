#include "python/src/shape.hpp"

#include <stdexcept>

namespace swarm::python {

namespace {

class shape_parser {
public:
  explicit shape_parser(const std::string& text) : text_(text) {}

  shape parse_all() {
    auto s = parse();
    if (pos_ != text_.size()) fail("trailing characters");
    return s;
  }

private:
  [[noreturn]] void fail(const char* what) const {
    throw std::invalid_argument("malformed type shape '" + text_ + "' at " +
                                std::to_string(pos_) + ": " + what);
  }

  char next() {
    if (pos_ >= text_.size()) fail("it ends too soon");
    return text_[pos_++];
  }

  void expect(char c) {
    if (next() != c) fail("unexpected character");
  }

  size_t number() {
    size_t n = 0, digits = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      n = n * 10 + static_cast<size_t>(text_[pos_++] - '0');
      ++digits;
    }
    if (digits == 0) fail("a number was expected");
    return n;
  }

  shape parse() {
    shape s;
    s.kind = next();
    switch (s.kind) {
    case '?':
    case 's':
    case 'n':
    case 'x':
    case 'd':
      break;
    case 'i':
    case 'u':
    case 'f':
      s.bytes = number();
      break;
    case 'v':
    case 'o':
    case 'r':
      expect('<');
      s.items.push_back(parse());
      expect('>');
      break;
    case 'a':
      expect('<');
      s.count = number();
      expect(';');
      s.items.push_back(parse());
      expect('>');
      break;
    case 'm':
      expect('<');
      s.items.push_back(parse());
      expect(',');
      s.items.push_back(parse());
      expect('>');
      break;
    case 't':
      expect('<');
      if (pos_ < text_.size() && text_[pos_] == '>') {
        ++pos_;
        break;
      }
      for (;;) {
        s.items.push_back(parse());
        char c = next();
        if (c == '>') break;
        if (c != ',') fail("',' or '>' was expected");
      }
      break;
    default:
      --pos_;
      fail("unknown kind");
    }
    return s;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

} // namespace

bool shape::convertible() const {
  if (kind == 'x' || kind == 'r') return false;
  for (auto& i : items)
    if (!i.convertible()) return false;
  return true;
}

shape parse_shape(const std::string& text) {
  return shape_parser{text}.parse_all();
}

} // namespace swarm::python
