// Names and comments as the generated C++ writes them.

#include "transport/codegen/generator.hpp"

#include <cctype>
#include <sstream>
#include <stdexcept>

namespace swarm::codegen {

[[noreturn]] void fail(const std::string& why) {
  throw std::runtime_error(why);
}

std::string snake(const std::string& camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    auto c = static_cast<unsigned char>(camel[i]);
    if (std::isupper(c)) {
      if (i > 0) out += '_';
      out += static_cast<char>(std::tolower(c));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string upper_snake(const std::string& camel) {
  auto s = snake(camel);
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string cap(const std::string& s) {
  auto out = s;
  if (!out.empty())
    out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string short_name(capnp::Schema s) {
  std::string d = s.getProto().getDisplayName().cStr();
  return d.substr(s.getProto().getDisplayNamePrefixLength());
}

std::string doc_lines(const std::string& text, const std::string& indent) {
  std::string out;
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    auto start = line.find_first_not_of(' ');
    out += indent + "///" + (start == std::string::npos ? "" : " " + line.substr(start)) +
           "\n";
  }
  return out;
}

} // namespace swarm::codegen
