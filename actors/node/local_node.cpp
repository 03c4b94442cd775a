#include "actors/node/local_node.hpp"

#include <caf/all.hpp>

#include <cmath>
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

  gcs_ = std::make_unique<gcs_shards>(*sys_, config_.gcs_shards, config_.gcs_hosts > 1);
  scheduler_config sched_cfg;
  sched_cfg.total = total_;
  sched_cfg.initial_workers = initial_workers;
  sched_cfg.max_workers =
      std::max(initial_workers, cfg.max_workers.value_or(4 * initial_workers));
  sched_cfg.pipeline_depth = cfg.worker_pipeline_depth;
  sched_cfg.priority_reserve = cfg.priority_reserve;
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
  // The control store, sharded by key hash; each shard holds the keys it owns. The
  // key-value table's own shards (spread over several nodes) follow, kept in memory.
  std::vector<std::string> ids;
  for (size_t i = 0; i < gcs_->local_count(); ++i) {
    bool kv = i >= gcs_->size();
    gcs_shard_config gcs_cfg;
    gcs_cfg.index = kv ? i - gcs_->size() : i;
    gcs_cfg.count = gcs_->size();
    gcs_cfg.chain_id = i;
    if (!kv) gcs_cfg.dir = cfg.gcs_dir;
    gcs_cfg.link = gcs_->chain_link();
    gcs_cfg.logger = log_;
    for (auto& name : app.function_names())
      if (!kv && shard_of(name, gcs_cfg.count) == i)
        gcs_cfg.functions.emplace(name, (*app.find_entry(name))->signature());
    ids.push_back(kv                  ? "gcs_kv_shard-" + std::to_string(gcs_cfg.index)
                  : gcs_->size() == 1 ? "gcs_shard"
                                      : "gcs_shard-" + std::to_string(i));
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
                (d.numa_node >= 0 ? ", NUMA node " + std::to_string(d.numa_node) : "") +
                (d.uuid.empty() ? "" : ", " + d.uuid));
    // One worker per device, restarted alone (a fault on one device loses nothing on
    // another); if they fail too often the node serves on without its GPUs.
    auto board = std::make_shared<device_board>(gpu_api->devices().size());
    devices_ = std::make_shared<node_devices>(*sys_, gpu_api, board, outer_->node_name(),
                                              cfg.gpu_staging_bytes);
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
  if (devices_) wait_for_gpu_workers();
  {
    std::lock_guard<std::mutex> guard{parts_mtx_};
    started_ = true;
  }
  // A node of a cluster serves its metrics itself, with the cluster's numbers.
  if (outer_ == this && cfg.metrics_port) {
    auto m = node_metrics::start(node_name(), cfg.metrics_address, *cfg.metrics_port,
                                 cfg.http, [this](metric_set& out) { collect(out); });
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

void local_node::wait_for_gpu_workers() {
  // Opening a device makes its CUDA context: seconds on a large GPU.
  constexpr auto open_timeout = std::chrono::seconds(60);
  auto gpus = detail::which_child(*sys_, supervisor_, "gpu_workers", request_timeout);
  if (!gpus) return;
  caf::scoped_actor self{*sys_};
  for (uint32_t i = 0; i < devices_->count(); ++i) {
    auto worker = detail::which_child(*sys_, *gpus, "gpu_worker-" + std::to_string(i),
                                      request_timeout);
    if (!worker) continue;
    // It answers once it runs, after opening its device.
    self->request(*worker, open_timeout, dev_stats_atom::value)
        .receive([](uint64_t, uint64_t, uint64_t, uint64_t) {},
                 [&](caf::error& e) {
                   log_.warn("GPU " + std::to_string(i) + " did not start: " +
                                sys_->render(e) + "; its tasks fail until it does");
                 });
  }
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
  return owners_.next();
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
  auto& spec = target->spec();
  return {node_name(), id, spec.type_name, spec.name(), spec.options.max_task_retries,
          node_name()};
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

result<std::optional<std::vector<uint8_t>>>
local_node::kv(detail::kv_op op, const std::string& key, std::vector<uint8_t> value) {
  return gcs_->kv(op, key, std::move(value));
}

} // namespace swarm::actors
