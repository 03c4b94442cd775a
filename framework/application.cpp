#include "framework/application.hpp"

namespace swarm {

namespace {

std::string names_of(const std::vector<const detail::type_descriptor*>& types) {
  std::string out;
  for (auto* t : types) {
    if (!out.empty()) out += ", ";
    out += t->name;
  }
  return out;
}

} // namespace

application::application() = default;

application::~application() = default;

const detail::function_entry&
application::add_function(std::unique_ptr<detail::function_entry> e) {
  if (e->name.empty())
    throw failure{{errc::invalid_argument, "function name must not be empty"}};
  auto [i, added] = functions_.emplace(e->name, nullptr);
  if (!added)
    throw failure{
        {errc::invalid_argument, "function '" + e->name + "' is already registered"}};
  i->second = std::move(e);
  return *i->second;
}

detail::actor_type_info& application::add_actor_type(std::string name,
                                                     const std::type_info& type) {
  if (name.empty())
    throw failure{{errc::invalid_argument, "actor type name must not be empty"}};
  auto [i, added] = actor_types_.emplace(name, nullptr);
  if (!added)
    throw failure{
        {errc::invalid_argument, "actor type '" + name + "' is already registered"}};
  i->second = std::make_unique<detail::actor_type_info>();
  i->second->name = std::move(name);
  i->second->type = &type;
  return *i->second;
}

result<detail::actor_type_info*>
application::find_actor_info(const std::string& name, const std::type_info& type) const {
  auto i = actor_types_.find(name);
  if (i == actor_types_.end())
    return error{errc::unregistered, "no actor type named '" + name + "' is registered"};
  if (*i->second->type != type)
    return error{errc::type_mismatch, "actor type '" + name + "' is a " +
                                          detail::demangle(i->second->type->name()) +
                                          ", not a " + detail::demangle(type.name())};
  return i->second.get();
}

const detail::actor_type_info* application::actor_info(const std::string& name) const {
  auto i = actor_types_.find(name);
  return i == actor_types_.end() ? nullptr : i->second.get();
}

result<const detail::function_entry*>
application::find_entry(const std::string& name) const {
  auto i = functions_.find(name);
  if (i != functions_.end())
    return static_cast<const detail::function_entry*>(i->second.get());
  std::string known;
  for (auto& [n, e] : functions_)
    known += (known.empty() ? "" : ", ") + n;
  return error{errc::unregistered,
               "no function named '" + name + "' is registered" +
                   (known.empty() ? "" : " (registered: " + known + ")")};
}

std::vector<std::string> application::function_names() const {
  std::vector<std::string> out;
  for (auto& [name, e] : functions_)
    out.push_back(name);
  return out;
}

std::vector<std::string> application::actor_type_names() const {
  std::vector<std::string> out;
  for (auto& [name, info] : actor_types_)
    out.push_back(name);
  return out;
}

bool application::has_actor_type(const std::string& name) const {
  return actor_types_.count(name) > 0;
}

result<void>
application::check_signature(const detail::function_entry& e,
                             const std::vector<const detail::type_descriptor*>& params,
                             const detail::type_descriptor* res, bool stream) {
  auto* has = stream ? e.stream_item : e.result;
  bool same = params.size() == e.params.size() && (e.stream_item != nullptr) == stream &&
              detail::same_type(*res, *has);
  for (size_t i = 0; same && i < params.size(); ++i)
    same = detail::same_type(*params[i], *e.params[i]);
  if (same) return {};
  auto want = stream ? "stream<" + res->name + ">" : res->name;
  return error{errc::type_mismatch, "function '" + e.name + "' has signature " +
                                        e.signature() + ", not " + want + "(" +
                                        names_of(params) + ")"};
}

} // namespace swarm

namespace swarm::detail {

std::string function_entry::signature() const {
  auto gives = stream_item ? "stream<" + stream_item->name + ">" : result->name;
  return gives + "(" + names_of(params) + ")";
}

std::string actor_type_info::signature() const {
  std::string out;
  for (auto& c : constructors)
    out += (out.empty() ? "" : ", ") + std::string{"("} + names_of(c.params) + ")";
  out += ";";
  for (auto& m : methods)
    out += " " + m.name + ": " + m.result->name + "(" + names_of(m.params) + ")";
  return out;
}

result<void> check_arguments(const char* kind, const std::string& name,
                             const std::vector<const type_descriptor*>& params,
                             const std::vector<task_arg>& args) {
  // The message is built only on failure: this runs for every call.
  auto what = [&] { return std::string{kind} + " '" + name + "'"; };
  if (params.size() != args.size())
    return error{errc::type_mismatch, what() + " takes " + std::to_string(params.size()) +
                                          " argument(s), got " +
                                          std::to_string(args.size())};
  for (size_t i = 0; i < args.size(); ++i) {
    auto* actual = args[i].value.type;
    if (actual != nullptr && !same_type(*actual, *params[i]))
      return error{errc::type_mismatch, what() + " argument " + std::to_string(i + 1) +
                                            ": expected " + params[i]->name + ", got " +
                                            actual->name};
  }
  return {};
}

} // namespace swarm::detail
