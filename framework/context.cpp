#include "framework/context.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "base/node_log.hpp"

namespace swarm {

namespace detail {

core::~core() = default;

void core::job_event(uint64_t, bool) {}

namespace {
error no_groups(const core& c) {
  return {errc::invalid_argument,
          "node '" + c.node_name() + "' does not keep placement groups"};
}
} // namespace

result<void> core::create_group(uint64_t, const placement_group_options&) {
  return no_groups(*this);
}

result<group_placement> core::wait_group(uint64_t, std::chrono::milliseconds) {
  return no_groups(*this);
}

result<void> core::remove_group(uint64_t) {
  return no_groups(*this);
}

result<slot_ptr> core::borrow(const object_id& id, const type_descriptor&) {
  return error{errc::invalid_argument, "node '" + node_name() +
                                           "' read a ref of object " + id.to_string() +
                                           ": an embedded single node reads no refs"};
}

void core::output(const task_spec* task, std::string_view text) {
  print_output(task ? output_label(*task) : std::string{}, node_name(), text);
}

std::string output_label(const task_spec& task) {
  return task.method.empty() ? task.name : task.name + "." + task.method;
}

void print_output(const std::string& function, const std::string& node,
                  std::string_view text) {
  auto prefix =
      "(" + (function.empty() ? std::string{} : function + " on ") + node + ") ";
  std::string lines;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    lines += prefix;
    lines.append(line.data(), line.size());
    lines += '\n';
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  // One write per call: lines of concurrent tasks do not interleave mid-line.
  std::fwrite(lines.data(), 1, lines.size(), stdout);
  std::fflush(stdout);
}

void core::warn(const std::string& line) const {
  node_log{node_name(), log_level::info}.warn(line);
}

const std::string& core::node_name() const {
  static const std::string local = "local";
  return local;
}

result<void> core::feasible(const resource_set& demand, const std::string& node,
                            const std::string& /*function: registered here*/) {
  if (!node.empty())
    return error{errc::infeasible, "no node named '" + node +
                                       "': this runtime is a single node, not a cluster"};
  const auto& total = total_resources();
  if (demand.fits_in(total)) return {};
  return error{errc::infeasible, "demands " + demand.to_string() + " but node '" +
                                     node_name() + "' has only " + total.to_string()};
}

group_record::~group_record() = default;

actor_record::~actor_record() = default;

std::string actor_record::remote_node() const {
  return {};
}

object_slot::clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  auto now = object_slot::clock::now();
  if (timeout == forever || timeout > std::chrono::hours(24 * 365))
    return object_slot::clock::time_point::max();
  return now + timeout;
}

std::chrono::milliseconds remaining(object_slot::clock::time_point deadline) {
  if (deadline == object_slot::clock::time_point::max()) return forever;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - object_slot::clock::now());
  return std::max(left, std::chrono::milliseconds{0});
}

result<std::shared_ptr<const void>> read_slot(const object_slot& slot,
                                              const type_descriptor& expected,
                                              std::chrono::milliseconds timeout) {
  if (!slot.wait_until(deadline_after(timeout)))
    return error{errc::timeout, "object " + slot.id().to_string() + " not ready after " +
                                    std::to_string(timeout.count()) + " ms"};
  auto v = slot.read();
  if (!v) return v.err();
  if (!same_type(*v->type, expected))
    return error{errc::type_mismatch, "object " + slot.id().to_string() + " holds a " +
                                          v->type->name + ", read as " + expected.name};
  return v->ptr;
}

task_ptr make_task(core& c, uint64_t owner, std::string name,
                   std::vector<task_arg> args) {
  auto t = std::make_shared<task_spec>();
  t->name = std::move(name);
  t->args = std::move(args);
  t->owner = owner;
  t->result = std::make_shared<object_slot>(c.new_object_id(owner));
  t->result->set_producer(t);
  return t;
}

slot_ptr send_actor_call(core& c, actor_record& target, task_ptr call) {
  call->actor_call = true;
  auto slot = call->result;
  if (auto ok = check_arguments("method of actor", target.spec().type_name, call->params,
                                call->args);
      !ok) {
    slot->set_error(ok.err());
    return slot;
  }
  if (target.dead() && !target.moved()) {
    slot->set_error({errc::actor_died, target.death_reason()});
    return slot;
  }
  c.call(target, std::move(call));
  return slot;
}

slot_ptr
gather_slots(core& c, uint64_t owner, std::vector<slot_ptr> inputs,
             std::function<boxed_value(const std::vector<boxed_value>&)> combine) {
  auto out = std::make_shared<object_slot>(c.new_object_id(owner));
  struct gathering {
    std::vector<slot_ptr> inputs;
    std::function<boxed_value(const std::vector<boxed_value>&)> combine;
    std::atomic<size_t> left;
  };
  auto g = std::make_shared<gathering>();
  g->inputs = std::move(inputs);
  g->combine = std::move(combine);
  g->left = g->inputs.size() + 1; // one more for this thread, so it finishes last
  auto finish = [g, out, node = &c] {
    if (g->left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::vector<boxed_value> values;
    values.reserve(g->inputs.size());
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      auto v = g->inputs[i]->read();
      if (!v) {
        out->set_error(
            {errc::dependency_failed, "gathering " + std::to_string(g->inputs.size()) +
                                          " futures: " + "input " + std::to_string(i) +
                                          " (" + g->inputs[i]->id().to_string() +
                                          ") failed: " + v.err().to_string()});
        return;
      }
      values.push_back(std::move(*v));
    }
    auto value = g->combine(values);
    auto lease = node->admit(out->id(), value);
    if (!lease)
      out->set_error(lease.err());
    else
      out->set_value(std::move(value), std::move(*lease));
  };
  for (auto& in : g->inputs)
    in->when_done(finish);
  finish();
  return out;
}

namespace {

// Submits `t` once every future among its arguments is ready; fails it when one failed.
void submit_when_ready(core& c, task_ptr t) {
  struct pending_deps {
    std::atomic<size_t> count;
  };
  std::vector<object_slot*> unresolved;
  for (auto& a : t->args)
    if (a.ref && !a.ref->done()) unresolved.push_back(a.ref.get());
  auto finish = [&c](const task_ptr& task) {
    for (auto& a : task->args) {
      if (!a.ref || a.ref->current() == object_slot::state::ready) continue;
      auto v = a.ref->read();
      task->result->set_error(
          {errc::dependency_failed, "argument " + a.ref->id().to_string() + " of task '" +
                                        task->name + "' failed: " + v.err().to_string()});
      return;
    }
    if (auto ok = check_arguments("task", task->name, task->params, task->args); !ok) {
      task->result->set_error(ok.err());
      return;
    }
    c.submit(task);
  };
  if (unresolved.empty()) {
    finish(t);
    return;
  }
  // Exactly the slots counted get a callback; one that completed meanwhile runs it at
  // once.
  auto deps = std::make_shared<pending_deps>();
  deps->count = unresolved.size();
  for (auto* slot : unresolved)
    slot->when_done([deps, t, finish] {
      if (deps->count.fetch_sub(1) == 1) finish(t);
    });
}

} // namespace

} // namespace detail

namespace {

result<void> check_kv_key(const std::string& key) {
  if (key.empty() || key.size() > 1024)
    return error{errc::invalid_argument, "a key-value key must be 1-1024 bytes, got " +
                                             std::to_string(key.size())};
  return {};
}

} // namespace

void context::print(std::string_view text) {
  core_->output(running_, text);
}

result<void> context::kv_put(const std::string& key, std::vector<uint8_t> value) {
  if (auto ok = check_kv_key(key); !ok) return ok;
  auto r = core_->kv(detail::kv_op::put, key, std::move(value));
  if (!r) return r.err();
  return {};
}

result<std::optional<std::vector<uint8_t>>> context::kv_get(const std::string& key) {
  if (auto ok = check_kv_key(key); !ok) return ok.err();
  return core_->kv(detail::kv_op::get, key, {});
}

namespace {

std::string durable_key(const std::string& name) {
  return "durable/" + name;
}

} // namespace

result<void> context::put_durable_erased(const std::string& name,
                                         const detail::boxed_value& v) {
  // The type's name, then the value's encoding: a reader checks what it decodes.
  auto& type_name = v.type->name;
  std::vector<uint8_t> bytes;
  bytes.reserve(4 + type_name.size());
  for (size_t i = 0; i < 4; ++i)
    bytes.push_back(static_cast<uint8_t>(type_name.size() >> (8 * i)));
  for (char c : type_name)
    bytes.push_back(static_cast<uint8_t>(c));
  // A durable value outlives every owner: a ref in it would name an object gone later.
  detail::ref_counter refs{nullptr};
  v.type->encode(v.ptr.get(), bytes, &refs);
  if (refs.count() > 0)
    return error{errc::invalid_argument, "the durable object '" + name + "' (a " +
                                             type_name + ") holds " +
                                             std::to_string(refs.count()) +
                                             " object ref(s): a durable value cannot"};
  return kv_put(durable_key(name), std::move(bytes));
}

result<std::shared_ptr<const void>>
context::get_durable_erased(const std::string& name, const detail::type_descriptor& t) {
  auto got = kv_get(durable_key(name));
  if (!got) return got.err();
  if (!*got)
    return error{errc::object_freed,
                 "no durable object is named '" + name + "' (never put, or freed)"};
  auto& bytes = **got;
  size_t len = 0;
  for (size_t i = 0; i < 4 && i < bytes.size(); ++i)
    len |= static_cast<size_t>(bytes[i]) << (8 * i);
  if (bytes.size() < 4 || bytes.size() - 4 < len)
    return error{errc::invalid_argument,
                 "durable object '" + name + "' is damaged: its type name runs past it"};
  std::string stored{bytes.begin() + 4, bytes.begin() + 4 + static_cast<long>(len)};
  if (stored != t.name)
    return error{errc::type_mismatch,
                 "durable object '" + name + "' holds a " + stored + ", not a " + t.name};
  std::string why;
  auto v = t.decode(bytes.data() + 4 + len, bytes.size() - 4 - len, why, core_);
  if (!v)
    return error{errc::invalid_argument, "durable object '" + name +
                                             "' does not decode as a " + t.name + ": " +
                                             why};
  return v;
}

result<void> context::free_durable(const std::string& name) {
  return kv_erase(durable_key(name));
}

result<void> context::kv_erase(const std::string& key) {
  if (auto ok = check_kv_key(key); !ok) return ok;
  auto r = core_->kv(detail::kv_op::erase, key, {});
  if (!r) return r.err();
  return {};
}

detail::slot_ptr context::submit_erased(const detail::function_entry& f,
                                        const task_options& opts,
                                        std::vector<detail::task_arg> args,
                                        std::shared_ptr<detail::stream_channel> stream) {
  auto t = detail::make_task(*core_, owner_, f.name, std::move(args));
  t->fn = &f.fn;
  t->params = f.params;
  t->result_type = f.result;
  t->result->spin_before_sleeping();
  t->options = opts;
  if (t->options.job.empty() && running_ != nullptr) { // work of a job stays in it
    t->options.job = running_->options.job;
    t->options.job_share = running_->options.job_share;
  }
  if (stream) {
    t->options.redundancy = 1; // items come from one run
    t->stream = stream;
    t->reader = std::move(stream);
  }
  auto slot = t->result;
  if (!(opts.job_share > 0)) {
    slot->set_error({errc::invalid_argument, "task '" + f.name +
                                                 "': job_share must be above zero, got " +
                                                 std::to_string(opts.job_share)});
    return slot;
  }
  if (opts.bundle.group != 0) {
    auto node = bundle_node(opts.bundle, opts.resources);
    if (!node) {
      slot->set_error({node.err().code, "task '" + f.name + "': " + node.err().message});
      return slot;
    }
    t->options.node = *node;
  }
  if (auto ok = core_->feasible(opts.resources, t->options.node, f.name); !ok) {
    slot->set_error({ok.err().code, "task '" + f.name + "': " + ok.err().message});
    return slot;
  }
  detail::submit_when_ready(*core_, std::move(t));
  return slot;
}

detail::slot_ptr context::call_erased(const std::string& name,
                                      const detail::type_descriptor* result_type,
                                      std::vector<detail::task_arg> args) {
  auto e = core_->app().find_entry(name);
  if (!e || !detail::same_type(*(*e)->result, *result_type)) {
    auto slot = std::make_shared<detail::object_slot>(core_->new_object_id(owner_));
    slot->set_error(e ? error{errc::type_mismatch, "function '" + name + "' returns " +
                                                       (*e)->result->name + ", not " +
                                                       result_type->name}
                      : e.err());
    return slot;
  }
  return submit_erased(**e, task_options{}, std::move(args));
}

detail::slot_ptr context::when_any_erased(std::vector<detail::slot_ptr> inputs) {
  auto out = std::make_shared<detail::object_slot>(core_->new_object_id(owner_));
  if (inputs.empty()) {
    out->set_error({errc::invalid_argument, "when_any of no futures"});
    return out;
  }
  // The first input done sets it; the others' callbacks find it done.
  auto won = std::make_shared<std::atomic<bool>>(false);
  for (uint64_t i = 0; i < inputs.size(); ++i)
    inputs[i]->when_done([won, out, i] {
      if (!won->exchange(true)) out->set_value(detail::boxed_value::make(i));
    });
  return out;
}

detail::slot_ptr context::then_erased(detail::slot_ptr input,
                                      const detail::type_descriptor* param,
                                      const detail::type_descriptor* result,
                                      detail::invoker fn, task_options opts) {
  auto name = "then " + input->id().to_string();
  auto t = detail::make_task(*core_, owner_, std::move(name),
                             {detail::task_arg{{}, std::move(input)}});
  t->own_fn = std::move(fn);
  t->fn = &t->own_fn;
  t->params = {param};
  t->result_type = result;
  // Code that exists only in this process runs here.
  if (core_->cluster()) opts.node = core_->node_name();
  opts.redundancy = 1;
  t->options = std::move(opts);
  auto slot = t->result;
  detail::submit_when_ready(*core_, std::move(t));
  return slot;
}

detail::slot_ptr context::put_erased(detail::boxed_value v) {
  auto slot = std::make_shared<detail::object_slot>(core_->new_object_id(owner_));
  auto lease = core_->admit(slot->id(), v);
  if (!lease) throw failure{lease.err()};
  slot->set_value(std::move(v), std::move(*lease));
  return slot;
}

result<void> context::write_erased(uint64_t seq, detail::boxed_value v) {
  if (running_ == nullptr || !running_->stream)
    return error{errc::invalid_argument,
                 "a stream_writer was written outside the streaming task or call it was "
                 "made for"};
  return running_->stream->write(seq, std::move(v), running_->cancel_requested);
}

bool context::cancel_slot(const detail::slot_ptr& slot, bool force) {
  if (!slot) return false;
  auto task = slot->producer();
  if (!task || !core_->cancel(*task)) return false;
  if (force)
    slot->set_error({errc::cancelled,
                     "task '" + task->name + "' was cancelled (forced) while it ran"});
  return true;
}

actor_group context::supervise(const supervisor_spec& spec) {
  auto rec = core_->supervise(spec.spec());
  if (!rec) throw failure{rec.err()};
  return actor_group{*core_, std::move(*rec)};
}

result<placement_group> context::create_placement_group(placement_group_options opts) {
  auto id = core_->new_owner_id();
  if (auto ok = core_->create_group(id, opts); !ok) return ok.err();
  return placement_group{*core_, id, std::move(opts)};
}

result<void> context::remove_placement_group(const placement_group& g) {
  if (!g.valid())
    return error{errc::invalid_argument, "remove of an empty placement_group"};
  return core_->remove_group(g.id());
}

result<std::string> context::bundle_node(const bundle_ref& bundle,
                                         const resource_set& demand) {
  auto at = core_->wait_group(bundle.group, std::chrono::milliseconds{0});
  if (!at) return at.err();
  if (bundle.index >= at->nodes.size())
    return error{errc::invalid_argument,
                 "placement group " + std::to_string(bundle.group) + " has " +
                     std::to_string(at->nodes.size()) + " bundles, not a bundle " +
                     std::to_string(bundle.index)};
  auto& holds = at->bundles[bundle.index];
  if (!demand.fits_in(holds))
    return error{errc::infeasible,
                 "demands " + demand.to_string() + " but bundle " +
                     std::to_string(bundle.index) + " of placement group " +
                     std::to_string(bundle.group) + " holds " + holds.to_string()};
  // An embedded node is the whole cluster: it takes no node name.
  if (!core_->cluster()) return std::string{};
  return at->nodes[bundle.index];
}

detail::actor_record_ptr context::spawn_erased(detail::actor_spec spec) {
  auto failed = [&spec](const error& e) {
    auto rec = std::make_shared<detail::actor_record>(spec);
    rec->mark_dead("actor of type '" + spec.type_name +
                   "' could not be created: " + e.to_string());
    return rec;
  };
  if (!core_->app().has_actor_type(spec.type_name))
    return failed(
        {errc::unregistered, "actor type '" + spec.type_name + "' is not registered"});
  if (spec.options.bundle.group != 0) {
    auto node = bundle_node(spec.options.bundle, spec.options.resources);
    if (!node) return failed(node.err());
    spec.options.node = *node;
  }
  if (auto ok = core_->feasible(spec.options.resources, spec.options.node); !ok)
    return failed(ok.err());
  auto& name = spec.options.name;
  if (spec.options.durable_checkpoints) {
    if (name.empty() || spec.options.checkpoint_every == 0)
      return failed({errc::invalid_argument,
                     "durable_checkpoints needs a name to keep them under and a "
                     "checkpoint_every to make them"});
    auto saved = kv_get(detail::durable_checkpoint_key(name));
    if (!saved) return failed(saved.err());
    if (*saved) spec.checkpoint = std::move(**saved);
  }
  auto copy = spec;
  auto rec = core_->spawn(std::move(copy));
  if (!rec) return failed(rec.err());
  return std::move(*rec);
}

namespace {

std::string list_ids(const std::vector<uint32_t>& ids) {
  std::string out;
  for (auto id : ids)
    out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out.empty() ? "none" : out;
}

} // namespace

result<uint32_t> context::task_device(int device, const char* what) const {
  if (!gpus_.empty() && !core_->devices())
    return error{errc::invalid_argument,
                 std::string{what} + ": node '" + core_->node_name() +
                     "' runs no GPU backend (its GPU count is a plain resource: see "
                     "runtime_config::gpu_backend)"};
  if (gpus_.empty())
    return error{errc::invalid_argument,
                 std::string{what} + " on node '" + core_->node_name() +
                     "' outside a task given GPUs: submit it with a GPU demand "
                     "(task_options::resources)"};
  if (device < 0) return gpus_.front();
  for (auto id : gpus_)
    if (id == static_cast<uint32_t>(device)) return id;
  return error{errc::invalid_argument,
               std::string{what} + ": device " + std::to_string(device) +
                   " is not one of this task's GPUs (" + list_ids(gpus_) + ")"};
}

result<device_buffer> context::device_alloc(size_t bytes, std::chrono::milliseconds wait,
                                            int device) {
  auto dev = task_device(device, "device_alloc");
  if (!dev) return dev.err();
  auto mem = core_->devices();
  auto block = mem->allocate(*dev, bytes, std::chrono::milliseconds{0});
  if (!block && block.err().code == errc::device_out_of_memory && wait.count() > 0) {
    // It waits for other work's buffers: its CPU and devices are lent meanwhile.
    detail::blocked_section waiting;
    block = mem->allocate(*dev, bytes, wait);
  }
  if (!block) return block.err();
  return device_buffer{std::move(*block)};
}

result<device_buffer> context::to_device(const void* data, size_t bytes, int device) {
  auto b = device_alloc(bytes, std::chrono::seconds(10), device);
  if (!b) return b;
  if (bytes > 0)
    if (auto ok = core_->devices()->from_host(*b->block(), 0, data, bytes, owner_); !ok)
      return ok.err();
  return b;
}

result<device_buffer> context::on_device(const device_buffer& b, int device) {
  auto dev = task_device(device, "on_device");
  if (!dev) return dev.err();
  if (!b.lost().empty())
    return error{errc::object_lost,
                 "device buffer of " + std::to_string(b.size()) + " bytes: " + b.lost()};
  auto& from = b.block();
  if (from && from->device == *dev) {
    if (auto ok = from->memory->holds(*from); !ok) return ok.err();
    return b;
  }
  // Written to this device as its bytes arrived: the first reader here takes it.
  if (auto landed = b.take_landed(*dev); landed && landed->memory->holds(*landed))
    return device_buffer{std::move(landed)};
  auto out = device_alloc(b.size(), std::chrono::seconds(10), static_cast<int>(*dev));
  if (!out || b.size() == 0) return out;
  auto mem = core_->devices();
  if (from) {
    if (auto ok = mem->copy(*out->block(), *from, owner_); !ok) return ok.err();
    return out;
  }
  auto host = b.host_bytes();
  if (!host) return host.err();
  if (auto ok = mem->from_host(*out->block(), 0, host->get(), b.size(), owner_); !ok)
    return ok.err();
  return out;
}

void* context::gpu_stream(int device) const {
  auto dev = task_device(device, "gpu_stream");
  return dev ? core_->devices()->stream(*dev, owner_) : nullptr;
}

const char* context::gpu_backend() const {
  auto mem = core_->devices();
  return mem ? mem->backend() : "";
}

} // namespace swarm
