#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "framework/actor.hpp"
#include "framework/detail/task_spec.hpp"

namespace swarm::detail {

/// A method callable from other nodes: found by name there, by member pointer here.
struct method_entry {
  std::string name;
  std::string key; // the member pointer's bytes
  std::vector<const type_descriptor*> params;
  const type_descriptor* result = nullptr;
  invoker fn;
  /// A streaming method's items (its result is how many it wrote); null otherwise.
  const type_descriptor* stream_item = nullptr;
};

/// A constructor other nodes may create the actor with.
struct constructor_entry {
  std::vector<const type_descriptor*> params;
  std::function<std::unique_ptr<actor>(const std::vector<boxed_value>&)> make;
};

/// Everything registered about one actor type.
struct actor_type_info {
  std::string name;
  const std::type_info* type = nullptr;
  std::vector<method_entry> methods;
  std::vector<constructor_entry> constructors;

  const method_entry* find_method(const std::string& method_name) const {
    for (auto& m : methods)
      if (m.name == method_name) return &m;
    return nullptr;
  }

  /// Its constructors and methods as other nodes see them:
  /// "(int), (); add: int(int) get: int()".
  std::string signature() const;

  const method_entry* find_method_key(const std::string& k) const {
    for (auto& m : methods)
      if (m.key == k) return &m;
    return nullptr;
  }
};

/// The bytes of a member pointer, comparable within one process.
template <class M> std::string member_key(M m) {
  std::string k(sizeof(M), '\0');
  std::memcpy(k.data(), &m, sizeof(M));
  return k;
}

} // namespace swarm::detail
