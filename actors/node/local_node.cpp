#include "actors/node/local_node.hpp"

#include <caf/all.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/workers/gpu_worker.hpp"
#include "actors/scheduling/local_scheduler.hpp"
#include "actors/scheduling/protocol.hpp"
#include "actors/common/node_stopped.hpp"
#include "actors/objects/object_store.hpp"
#include "framework/cluster.hpp"
#include "framework/detail/supervisor_actor.hpp"
#include "gpu/device_api.hpp"

namespace swarm::actors {

namespace {

constexpr auto request_timeout = std::chrono::seconds(10);
// How long each actor may take to hand over its recent calls for the timeline.
constexpr auto timeline_ask_timeout = std::chrono::seconds(1);
// How long each GPU worker may take to give its numbers to a scrape.
constexpr auto device_ask_timeout = std::chrono::seconds(1);

error bad_config(const std::string& key, const std::string& why) {
  return {errc::invalid_argument, "runtime_config." + key + ": " + why};
}

void validate(const runtime_config& cfg) {
  // 0: a node that runs no tasks (a client of a cluster).
  if (cfg.cpus && (!std::isfinite(*cfg.cpus) || *cfg.cpus < 0))
    throw failure{bad_config("cpus", "must be a number, 0 or more, got " +
                                         std::to_string(*cfg.cpus))};
  if (cfg.object_store_bytes && *cfg.object_store_bytes == 0)
    throw failure{bad_config("object_store_bytes", "must be positive")};
  if (cfg.max_workers && *cfg.max_workers == 0)
    throw failure{bad_config("max_workers", "must be positive")};
  if (cfg.gcs_shards == 0 || cfg.gcs_shards > 1024)
    throw failure{bad_config("gcs_shards",
                             "must be 1-1024, got " + std::to_string(cfg.gcs_shards))};
  if (cfg.scheduler_threads && *cfg.scheduler_threads == 0)
    throw failure{bad_config("scheduler_threads", "must be positive")};
  if (cfg.extra_resources.get("CPU") > 0)
    throw failure{bad_config("extra_resources", "CPU is set by runtime_config.cpus")};
}

// The GPU runtime `cfg` asks for; null for none. Sets `GPU` and `gpu_memory` of `total`
// from its devices where they are not given.
std::shared_ptr<gpu::device_api> open_gpus(const runtime_config& cfg,
                                           resource_set& total) {
  std::shared_ptr<gpu::device_api> api;
  double count = total.get("GPU");
  if (cfg.gpu_backend == "none") return nullptr;
  if (cfg.gpu_backend == "host") {
    if (count <= 0)
      throw failure{bad_config("gpu_backend",
                               "\"host\" simulates the GPUs of extra_resources, which "
                               "names none (set GPU)")};
    auto devices = static_cast<size_t>(std::ceil(count));
    double memory = total.get("gpu_memory");
    auto each = memory > 0 ? static_cast<size_t>(memory / static_cast<double>(devices))
                           : size_t{1} << 30;
    api = std::make_shared<gpu::host_device_api>(std::vector<size_t>(devices, each));
  } else if (cfg.gpu_backend.empty() || cfg.gpu_backend == "cuda") {
    api = gpu::make_cuda_api();
    if (!api && !cfg.gpu_backend.empty())
      throw failure{bad_config("gpu_backend",
                               gpu::built_with_cuda()
                                   ? "\"cuda\": the CUDA runtime finds no device here"
                                   : "\"cuda\": this Swarm was built without CUDA")};
  } else {
    throw failure{
        bad_config("gpu_backend", "must be \"\", \"none\", \"cuda\" or \"host\", got \"" +
                                      cfg.gpu_backend + "\"")};
  }
  if (!api) return nullptr;
  auto& devices = api->devices();
  if (count > static_cast<double>(devices.size()))
    throw failure{bad_config("extra_resources",
                             "GPU " + std::to_string(count) + " exceeds the " +
                                 std::to_string(devices.size()) + " devices found")};
  if (count <= 0) total.set("GPU", static_cast<double>(devices.size()));
  if (total.get("gpu_memory") <= 0) {
    double bytes = 0;
    for (auto& d : devices)
      bytes += static_cast<double>(d.memory_bytes);
    total.set("gpu_memory", bytes);
  }
  return api;
}

} // namespace

local_node::local_node(const application& app, const runtime_config& cfg,
                       detail::core* outer)
    : app_(app), outer_(outer ? outer : this), config_(cfg),
      log_(outer ? outer->node_name() : std::string{}, cfg.verbosity, cfg.log_to),
      liveness_(std::make_shared<node_liveness>()) {
  validate(cfg);
  double cpus = cfg.cpus.value_or(static_cast<double>(topo_.cores()));
  total_ = cfg.extra_resources;
  total_.set("CPU", cpus);
  auto gpu_api = open_gpus(cfg, total_);
  if (total_.get("memory") == 0 && topo_.memory_bytes() > 0)
    total_.set("memory", static_cast<double>(topo_.memory_bytes()));
  auto store_bytes = cfg.object_store_bytes.value_or(
      topo_.memory_bytes() > 0 ? topo_.memory_bytes() / 4 : size_t{1} << 30);
  std::optional<spill_config> spill;
  if (cfg.spill)
    spill =
        spill_config{cfg.spill_dir, outer_->node_name(), cfg.spill_limit_bytes, outer_};
  store_ = std::make_shared<store_table>(store_bytes, cfg.inline_threshold,
                                         cfg.object_pool_bytes.value_or(store_bytes / 4),
                                         std::move(spill));

  auto initial_workers = std::max<size_t>(1, static_cast<size_t>(std::ceil(cpus)));
  auto threads = cfg.scheduler_threads.value_or(std::max<size_t>(2, topo_.cores()));
  sys_config_.set("scheduler.policy", caf::atom("sharing"));
  sys_config_.set("scheduler.max-threads", threads);
  sys_ = std::make_unique<caf::actor_system>(sys_config_);

  gcs_ = std::make_unique<gcs_shards>(*sys_, config_.gcs_shards);
  scheduler_config sched_cfg;
  sched_cfg.total = total_;
  sched_cfg.initial_workers = initial_workers;
  sched_cfg.max_workers =
      std::max(initial_workers, cfg.max_workers.value_or(4 * initial_workers));
  sched_cfg.pipeline_depth = cfg.worker_pipeline_depth;
  sched_cfg.node = outer_;
  sched_cfg.topo = &topo_;
  sched_cfg.inbox = &inbox_;

  detail::supervisor_config sup;
  sup.how = strategy::rest_for_one;
  sup.intensity = restart_intensity{5, std::chrono::seconds(10)};
  sup.on_event = [this](const std::string& event) { on_supervisor_event(event); };
  auto child = [this](std::string id, part p, auto start, size_t shard = 0) {
    detail::supervised_child c;
    c.policy.id = std::move(id);
    c.start = [this, p, start, shard](caf::local_actor& parent) {
      auto a = start(parent.home_system());
      set_current(p, a, shard);
      return a;
    };
    return c;
  };
  // The control store, sharded by key hash; each shard holds the keys it owns.
  std::vector<std::string> ids;
  for (size_t i = 0; i < gcs_->size(); ++i) {
    gcs_shard_config gcs_cfg;
    gcs_cfg.index = i;
    gcs_cfg.count = gcs_->size();
    gcs_cfg.dir = cfg.gcs_dir;
    gcs_cfg.link = gcs_->chain_link();
    gcs_cfg.logger = log_;
    for (auto& name : app.function_names())
      if (shard_of(name, gcs_cfg.count) == i)
        gcs_cfg.functions.emplace(name, (*app.find_entry(name))->signature());
    ids.push_back(gcs_->size() == 1 ? "gcs_shard" : "gcs_shard-" + std::to_string(i));
    sup.children.push_back(child(
        ids.back(), part::gcs,
        [this, gcs_cfg](caf::actor_system& s) -> caf::actor {
          auto shard = spawn_gcs_shard(s, gcs_cfg);
          if (shard) return *shard;
          // The supervisor only learns that the start failed: the constructor throws
          // why; a later restart can only log it.
          std::lock_guard<std::mutex> guard{parts_mtx_};
          if (started_)
            log_.error(shard.err().to_string());
          else
            start_error_ = shard.err().to_string();
          return nullptr;
        },
        i));
  }
  sup.children.push_back(
      child("object_store", part::store, [table = store_](caf::actor_system& s) {
        return spawn_object_store(s, table);
      }));
  sup.children.push_back(
      child("local_scheduler", part::scheduler, [sched_cfg](caf::actor_system& s) {
        return spawn_local_scheduler(s, sched_cfg);
      }));
  if (gpu_api) {
    for (auto& d : gpu_api->devices())
      log_.info("GPU " + std::to_string(d.index) + " (" + gpu_api->kind() +
                "): " + d.name + ", " + human_bytes(d.memory_bytes) +
                (d.numa_node >= 0 ? ", NUMA node " + std::to_string(d.numa_node) : ""));
    // One worker per device, restarted alone (a fault on one device loses nothing on
    // another); if they fail too often the node serves on without its GPUs.
    auto board = std::make_shared<device_board>(gpu_api->devices().size());
    devices_ = std::make_shared<node_devices>(*sys_, gpu_api, board, outer_->node_name());
    detail::supervisor_config gpus;
    gpus.how = strategy::one_for_one;
    gpus.intensity = restart_intensity{5, std::chrono::seconds(10)};
    gpus.on_event = sup.on_event;
    for (uint32_t i = 0; i < board->size(); ++i) {
      gpu_worker_config g;
      g.api = gpu_api;
      g.board = board;
      g.device = i;
      g.streams = cfg.gpu_streams;
      g.node = outer_->node_name();
      g.log = log_;
      detail::supervised_child c;
      c.policy.id = "gpu_worker-" + std::to_string(i);
      c.start = [g](caf::local_actor& parent) {
        return spawn_gpu_worker(parent.home_system(), g);
      };
      gpus.children.push_back(std::move(c));
    }
    detail::supervised_child c;
    c.policy.id = "gpu_workers";
    c.policy.restart = restart_type::temporary;
    c.start = [gpus](caf::local_actor& parent) {
      return detail::spawn_supervisor(parent.home_system(), gpus);
    };
    sup.children.push_back(std::move(c));
  }
  supervisor_ = detail::spawn_supervisor(*sys_, std::move(sup));
  if (outer_ == this) {
    // Placement groups of an embedded node: the whole cluster is this node.
    placement_ = spawn_global_scheduler(*sys_);
    caf::anon_send(placement_, update_atom::value, node_name(),
                   node_report{total_, 0, {}, true, {}});
  }
  // The supervisor starts its children asynchronously; the node is usable once they run.
  ids.push_back("object_store");
  ids.push_back("local_scheduler");
  if (devices_) ids.push_back("gpu_workers");
  for (auto& id : ids)
    if (auto a = detail::which_child(*sys_, supervisor_, id, request_timeout); !a) {
      std::lock_guard<std::mutex> guard{parts_mtx_};
      throw failure{
          {errc::runtime_stopped,
           std::string{"node could not start its "} + id + ": " +
               (start_error_.empty() ? caf::to_string(a.error()) : start_error_)}};
    }
  {
    std::lock_guard<std::mutex> guard{parts_mtx_};
    started_ = true;
  }
  // A node of a cluster serves its metrics itself, with the cluster's numbers.
  if (outer_ == this && cfg.metrics_port) {
    auto m = node_metrics::start(node_name(), cfg.metrics_address, *cfg.metrics_port,
                                 [this](metric_set& out) { collect(out); });
    if (!m) {
      stop();
      throw failure{m.err()};
    }
    metrics_ = std::move(*m);
  }
}

local_node::~local_node() {
  stop();
}

void local_node::stop() {
  if (stopping_.exchange(true)) return;
  metrics_.reset();
  for (auto& t : inbox_.close())
    t->result->set_error(node_stopped(*outer_, t->name, "ran"));
  {
    std::lock_guard<std::mutex> guard{liveness_->mtx};
    liveness_->alive = false;
  }
  {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    for (auto& weak : groups_)
      if (auto g = weak.lock()) {
        if (auto root = g->root())
          caf::anon_send_exit(root, caf::exit_reason::user_shutdown);
        g->detach();
      }
    groups_.clear();
    for (auto& weak : hosts_)
      if (auto rec = weak.lock()) {
        if (auto h = rec->host()) caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
        rec->detach();
      }
    hosts_.clear();
  }
  caf::anon_send_exit(supervisor_, caf::exit_reason::user_shutdown);
  supervisor_ = nullptr;
  if (placement_) caf::anon_send_exit(placement_, caf::exit_reason::user_shutdown);
  gcs_->clear();
  {
    std::lock_guard<std::mutex> guard{parts_mtx_};
    store_actor_ = nullptr;
    scheduler_ = nullptr;
  }
  if (devices_) devices_->close();
  sys_.reset(); // waits for every actor, including workers finishing a running task
  for (auto& t : inbox_.close())
    t->result->set_error(node_stopped(*outer_, t->name, "ran"));
}

caf::actor local_node::current(part p, const std::string& key) {
  if (p == part::gcs) return gcs_->for_key(key);
  std::lock_guard<std::mutex> guard{parts_mtx_};
  switch (p) {
  case part::gcs:
    break;
  case part::store:
    return store_actor_;
  case part::scheduler:
    return scheduler_;
  }
  return nullptr;
}

void local_node::set_current(part p, caf::actor a, size_t shard) {
  if (p == part::gcs) return gcs_->set(shard, std::move(a));
  {
    std::lock_guard<std::mutex> guard{parts_mtx_};
    switch (p) {
    case part::gcs:
      break;
    case part::store:
      store_actor_ = std::move(a);
      break;
    case part::scheduler:
      scheduler_ = std::move(a);
      // A wake-up sent to the predecessor may have been lost with it.
      if (!inbox_.empty()) caf::anon_send(scheduler_, wake_atom::value);
      break;
    }
  }
}

void local_node::on_supervisor_event(const std::string& event) {
  // "exit <id> <how>", "stop <id>", "kill <id>": the child is gone until it restarts.
  auto space = event.find(' ');
  auto verb = event.substr(0, space);
  if (verb == "exit" || verb == "stop" || verb == "kill") {
    auto id = event.substr(space + 1, event.find(' ', space + 1) - space - 1);
    std::lock_guard<std::mutex> guard{parts_mtx_};
    if (id.rfind("gcs_shard", 0) == 0) {
      auto dash = id.find('-');
      gcs_->set(dash == std::string::npos ? 0 : std::stoul(id.substr(dash + 1)), nullptr);
    } else if (id == "object_store")
      store_actor_ = nullptr;
    else if (id == "local_scheduler")
      scheduler_ = nullptr;
  }
  if (!stopping_ && (event.find("failure") != std::string::npos || verb == "restart" ||
                     verb == "escalate"))
    log_.warn("node_supervisor: " + event);
}

uint64_t local_node::new_owner_id() {
  return next_owner_.fetch_add(1, std::memory_order_relaxed);
}

object_id local_node::new_object_id(uint64_t owner) {
  return {owner, next_seq_.fetch_add(1, std::memory_order_relaxed)};
}

void local_node::submit(detail::task_ptr task) {
  if (stopping_) {
    task->result->set_error({errc::runtime_stopped,
                             "node is stopping; task '" + task->name + "' was not run"});
    return;
  }
  auto result = task->result;
  auto name = task->name;
  bool accepted = false;
  if (inbox_.push(std::move(task), accepted)) {
    // While the scheduler restarts there is none to wake: its successor drains at start.
    if (auto sched = current(part::scheduler)) caf::anon_send(sched, wake_atom::value);
  } else if (!accepted) {
    result->set_error(
        {errc::runtime_stopped, "node is stopping; task '" + name + "' was not run"});
  }
}

bool local_node::cancel(detail::task_spec& task) {
  return task.cancel();
}

result<std::unique_ptr<detail::store_lease>>
local_node::admit(const object_id& id, const detail::boxed_value& v) {
  return store_->admit(id, v);
}

result<std::unique_ptr<detail::store_lease>>
local_node::admit_secondary(const object_id& id, size_t bytes) {
  return store_->admit_secondary(id, bytes);
}

result<detail::actor_record_ptr> local_node::spawn(detail::actor_spec spec) {
  if (stopping_)
    return error{errc::runtime_stopped, "node '" + outer_->node_name() + "' is stopping"};
  auto name = spec.options.name;
  auto rec = std::make_shared<host_record>(std::move(spec), liveness_);
  rec->set_host(spawn_actor_host(*sys_, *outer_, rec, {}, current(part::scheduler)));
  if (!name.empty()) {
    auto registered = gcs_->register_name(name, rec);
    if (!registered || !*registered) {
      caf::anon_send(rec->host(), kill_atom::value, false);
      return error{errc::invalid_argument,
                   registered ? "actor name '" + name + "' is already taken"
                              : registered.err().message};
    }
  }
  std::lock_guard<std::mutex> guard{hosts_mtx_};
  if (hosts_.size() > 64 && hosts_.size() == hosts_.capacity())
    hosts_.erase(
        std::remove_if(hosts_.begin(), hosts_.end(), [](auto& w) { return w.expired(); }),
        hosts_.end());
  hosts_.push_back(rec);
  return detail::actor_record_ptr{std::move(rec)};
}

void local_node::call(detail::actor_record& target, detail::task_ptr call) {
  if (!stopping_ && static_cast<host_record&>(target).deliver(call)) return;
  auto why = target.death_reason();
  call->result->set_error(
      {errc::actor_died, why.empty()
                             ? "actor of type '" + target.spec().type_name +
                                   "' is gone: node '" + outer_->node_name() + "' stopped"
                             : why});
}

void local_node::kill(detail::actor_record& target, bool restart) {
  if (auto h = static_cast<host_record&>(target).host())
    caf::anon_send(h, kill_atom::value, restart);
  if (!restart) shared_.erase(&target);
  if (!restart && !target.spec().options.name.empty())
    if (auto gcs = current(part::gcs, target.spec().options.name))
      caf::anon_send(gcs, forget_atom::value, target.spec().options.name);
}

result<detail::actor_record_ptr> local_node::find_actor(const std::string& name) {
  caf::scoped_actor self{*sys_};
  result<detail::actor_record_ptr> out{error{errc::unregistered, ""}};
  self->request(current(part::gcs, name), request_timeout, lookup_atom::value, name)
      .receive([&](detail::actor_record_ptr& rec) { out = std::move(rec); },
               [&](caf::error&) {
                 out = error{errc::unregistered, "no live actor is named '" + name + "'"};
               });
  return out;
}

result<void> local_node::create_group(uint64_t id, const placement_group_options& o) {
  return create_group_at(placement_, id, o);
}

result<detail::group_placement>
local_node::wait_group(uint64_t id, std::chrono::milliseconds timeout) {
  return wait_group_at(placement_, id, timeout);
}

result<void> local_node::remove_group(uint64_t id) {
  return remove_group_at(placement_, id);
}

detail::actor_address local_node::address_of(const detail::actor_record_ptr& target) {
  auto id = shared_.share(target, [this] { return next_shared_++; });
  return {node_name(), id, target->spec().type_name};
}

result<detail::actor_record_ptr> local_node::actor_at(const detail::actor_address& addr) {
  if (addr.node != node_name())
    return error{errc::node_unreachable, "a handle of an actor of node '" + addr.node +
                                             "' reached node '" + node_name() +
                                             "', which is not in its cluster"};
  if (auto rec = shared_.find(addr.id)) return rec;
  return error{errc::actor_died, "actor " + std::to_string(addr.id) + " of type '" +
                                     addr.type_name + "' on node '" + addr.node +
                                     "' is gone (killed)"};
}

result<detail::supervisor_config>
local_node::tree_config(const detail::group_spec& spec,
                        const std::shared_ptr<local_group>& group, bool root) {
  detail::supervisor_config cfg;
  cfg.how = spec.how;
  cfg.intensity = spec.intensity;
  std::weak_ptr<local_group> weak = group;
  cfg.on_event = [weak, root](const std::string& event) {
    if (auto g = weak.lock())
      g->record_event(event, root && (event == "escalate" || event == "shutdown"));
  };
  for (auto& c : spec.children) {
    if (c.policy.id.empty())
      return error{errc::invalid_argument, "a supervision tree child has an empty id"};
    if (group->has_child(c.policy.id))
      return error{errc::invalid_argument, "child id '" + c.policy.id +
                                               "' appears twice in the supervision tree"};
    detail::supervised_child child;
    child.policy = c.policy;
    if (c.nested) {
      group->add_child(c.policy.id, nullptr);
      auto nested = tree_config(*c.nested, group, false);
      if (!nested) return nested.err();
      child.start = [cfg = std::move(*nested)](caf::local_actor& parent) {
        return detail::spawn_supervisor(parent.home_system(), cfg);
      };
    } else {
      if (!app_.has_actor_type(c.actor.type_name))
        return error{errc::unregistered, "actor type '" + c.actor.type_name +
                                             "' of child '" + c.policy.id +
                                             "' is not registered"};
      auto spec_copy = c.actor;
      spec_copy.options.max_restarts = 0;
      auto rec = std::make_shared<host_record>(std::move(spec_copy), liveness_, true);
      group->add_child(c.policy.id, rec);
      {
        std::lock_guard<std::mutex> guard{hosts_mtx_};
        hosts_.push_back(rec);
      }
      child.start = [this, rec](caf::local_actor& parent) {
        auto cause = rec->take_restart_cause();
        rec->revive();
        auto host = spawn_actor_host(parent.home_system(), *outer_, rec, std::move(cause),
                                     current(part::scheduler));
        rec->set_host(host);
        return host;
      };
      child.gone = [rec](const std::string& why) { rec->give_up(why); };
    }
    cfg.children.push_back(std::move(child));
  }
  return cfg;
}

result<detail::group_record_ptr> local_node::supervise(const detail::group_spec& spec) {
  if (stopping_)
    return error{errc::runtime_stopped, "node '" + outer_->node_name() + "' is stopping"};
  auto group = std::make_shared<local_group>(liveness_);
  auto cfg = tree_config(spec, group, true);
  if (!cfg) return cfg.err();
  group->set_root(detail::spawn_supervisor(*sys_, std::move(*cfg)));
  {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    groups_.push_back(group);
  }
  // The supervisors start their children asynchronously; the tree is usable once they
  // run.
  auto deadline = std::chrono::steady_clock::now() + request_timeout;
  for (auto& [id, rec] : group->children())
    if (rec && !static_cast<host_record&>(*rec).wait_for_host(deadline))
      return error{errc::actor_died,
                   "child '" + id + "' of the supervision tree did not start"};
  return detail::group_record_ptr{std::move(group)};
}

store_stats local_node::store_accounting() const {
  return store_->stats();
}

caf::actor local_node::scheduler() {
  return current(part::scheduler);
}

node_stats local_node::stats() {
  node_stats out;
  auto s = store_->stats();
  out.store_objects = s.objects;
  out.store_bytes = s.bytes;
  out.pulled_bytes = s.secondary_bytes;
  out.store_capacity = s.capacity;
  out.store_rejected = s.rejected;
  out.store_pooled_bytes = s.pooled_bytes;
  out.store_pool_reuses = s.pool_reuses;
  out.spilled_objects = s.spilled_objects;
  out.spilled_bytes = s.spilled_bytes;
  out.spills = s.spills;
  out.restores = s.restores;
  out.cached_bytes = s.cached_bytes;
  out.cache_hits = s.cache_hits;
  out.cache_misses = s.cache_misses;
  out.evictions = s.evictions;
  caf::scoped_actor self{*sys_};
  self->request(current(part::scheduler), request_timeout, stats_atom::value)
      .receive(
          [&](const scheduler_load& load) {
            out.running_tasks = load.running;
            out.queued_tasks = load.queued;
            out.dispatched_tasks = load.dispatched;
            out.workers = load.workers;
            out.blocked_workers = load.blocked;
            out.available = load.available.to_string();
          },
          [](caf::error&) {});
  gcs_->add_stats(out.named_actors, out.control_rows);
  return out;
}

namespace {

// What the scheduler `scheduler` answers to (stats_atom, `what`); an error naming node
// `node` when it does not answer.
template <class T, class Atom>
result<T> ask_scheduler(caf::actor_system& sys, const caf::actor& scheduler,
                        const std::string& node, Atom what) {
  caf::scoped_actor self{sys};
  result<T> out =
      error{errc::timeout, "node '" + node + "': its scheduler did not answer"};
  self->request(scheduler, request_timeout, stats_atom::value, what)
      .receive([&](T& got) { out = std::move(got); },
               [&](caf::error& e) {
                 out = error{errc::timeout,
                             "node '" + node +
                                 "': its scheduler did not answer: " + caf::to_string(e)};
               });
  return out;
}

} // namespace

result<std::vector<wire_msg::list_row>> local_node::list(const std::string& what) {
  std::vector<wire_msg::list_row> out;
  if (what == "tasks") {
    auto rows = ask_scheduler<std::vector<task_row>>(*sys_, current(part::scheduler),
                                                     node_name(), list_atom::value);
    if (!rows) return rows.err();
    for (auto& r : *rows)
      out.push_back({r.id,
                     r.function,
                     r.state,
                     "priority " + std::to_string(r.priority) + ", attempt " +
                         std::to_string(r.attempt),
                     {}});
  } else if (what == "timeline") {
    auto events = ask_scheduler<std::vector<task_event>>(
        *sys_, current(part::scheduler), node_name(), timeline_atom::value);
    if (!events) return events.err();
    for (auto& e : *events)
      out.push_back({e.id.to_string(),
                     e.function,
                     e.failed ? "failed" : "finished",
                     "worker " + std::to_string(e.worker),
                     {timeline_kind::task, e.queued_us, e.started_us, e.ended_us, 0}});
    add_actor_calls(out);
  } else if (what == "failures") {
    auto events = ask_scheduler<std::vector<task_event>>(
        *sys_, current(part::scheduler), node_name(), failures_atom::value);
    if (!events) return events.err();
    // Newest first: what a reader looks for.
    for (auto e = events->rbegin(); e != events->rend(); ++e)
      out.push_back({e->id.to_string(), e->function, "failed", e->error, {e->ended_us}});
  } else if (what == "summary") {
    auto counts = ask_scheduler<counts_by_function>(*sys_, current(part::scheduler),
                                                    node_name(), by_function_atom::value);
    if (!counts) return counts.err();
    for (auto& [fn, c] : *counts)
      out.push_back({"function",
                     fn,
                     "",
                     "",
                     {static_cast<int64_t>(c.submitted), static_cast<int64_t>(c.running),
                      static_cast<int64_t>(c.finished), static_cast<int64_t>(c.failed)}});
    int64_t alive = 0, dead = 0;
    {
      std::lock_guard<std::mutex> guard{hosts_mtx_};
      for (auto& weak : hosts_)
        if (auto h = weak.lock()) ++(h->dead() ? dead : alive);
    }
    out.push_back({"actors", "", "", "", {alive, dead}});
    auto s = stats();
    out.push_back(
        {"objects",
         "",
         "",
         "",
         {static_cast<int64_t>(s.store_objects), static_cast<int64_t>(s.store_bytes),
          static_cast<int64_t>(s.pulled_bytes)}});
  } else if (what == "logs") {
    for (auto& line : log_.recent())
      out.push_back({"", "", "", line, {}});
  } else if (what == "actors") {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    for (auto& weak : hosts_)
      if (auto h = weak.lock()) {
        auto& spec = h->spec();
        out.push_back({spec.name(),
                       spec.type_name,
                       h->dead() ? "dead" : "alive",
                       h->dead() ? h->death_reason() : "",
                       {}});
      }
  } else if (what == "objects") {
    for (auto& [id, bytes, spilled] : store_->objects())
      out.push_back(
          {id.to_string(), "", spilled ? "spilled" : "stored", human_bytes(bytes), {}});
  } else {
    return error{errc::invalid_argument,
                 "cannot list '" + what +
                     "': lists are tasks, actors, objects, timeline, logs, summary and "
                     "failures"};
  }
  return out;
}

void local_node::add_actor_calls(std::vector<wire_msg::list_row>& out) {
  struct asked {
    std::string track, type;
    caf::actor host;
  };
  std::vector<asked> hosts;
  {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    for (auto& weak : hosts_)
      if (auto h = weak.lock(); h && !h->dead())
        if (auto a = h->host()) {
          auto& spec = h->spec();
          hosts.push_back({"actor " + spec.name(), spec.type_name, std::move(a)});
        }
  }
  // All asked at once: a host busy in a long call (or gone) costs one timeout, not one
  // each, and is left out.
  caf::scoped_actor self{*sys_};
  using reply = decltype(self->request(caf::actor{}, timeline_ask_timeout,
                                       stats_atom::value, timeline_atom::value));
  std::vector<reply> replies;
  for (auto& h : hosts)
    replies.push_back(self->request(h.host, timeline_ask_timeout, stats_atom::value,
                                    timeline_atom::value));
  for (size_t i = 0; i < hosts.size(); ++i)
    replies[i].receive(
        [&](std::vector<call_event>& calls) {
          for (auto& c : calls)
            out.push_back(
                {c.id.to_string(),
                 c.method.empty() ? hosts[i].type : hosts[i].type + "." + c.method,
                 c.failed ? "failed" : "finished",
                 hosts[i].track,
                 {timeline_kind::actor_call, 0, c.started_us, c.ended_us, 0}});
        },
        [](caf::error&) {});
}

void local_node::collect(metric_set& out) {
  auto s = stats();
  struct number {
    bool counter;
    const char* name;
    const char* help;
    size_t value;
  };
  const number numbers[] = {
      {false, "swarm_tasks_queued", "Tasks ready to run, waiting for a worker",
       s.queued_tasks},
      {false, "swarm_tasks_dispatched", "Tasks at workers, running or next",
       s.dispatched_tasks},
      {false, "swarm_workers", "Task workers started", s.workers},
      {false, "swarm_workers_blocked", "Workers whose task waits in get or wait",
       s.blocked_workers},
      {false, "swarm_store_objects", "Objects in the object store", s.store_objects},
      {false, "swarm_store_bytes", "Bytes in the object store, pulled copies included",
       s.store_bytes},
      {false, "swarm_store_capacity_bytes", "The object store's limit", s.store_capacity},
      {false, "swarm_store_pulled_bytes", "Bytes of copies pulled from other nodes",
       s.pulled_bytes},
      {false, "swarm_store_pooled_bytes", "Memory of freed values kept for new ones",
       s.store_pooled_bytes},
      {true, "swarm_store_rejected_total", "Puts and results refused for lack of room",
       s.store_rejected},
      {true, "swarm_store_pool_reuses_total", "Values made in kept memory",
       s.store_pool_reuses},
      {false, "swarm_store_spilled_objects", "Objects on disk only", s.spilled_objects},
      {false, "swarm_store_spilled_bytes", "Bytes of spill files", s.spilled_bytes},
      {true, "swarm_store_spills_total", "Objects moved from memory to disk", s.spills},
      {true, "swarm_store_restores_total", "Spilled objects read back into memory",
       s.restores},
      {false, "swarm_store_cached_bytes",
       "Copies of other nodes' objects kept after reads", s.cached_bytes},
      {true, "swarm_store_cache_hits_total", "Reads of other nodes' objects found here",
       s.cache_hits},
      {true, "swarm_store_cache_misses_total", "Reads of other nodes' objects pulled",
       s.cache_misses},
      {true, "swarm_store_evictions_total", "Kept copies dropped to make room",
       s.evictions},
      {false, "swarm_named_actors", "Actor names in the control store", s.named_actors},
      {false, "swarm_control_rows", "Rows in the control store's tables", s.control_rows},
  };
  auto emit = [&out](const auto& rows, const metric_set::labels& labels) {
    for (auto& n : rows)
      (out.*(n.counter ? &metric_set::counter : &metric_set::gauge))(
          n.name, n.help, static_cast<double>(n.value), labels);
  };
  emit(numbers, {});
  if (devices_)
    for (auto& u : devices_->usages(device_ask_timeout)) {
      const number per_device[] = {
          {false, "swarm_gpu_up", "Whether the device's GPU worker runs",
           u.running ? size_t{1} : size_t{0}},
          {false, "swarm_gpu_memory_used_bytes", "Device memory of live buffers", u.used},
          {false, "swarm_gpu_memory_cached_bytes", "Freed device memory kept for reuse",
           u.cached},
          {false, "swarm_gpu_memory_capacity_bytes", "Device memory the worker hands out",
           u.capacity},
          {false, "swarm_gpu_allocations_waiting",
           "Allocations waiting for device memory", u.waiting},
          {true, "swarm_gpu_worker_restarts_total",
           "Restarts of the device's GPU worker after faults", u.restarts},
      };
      emit(per_device,
           {{"device", std::to_string(u.device)}, {"backend", devices_->backend()}});
    }
  // Actor calls by actor type, across restarts, of the actors alive here.
  std::map<std::string, call_histogram::snapshot> calls;
  {
    std::lock_guard<std::mutex> guard{hosts_mtx_};
    for (auto& weak : hosts_)
      if (auto h = weak.lock()) calls[h->spec().type_name] += h->timing()->read();
  }
  const std::vector<double> bounds(call_histogram::bounds.begin(),
                                   call_histogram::bounds.end());
  for (auto& [type, c] : calls)
    out.histogram("swarm_actor_call_seconds", "How long actor calls ran, by actor type",
                  bounds, std::vector<uint64_t>(c.counts.begin(), c.counts.end()),
                  c.sum_seconds, metric_set::labels{{"type", type}});
  auto counts = ask_scheduler<counts_by_function>(*sys_, current(part::scheduler),
                                                  node_name(), by_function_atom::value);
  if (!counts) return; // the scrape shows the rest
  for (auto& [fn, c] : *counts) {
    metric_set::labels l{{"function", fn}};
    out.counter("swarm_tasks_submitted_total", "Tasks queued on this node",
                static_cast<double>(c.submitted), l);
    out.gauge("swarm_tasks_running", "Tasks running on a worker now",
              static_cast<double>(c.running), l);
    out.counter("swarm_tasks_finished_total", "Tasks that ended with a value",
                static_cast<double>(c.finished), l);
    out.counter("swarm_tasks_failed_total", "Tasks that ended with an error",
                static_cast<double>(c.failed), l);
  }
}

result<std::optional<std::vector<uint8_t>>>
local_node::kv(detail::kv_op op, const std::string& key, std::vector<uint8_t> value) {
  return gcs_->kv(op, key, std::move(value));
}

} // namespace swarm::actors
