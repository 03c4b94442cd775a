#include "framework/detail/type_descriptor.hpp"

#include <cstdlib>
#include <cxxabi.h>

namespace swarm::detail {

std::string demangle(const char* mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return mangled;
  std::string result{out};
  std::free(out);
  // std::string reads better than its expansion in error messages.
  const std::string long_string =
      "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";
  for (auto pos = result.find(long_string); pos != std::string::npos;
       pos = result.find(long_string, pos))
    result.replace(pos, long_string.size(), "std::string");
  return result;
}

} // namespace swarm::detail
