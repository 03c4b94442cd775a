#include "actors/workers/call_executor.hpp"

#include <vector>

#include "framework/detail/device_memory.hpp"

namespace swarm::actors {

call_outcome execute_call(detail::task_spec& task, void* self, context& ctx) {
  call_outcome out;
  // Holds every argument value alive while user code reads it.
  std::vector<detail::boxed_value> held;
  std::vector<const void*> ptrs;
  held.reserve(task.args.size());
  ptrs.reserve(task.args.size());
  for (size_t i = 0; i < task.args.size(); ++i) {
    auto& a = task.args[i];
    if (!a.ref) {
      held.push_back(a.value);
    } else {
      auto v = a.ref->read();
      if (!v) {
        out.what = call_outcome::kind::error;
        out.err = {errc::dependency_failed, "argument " + std::to_string(i + 1) + " (" +
                                                a.ref->id().to_string() + ") of '" +
                                                task.name + "': " + v.err().to_string()};
        return out;
      }
      held.push_back(std::move(*v));
    }
    if (!detail::same_type(*held.back().type, *task.params[i])) {
      out.what = call_outcome::kind::error;
      out.err = {errc::type_mismatch,
                 "'" + task.name + "' argument " + std::to_string(i + 1) + ": expected " +
                     task.params[i]->name + ", got " + held.back().type->name};
      return out;
    }
    ptrs.push_back(held.back().ptr.get());
  }
  // What the call prints goes where it was asked for.
  ctx.set_running(&task);
  struct not_running {
    context& c;
    ~not_running() { c.set_running(nullptr); }
  } reset{ctx};
  // Reads of device buffers in the call go on the call's own stream.
  detail::gpu_slot_scope on_own_stream{ctx.gpu_ids().empty() ? 0 : ctx.owner_id()};
  try {
    out.value = (*task.fn)(self, ctx, ptrs.data());
  } catch (const actor_failure& e) {
    out.what = call_outcome::kind::crash;
    out.err = {errc::actor_died, "actor '" + task.name + "' crashed: " + e.what()};
  } catch (const failure& e) {
    out.what = call_outcome::kind::error;
    out.err = e.err();
  } catch (const std::exception& e) {
    out.what = call_outcome::kind::error;
    out.err = {errc::application_error, "'" + task.name + "' threw: " + e.what()};
  } catch (...) {
    out.what = call_outcome::kind::error;
    out.err = {errc::application_error,
               "'" + task.name + "' threw a non-standard exception"};
  }
  return out;
}

namespace {

void store(detail::core& node, detail::object_slot& result, detail::boxed_value value) {
  auto lease = node.admit(result.id(), value);
  if (!lease) {
    result.set_error(lease.err());
    return;
  }
  result.set_value(std::move(value), std::move(*lease));
}

} // namespace

void begin_on_devices(detail::core& node, const context& ctx) {
  if (ctx.gpu_ids().empty()) return;
  if (auto devices = node.devices()) devices->make_current(ctx.gpu_ids().front());
}

void finish_on_devices(detail::core& node, const context& ctx, call_outcome& outcome) {
  if (ctx.gpu_ids().empty()) return;
  auto devices = node.devices();
  if (!devices) return;
  for (auto id : ctx.gpu_ids())
    if (auto ok = devices->finish(id, ctx.owner_id());
        !ok && outcome.what != call_outcome::kind::error) {
      outcome.what = call_outcome::kind::error;
      outcome.err = ok.err();
    }
}

void publish(detail::core& node, detail::task_spec& task, call_outcome outcome) {
  if (outcome.what != call_outcome::kind::value) {
    task.result->set_error(std::move(outcome.err));
    return;
  }
  auto* fwd = detail::forwarded_from(outcome.value);
  if (!fwd) return store(node, *task.result, std::move(outcome.value));
  // It returned a future: its result is that future's, once it is done. Nothing waits.
  task.forwarded = true;
  fwd->from->when_done([&node, from = fwd->from, result = task.result, name = task.name] {
    auto v = from->read();
    if (v) return store(node, *result, std::move(*v));
    auto e = v.err();
    e.message = "the future '" + name + "' returned failed: " + e.message;
    result->set_error(std::move(e));
  });
}

} // namespace swarm::actors
