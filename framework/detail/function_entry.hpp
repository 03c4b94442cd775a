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

  /// "int(int, std::string)".
  std::string signature() const;
};

/// Checks that `args` suit `params`; returns an error naming `what` and the first
/// mismatched argument otherwise.
result<void> check_arguments(const std::string& what,
                             const std::vector<const type_descriptor*>& params,
                             const std::vector<task_arg>& args);

} // namespace swarm::detail
