#pragma once

// Where each kind of wire message a node receives goes, and how it runs there. Each
// subsystem adds the routes of the messages it handles when the node is built; the
// network's reader then delivers every message by its route. A kind routed twice is a
// bug, refused when the node is built; a kind not routed on this node is refused when it
// arrives, naming it, and never reaches anything.

#include <caf/send.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

#include "transport/wire_message.hpp"

namespace swarm::actors {

/// How a route's handler runs.
enum class delivery : uint8_t {
  /// Not routed on this node.
  none,
  /// Into an actor's mailbox: the route only says which actor and what message.
  mailbox,
  /// On the network's reading thread, at once: for handlers that hand the message on
  /// without blocking (an owner's queue, an actor of their own).
  in_place,
  /// On the node's agent, off the network's threads: for handlers that ask actors and
  /// wait for their answers.
  posted,
};

/// The name of a delivery, for messages and tests.
const char* to_string(delivery d);

/// The routing table of the wire messages a node receives.
class wire_routes {
public:
  using handler = std::function<void(const std::string& peer, wire_msg::message&& m)>;
  /// Runs a function on the node's agent (`node_link::post`).
  using poster = std::function<void(std::function<void()>)>;

  explicit wire_routes(poster post) : post_(std::move(post)) {}

  /// Each `T` that arrives is sent as the elements of the tuple `make(peer, T&&)`
  /// returns to the actor `to` names then: a handle the node sets when it starts its
  /// actors, which outlives the routes.
  template <class T, class Handle, class F> void mailbox(const Handle& to, F make) {
    add<T>(delivery::mailbox, [&to, make](const std::string& peer, T&& x) {
      std::apply(
          [&](auto&&... xs) { caf::anon_send(to, std::forward<decltype(xs)>(xs)...); },
          make(peer, std::move(x)));
    });
  }

  /// Not a temporary handle: the route reads the handle when a message arrives.
  template <class T, class Handle, class F>
  void mailbox(const Handle&& to, F make) = delete;

  /// Each `T` that arrives runs `f(peer, T&&)` on the thread that read it.
  template <class T, class F> void in_place(F f) {
    add<T>(delivery::in_place, std::move(f));
  }

  /// Each `T` that arrives runs `f(peer, T&&)` on the node's agent.
  template <class T, class F> void posted(F f) {
    add<T>(delivery::posted, [post = post_, f](const std::string& peer, T&& x) {
      post([f, peer, x = std::move(x)]() mutable { f(peer, std::move(x)); });
    });
  }

  /// Delivers `m` from `peer` by its route; false when its kind has none here.
  bool deliver(const std::string& peer, wire_msg::message&& m) const;

  /// How messages of kind `index` (in `wire_msg::message`) are delivered here.
  delivery route_of(size_t index) const { return routes_.at(index).how; }

private:
  template <class T> static constexpr size_t index_of() {
    return index_in<T>(
        std::make_index_sequence<std::variant_size_v<wire_msg::message>>{});
  }
  template <class T, size_t... Is>
  static constexpr size_t index_in(std::index_sequence<Is...>) {
    static_assert(
        (std::is_same_v<T, std::variant_alternative_t<Is, wire_msg::message>> + ...) == 1,
        "routes are for the wire messages of wire_msg::message");
    size_t at = 0;
    ((std::is_same_v<T, std::variant_alternative_t<Is, wire_msg::message>> ? (at = Is, 0)
                                                                           : 0),
     ...);
    return at;
  }

  // Throws std::logic_error when kind `index` is routed already.
  void claim(size_t index, delivery how);

  template <class T, class F> void add(delivery how, F f) {
    constexpr auto i = index_of<T>();
    claim(i, how);
    routes_[i].run = [f = std::move(f)](const std::string& peer, wire_msg::message&& m) {
      f(peer, std::get<i>(std::move(m)));
    };
  }

  struct route {
    delivery how = delivery::none;
    handler run;
  };
  poster post_;
  std::array<route, std::variant_size_v<wire_msg::message>> routes_;
};

} // namespace swarm::actors
