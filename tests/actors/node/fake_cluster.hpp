#pragma once

// The cluster of the protocol's tests: three nodes on the fake network (fake_nodes.hpp),
// the test choosing what is delivered, dropped or held back.

#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "tests/actors/node/fake_nodes.hpp"

namespace swarm::fake_test {

using namespace std::chrono_literals;
using namespace swarm::cluster_test;
using swarm::wire_msg::fake_network;

/// The protocol tests' cluster: fails the test when the three nodes do not form.
struct fake_cluster : fake_nodes {
  /// `tune` changes the configuration before the nodes start.
  explicit fake_cluster(size_t store_bytes = 0,
                        const std::function<void(cluster_config&)>& tune = {})
      : fake_nodes(store_bytes, tune) {
    REQUIRE(formed);
  }

  static task_options on(const std::string& node) {
    task_options o;
    o.node = node;
    return o;
  }

  /// Counts, without changing anything, the messages `pred` selects.
  std::shared_ptr<std::atomic<size_t>> spy(fake_network::predicate pred) {
    auto n = std::make_shared<std::atomic<size_t>>(0);
    net.drop_if([n, pred](auto& from, auto& to, auto& m) {
      if (pred(from, to, m)) ++*n;
      return false;
    });
    return n;
  }
};

template <class T> bool is(const wire_msg::message& m) {
  return std::holds_alternative<T>(m);
}

} // namespace swarm::fake_test
