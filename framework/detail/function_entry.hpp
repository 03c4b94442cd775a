#pragma once

#include <string>
#include <vector>

#include "framework/detail/task_spec.hpp"
#include "framework/detail/type_descriptor.hpp"

namespace swarm::detail {

/// A registered task function with its signature.
struct function_entry {
  std::string name;
  std::vector<const type_descriptor*> params;
  const type_descriptor* result = nullptr;
  invoker fn;
  /// A streaming function's items (its result is how many it wrote); null otherwise.
  const type_descriptor* stream_item = nullptr;

  /// "int(int, std::string)".
  std::string signature() const;
};

/// Checks that `args` suit `params` in number and, for values, in type; an error naming
/// the `kind` ("task", "method of actor") and `name` and the first mismatch otherwise.
/// Futures are checked when the call runs, once their values exist.
result<void> check_arguments(const char* kind, const std::string& name,
                             const std::vector<const type_descriptor*>& params,
                             const std::vector<task_arg>& args);

} // namespace swarm::detail
