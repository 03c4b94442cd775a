#include "framework/dynamic.hpp"

#include "framework/detail/make_arg.hpp"

namespace swarm {

namespace {

// The task arguments of `args`, each checked against `params` (a value's type, a
// future's type) so a mismatch is an error now, naming `kind` `name`, the argument and
// both types.
result<std::vector<detail::task_arg>>
checked_args(const char* kind, const std::string& name,
             const std::vector<const detail::type_descriptor*>& params,
             std::vector<dynamic_arg> args) {
  std::vector<detail::task_arg> out;
  out.reserve(args.size());
  for (auto& a : args)
    out.push_back({std::move(a.value), a.ref.slot()});
  if (auto ok = detail::check_arguments(kind, name, params, out); !ok) return ok.err();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].ref.valid() && !detail::same_type(args[i].ref.type(), *params[i]))
      return error{errc::type_mismatch, std::string{kind} + " '" + name + "' argument " +
                                            std::to_string(i + 1) + ": expected " +
                                            params[i]->name + ", got a future of " +
                                            args[i].ref.type().name};
  return out;
}

} // namespace

result<std::shared_ptr<const void>>
dynamic_ref::get(std::chrono::milliseconds timeout) const {
  if (!slot_) return error{errc::invalid_argument, "get on an empty ref"};
  return detail::read_slot(*slot_, *type_, timeout);
}

result<std::optional<dynamic_ref>>
dynamic_stream::next(std::chrono::milliseconds timeout) {
  if (!reader_) return error{errc::invalid_argument, "next on an empty stream"};
  auto slot = reader_->next(detail::deadline_after(timeout));
  if (!slot) return slot.err();
  if (!*slot) return std::optional<dynamic_ref>{};
  return std::optional<dynamic_ref>{dynamic_ref{std::move(**slot), item_}};
}

dynamic_ref dynamic_stream::done() const {
  return reader_ ? dynamic_ref{reader_->task_result, &detail::type_of<uint64_t>()}
                 : dynamic_ref{};
}

void dynamic_stream::cancel() {
  if (reader_) reader_->stop();
}

bool dynamic_actor::alive() const {
  return record_ && !record_->dead();
}

std::string dynamic_actor::death_reason() const {
  return record_ ? record_->death_reason() : "empty handle";
}

result<const detail::function_entry*>
dynamic_calls::function(const std::string& name) const {
  return ctx_->app().find_entry(name);
}

result<const detail::actor_type_info*>
dynamic_calls::actor_type(const std::string& name) const {
  auto* info = ctx_->app().actor_info(name);
  if (info == nullptr)
    return error{errc::unregistered, "actor type '" + name + "' is not registered"};
  return info;
}

result<dynamic_ref> dynamic_calls::submit(const detail::function_entry& f,
                                          const task_options& opts,
                                          std::vector<dynamic_arg> args) {
  if (f.stream_item != nullptr)
    return error{errc::invalid_argument,
                 "'" + f.name +
                     "' is a streaming function: drivers in other languages "
                     "cannot read streams yet"};
  auto checked = checked_args("task", f.name, f.params, std::move(args));
  if (!checked) return checked.err();
  return dynamic_ref{ctx_->submit_erased(f, opts, std::move(*checked)), f.result};
}

std::shared_ptr<detail::stream_channel>
dynamic_calls::channel(const detail::type_descriptor* item, size_t window) {
  auto& node = *ctx_->core_;
  return std::make_shared<detail::stream_channel>(&node, node.new_owner_id(), window,
                                                  item);
}

result<dynamic_stream> dynamic_calls::submit_stream(const detail::function_entry& f,
                                                    const task_options& opts,
                                                    std::vector<dynamic_arg> args) {
  if (f.stream_item == nullptr)
    return error{errc::invalid_argument,
                 "'" + f.name + "' is no streaming function: call it with submit"};
  auto checked = checked_args("task", f.name, f.params, std::move(args));
  if (!checked) return checked.err();
  auto ch = channel(f.stream_item, opts.stream_window);
  auto slot = ctx_->submit_erased(f, opts, std::move(*checked), ch);
  return dynamic_stream{std::make_shared<detail::stream_reader>(
                            *ctx_->core_, std::move(slot), std::move(ch)),
                        f.stream_item};
}

dynamic_ref dynamic_calls::put(detail::boxed_value v) {
  auto* type = v.type;
  return {ctx_->put_erased(std::move(v)), type};
}

result<dynamic_actor> dynamic_calls::spawn(const detail::actor_type_info& type,
                                           const actor_options& opts,
                                           std::vector<detail::boxed_value> args) {
  const detail::constructor_entry* ctor = nullptr;
  for (auto& c : type.constructors) {
    bool fits = c.params.size() == args.size();
    for (size_t i = 0; fits && i < args.size(); ++i)
      fits = detail::same_type(*c.params[i], *args[i].type);
    if (fits) {
      ctor = &c;
      break;
    }
  }
  if (ctor == nullptr) {
    std::string got;
    for (auto& a : args)
      got += (got.empty() ? "" : ", ") + a.type->name;
    return error{errc::type_mismatch, "actor type '" + type.name +
                                          "' has no constructor taking (" + got +
                                          "): it has " + type.signature()};
  }
  detail::actor_spec spec;
  spec.type_name = type.name;
  spec.options = opts;
  spec.owner = ctx_->owner_id();
  spec.constructor_args = args;
  spec.factory = [make = ctor->make, args = std::move(args)] { return make(args); };
  return dynamic_actor{ctx_->spawn_erased(std::move(spec)), &type};
}

result<detail::task_ptr> dynamic_calls::method_call(const dynamic_actor& a,
                                                    const detail::method_entry& m,
                                                    std::vector<dynamic_arg> args,
                                                    int32_t priority) {
  auto checked =
      checked_args("method", a.type().name + "." + m.name, m.params, std::move(args));
  if (!checked) return checked.err();
  auto& rec = *a.record();
  auto task = detail::make_task(*ctx_->core_, rec.spec().owner, rec.spec().type_name,
                                std::move(*checked));
  task->params = m.params;
  task->options.priority = priority;
  if (rec.calls_by_name()) task->method = m.name;
  task->own_fn = m.fn;
  task->fn = &task->own_fn;
  return task;
}

result<dynamic_ref> dynamic_calls::call(const dynamic_actor& a,
                                        const detail::method_entry& m,
                                        std::vector<dynamic_arg> args, int32_t priority) {
  if (m.stream_item != nullptr)
    return error{errc::invalid_argument,
                 "method '" + m.name + "' streams: read it with call_stream"};
  auto task = method_call(a, m, std::move(args), priority);
  if (!task) return task.err();
  (*task)->result_type = m.result;
  return dynamic_ref{detail::send_actor_call(*ctx_->core_, *a.record(), std::move(*task)),
                     m.result};
}

result<dynamic_stream> dynamic_calls::call_stream(const dynamic_actor& a,
                                                  const detail::method_entry& m,
                                                  std::vector<dynamic_arg> args,
                                                  uint32_t window, int32_t priority) {
  if (m.stream_item == nullptr)
    return error{errc::invalid_argument,
                 "method '" + m.name + "' does not stream: call it with call"};
  auto task = method_call(a, m, std::move(args), priority);
  if (!task) return task.err();
  auto ch = channel(m.stream_item, window);
  (*task)->result_type = &detail::type_of<uint64_t>();
  (*task)->stream = ch;
  (*task)->reader = ch;
  auto slot = detail::send_actor_call(*ctx_->core_, *a.record(), std::move(*task));
  return dynamic_stream{std::make_shared<detail::stream_reader>(
                            *ctx_->core_, std::move(slot), std::move(ch)),
                        m.stream_item};
}

bool dynamic_calls::cancel(const dynamic_ref& ref, bool force) {
  return ctx_->cancel_slot(ref.slot(), force);
}

std::vector<bool> dynamic_calls::wait(const std::vector<dynamic_ref>& refs, size_t k,
                                      std::chrono::milliseconds timeout) {
  std::vector<detail::object_slot*> slots;
  slots.reserve(refs.size());
  for (auto& r : refs)
    slots.push_back(r.slot().get());
  return detail::wait_for_slots(slots, k, detail::deadline_after(timeout));
}

void dynamic_calls::kill(const dynamic_actor& a, bool restart) {
  if (a.record()) ctx_->core_->kill(*a.record(), restart);
}

} // namespace swarm
