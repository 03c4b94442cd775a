#include "actors/control_store/control_client.hpp"

#include <caf/all.hpp>

#include <map>
#include <type_traits>

#include "actors/common/wall_clock.hpp"

namespace swarm::actors {

namespace {

template <class T, class = void>
struct has_request_id : std::false_type {};

template <class T>
struct has_request_id<T, std::void_t<decltype(std::declval<T&>().request_id)>>
    : std::true_type {};

struct control_client_state {
  control_client_config cfg;
  uint64_t next_id = 1;
  struct pending {
    std::string node; // asked of
    caf::typed_response_promise<wire_msg::message> rp;
  };
  std::map<uint64_t, pending> waiting;
  std::map<uint64_t, uint64_t> jobs_started; // job id: start, wall-clock ms
};

using control_client_self = control_client_actor::stateful_pointer<control_client_state>;

control_client_actor::behavior_type control_client(control_client_self self,
                                                   control_client_config cfg) {
  self->state.cfg = std::move(cfg);
  if (!self->state.cfg.wall_ms) self->state.cfg.wall_ms = wall_ms;
  // Stopping answers every request in flight, so no caller waits out its timeout.
  self->set_exit_handler([=](const caf::exit_msg& x) {
    for (auto& [id, p] : self->state.waiting)
      p.rp.deliver(caf::make_error(caf::sec::request_receiver_down));
    self->state.waiting.clear();
    self->quit(x.reason);
  });
  return {
      [=](request_atom, const std::string& node,
          wire_msg::message& m) -> caf::typed_response_promise<wire_msg::message> {
        auto& st = self->state;
        auto rp = self->make_response_promise<wire_msg::message>();
        auto* id = request_id_of(m);
        if (!id) {
          rp.deliver(caf::make_error(caf::sec::unexpected_message));
          return rp;
        }
        *id = st.next_id++;
        st.waiting.emplace(*id, control_client_state::pending{node, rp});
        self->delayed_send(self, st.cfg.request_timeout, expire_atom::value, *id);
        st.cfg.send(node, std::move(m));
        return rp;
      },
      [=](answer_atom, uint64_t id, wire_msg::message& m) {
        auto& w = self->state.waiting;
        auto i = w.find(id);
        if (i == w.end()) return; // expired, or never asked
        i->second.rp.deliver(std::move(m));
        w.erase(i);
      },
      [=](expire_atom, uint64_t id) {
        auto& w = self->state.waiting;
        auto i = w.find(id);
        if (i == w.end()) return;
        i->second.rp.deliver(caf::make_error(caf::sec::request_timeout));
        w.erase(i);
      },
      [=](lost_atom, const std::string& node) {
        // No answer will come from a lost node: its requests fail now, not at their
        // timeout (a restart waiting on a frozen node moves on at once).
        auto& w = self->state.waiting;
        for (auto i = w.begin(); i != w.end();)
          if (i->second.node == node) {
            i->second.rp.deliver(caf::make_error(caf::sec::no_route_to_receiving_node));
            i = w.erase(i);
          } else {
            ++i;
          }
      },
      [=](job_atom, uint64_t id, bool running) {
        auto& st = self->state;
        wire_msg::job_info j;
        j.id = id;
        j.driver = st.cfg.node;
        j.pid = st.cfg.pid;
        j.running = running;
        if (running) {
          j.started_ms = st.jobs_started[id] = st.cfg.wall_ms();
        } else {
          j.started_ms = st.jobs_started[id];
          j.ended_ms = st.cfg.wall_ms();
          st.jobs_started.erase(id);
        }
        st.cfg.publish(std::move(j));
      },
  };
}

} // namespace

uint64_t* request_id_of(wire_msg::message& m) {
  return std::visit(
      [](auto& x) -> uint64_t* {
        if constexpr (has_request_id<std::decay_t<decltype(x)>>::value)
          return &x.request_id;
        else
          return nullptr;
      },
      m);
}

control_client_actor spawn_control_client(caf::actor_system& sys, control_client_config cfg,
                                          bool detached) {
  if (detached) return sys.spawn<caf::detached>(control_client, std::move(cfg));
  return sys.spawn(control_client, std::move(cfg));
}

void add_answer_routes(wire_routes& routes, const control_client_actor& control) {
  auto answer = [](const std::string&, auto&& m) {
    auto id = m.request_id;
    return std::make_tuple(answer_atom::value, id, wire_msg::message{std::move(m)});
  };
  routes.mailbox<wire_msg::actor_created>(control, answer);
  routes.mailbox<wire_msg::actor_location>(control, answer);
  routes.mailbox<wire_msg::group_answer>(control, answer);
  routes.mailbox<wire_msg::kv_reply>(control, answer);
}

} // namespace swarm::actors
