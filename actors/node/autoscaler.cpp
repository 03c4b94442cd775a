#include "actors/node/autoscaler.hpp"
#include "actors/common/protocol.hpp"
#include "actors/node/protocol.hpp"
#include "actors/scheduling/autoscale_plan.hpp"
#include "actors/scheduling/protocol.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(swarm::node_type)

namespace swarm::actors {

namespace {

using launch_atom = caf::atom_constant<caf::atom("launch")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using ended_atom = caf::atom_constant<caf::atom("ended")>;
using launched_atom = caf::atom_constant<caf::atom("launched")>;
using adopt_atom = caf::atom_constant<caf::atom("adopt")>;

// Launches of a type that fail in a row before it is given up.
constexpr size_t give_up_after = 5;

using steady = std::chrono::steady_clock;
using ended_list = std::vector<std::pair<std::string, std::string>>;

// Owns the provider: its calls block, so they run here, on a thread of their own, one
// at a time; each answer goes back to the autoscaler.
// It answers its sender, holding no handle of it: the two would keep each other.
caf::behavior provider_runner(caf::event_based_actor* self,
                              std::shared_ptr<node_provider> provider,
                              std::chrono::milliseconds grace, node_log log) {
  auto sender = [self] { return caf::actor_cast<caf::actor>(self->current_sender()); };
  return {
      [=](launch_atom, const node_type& type, const std::string& name) {
        auto r = provider->launch(type, name);
        self->send(sender(), launched_atom::value, name,
                   r ? std::string{} : r.err().message);
      },
      [=](adopt_atom, const node_type& type, const std::string& name) {
        provider->adopt(type, name);
      },
      [=](release_atom, const std::string& name) {
        if (auto r = provider->release(name, grace); !r) log.warn(r.err().message);
      },
      [=](ended_atom) { self->send(sender(), ended_atom::value, provider->ended()); },
  };
}

class autoscaler : public caf::event_based_actor {
public:
  autoscaler(caf::actor_config& c, autoscaler_setup setup,
             std::shared_ptr<node_provider> provider)
      : caf::event_based_actor(c), setup_(std::move(setup)), plan_(setup_.cfg),
        provider_(std::move(provider)), names_(std::random_device{}()) {}

  caf::behavior make_behavior() override {
    runner_ = spawn<caf::detached + caf::linked>(provider_runner, provider_,
                                                 setup_.stop_grace, setup_.log);
    provider_.reset(); // the runner's alone
    send_scalable();
    send(this, tick_atom::value);
    return {
        [this](tick_atom) {
          delayed_send(this, setup_.tick, tick_atom::value);
          send(runner_, ended_atom::value);
          request(setup_.global, setup_.tick, waiting_atom::value)
              .then([this](std::vector<waiting_demand>& waiting) { step(waiting); },
                    [](caf::error&) {});
        },
        [this](launched_atom, const std::string& name, const std::string& failure) {
          if (!failure.empty()) failed(name, failure);
        },
        [this](ended_atom, ended_list& ended) {
          for (auto& [name, how] : ended)
            if (auto n = find(name); n && n->state == scaled_node::phase::launching)
              failed(name, "node '" + name + "' ended before it joined: " + how);
            else
              forget(name);
        },
        [this](launches_atom) { return launches(); },
    };
  }

  void on_exit() override {
    runner_ =
        nullptr; // the runner, linked, ends too; its thread waits for its last handle
  }

private:
  scaled_node* find(const std::string& name) {
    for (auto& n : nodes_)
      if (n.name == name) return &n;
    return nullptr;
  }

  void forget(const std::string& name) {
    forgotten_.insert(name);
    missing_.erase(name);
    why_.erase(name);
    nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                                [&](auto& n) { return n.name == name; }),
                 nodes_.end());
  }

  std::string type_name(size_t t) const { return setup_.cfg.node_types.at(t).name; }

  // A launch of node `name` failed: its type backs off; 5 in a row give it up.
  void failed(const std::string& name, const std::string& why) {
    auto* n = find(name);
    if (!n) return;
    auto t = n->type;
    forget(name);
    send(runner_, release_atom::value, name);
    plan_.launch_failed(t, steady::now());
    last_failure_[t] = {why, steady::now()};
    setup_.log.warn("autoscaler: a node of type '" + type_name(t) + "' did not start (" +
                    std::to_string(plan_.failures(t)) + " in a row): " + why);
    if (plan_.failures(t) == give_up_after) send_scalable();
  }

  // Tells the global scheduler what may still start.
  void send_scalable() {
    std::vector<resource_set> totals;
    std::string why;
    for (size_t t = 0; t < setup_.cfg.node_types.size(); ++t) {
      auto& type = setup_.cfg.node_types[t];
      if (plan_.failures(t) < give_up_after) {
        if (type.max > 0) totals.push_back(type.total());
      } else {
        why += (why.empty() ? "" : "; ") +
               std::string{"the autoscaler gave up on node "
                           "type '"} +
               type.name + "' after " + std::to_string(give_up_after) +
               " failed launches in a row: " + last_failure_[t].first;
      }
    }
    send(setup_.global, scalable_atom::value, std::move(totals), std::move(why));
  }

  // Takes on the live nodes of its types that it does not follow: started for a head
  // that died while they ran, they joined this one. Not one it let go of.
  void adopt(const peer_table& table, steady::time_point now) {
    for (auto i = forgotten_.begin(); i != forgotten_.end();)
      i = table.count(*i) ? std::next(i) : forgotten_.erase(i);
    for (auto& [name, p] : table) {
      auto& info = p.info;
      if (info.node_type.empty() || !info.alive || info.leaving || find(name) ||
          forgotten_.count(name))
        continue;
      auto& types = setup_.cfg.node_types;
      auto t = std::find_if(types.begin(), types.end(),
                            [&](auto& type) { return type.name == info.node_type; });
      if (t == types.end()) continue;
      auto index = static_cast<size_t>(t - types.begin());
      nodes_.push_back({name, index, scaled_node::phase::up, now, {}});
      why_[name] =
          "adopted: started as a node of type '" + t->name + "' before the head started";
      send(runner_, adopt_atom::value, *t, name);
      setup_.log.info("autoscaler: adopted node '" + name + "' of type '" + t->name +
                      "', started before the head started");
    }
  }

  // Follows its nodes in the node table, then acts on the plan.
  void step(const std::vector<waiting_demand>& waiting) {
    auto now = steady::now();
    auto table = setup_.members->get();
    adopt(*table, now);
    for (auto i = nodes_.begin(); i != nodes_.end();) {
      auto row = table->find(i->name);
      bool alive = row != table->end() && row->second.info.alive;
      if (alive) missing_.erase(i->name);
      if (i->state == scaled_node::phase::launching && alive) {
        i->state = scaled_node::phase::up;
        i->since = now;
        plan_.launch_joined(i->type);
        setup_.log.info("autoscaler: node '" + i->name + "' of type '" +
                        type_name(i->type) + "' joined");
      } else if (i->state != scaled_node::phase::launching && !alive) {
        // A node found dead may be slow, not gone (it joins again): it still counts
        // until it is missing for the stop grace, or its process ended (`ended_atom`).
        auto missing = missing_.emplace(i->name, now).first->second;
        if (i->state == scaled_node::phase::up && now - missing < setup_.stop_grace) {
          i->idle_since.reset();
          ++i;
          continue;
        }
        setup_.log.info("autoscaler: node '" + i->name + "' is gone");
        forgotten_.insert(i->name);
        send(runner_, release_atom::value, i->name);
        missing_.erase(i->name);
        why_.erase(i->name);
        i = nodes_.erase(i);
        continue;
      }
      if (i->state == scaled_node::phase::up) {
        auto& info = row->second.info;
        bool idle = info.queued == 0 && info.running == 0 &&
                    info.store.bytes <= info.store.pulled;
        if (!idle)
          i->idle_since.reset();
        else if (!i->idle_since)
          i->idle_since = now;
      }
      ++i;
    }
    size_t live = 0;
    for (auto& [name, row] : *table)
      live += row.info.alive && !row.info.client;
    for (auto& a : plan_.decide(waiting, nodes_, now, live)) {
      switch (a.what) {
      case scale_action::kind::launch: {
        auto name = type_name(a.type) + "-" + suffix();
        setup_.log.info("autoscaler: starting node '" + name + "' of type '" +
                        type_name(a.type) + "': " + a.why);
        nodes_.push_back({name, a.type, scaled_node::phase::launching, now, {}});
        why_[name] = a.why;
        send(runner_, launch_atom::value, setup_.cfg.node_types[a.type], name);
        break;
      }
      case scale_action::kind::stop:
        if (auto* n = find(a.node)) {
          n->state = scaled_node::phase::stopping;
          n->since = now;
          why_[a.node] = a.why;
          setup_.log.info("autoscaler: stopping node '" + a.node + "': " + a.why);
          setup_.stop(a.node, "the autoscaler stops it: " + a.why);
        }
        break;
      case scale_action::kind::fail:
        failed(a.node, a.why);
        break;
      }
    }
  }

  std::string suffix() {
    static const char digits[] = "0123456789abcdef";
    std::string out(6, '0');
    for (auto& c : out)
      c = digits[names_() % 16];
    return out;
  }

  std::vector<wire_msg::node_launch> launches() const {
    auto now = steady::now();
    auto ms = [&](steady::time_point t) {
      return static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count());
    };
    static const char* states[] = {"starting", "up", "stopping"};
    std::vector<wire_msg::node_launch> out;
    for (auto& n : nodes_) {
      auto why = why_.find(n.name);
      out.push_back({n.name, type_name(n.type), states[static_cast<int>(n.state)],
                     why == why_.end() ? std::string{} : why->second, ms(n.since)});
    }
    for (auto& [t, f] : last_failure_)
      if (plan_.failures(t) > 0)
        out.push_back({"", type_name(t), "failed",
                       std::to_string(plan_.failures(t)) + " in a row, last: " + f.first,
                       ms(f.second)});
    return out;
  }

  autoscaler_setup setup_;
  autoscale_plan plan_;
  std::shared_ptr<node_provider> provider_;
  caf::actor runner_;
  std::vector<scaled_node> nodes_;
  std::map<std::string, std::string> why_; // why each node started or stops
  // Since when each node found dead (or dropped from the table) has been so.
  std::map<std::string, steady::time_point> missing_;
  std::map<size_t, std::pair<std::string, steady::time_point>> last_failure_;
  // Nodes it let go of, while the table still lists them: never adopted again.
  std::set<std::string> forgotten_;
  std::mt19937_64 names_;
};

} // namespace

result<caf::actor> spawn_autoscaler(caf::actor_system& sys, autoscaler_setup setup) {
  auto provider = node_provider::make(setup.cfg, setup.target);
  if (!provider) return provider.err();
  return sys.spawn<autoscaler>(std::move(setup),
                               std::make_shared<node_provider>(std::move(*provider)));
}

} // namespace swarm::actors
