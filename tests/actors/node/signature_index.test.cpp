// The head's index of registered signatures, against which joining nodes are checked.

#include <doctest/doctest.h>

#include "actors/node/signature_index.hpp"

using swarm::actors::signature_index;
using swarm::wire_msg::capability;
using swarm::wire_msg::node_info;

namespace {

node_info node(std::string name, std::vector<capability> functions,
               std::vector<capability> actors = {}) {
  node_info n;
  n.name = std::move(name);
  n.functions = std::move(functions);
  n.actor_types = std::move(actors);
  return n;
}

} // namespace

TEST_CASE("a node registering a function under another signature than a node has it "
          "conflicts, naming both signatures and nodes") {
  signature_index idx;
  idx.add(node("head", {{"add", "int(int, int)"}, {"noop", "void()"}}));
  idx.add(node("w1", {{"add", "int(int, int)"}}));
  CHECK(idx.conflict(node("w2", {{"add", "int(int, int)"}, {"new", "int()"}})).empty());
  auto why = idx.conflict(node("w2", {{"noop", "void()"}, {"add", "long(long)"}}));
  CHECK(why.find("function 'add' is long(long) on node 'w2' but int(int, int) on node") !=
        std::string::npos);
  // Functions and actor types are apart.
  CHECK(idx.conflict(node("w2", {}, {{"add", "counter"}})).empty());
  idx.add(node("w1", {}, {{"counter", "counter(int)"}}));
  CHECK(
      idx.conflict(node("w3", {}, {{"counter", "counter(long)"}})) ==
      "actor type 'counter' is counter(long) on node 'w3' but counter(int) on node 'w1'");
}

TEST_CASE("a node joining again with other signatures conflicts only with the others, "
          "and a node removed conflicts with none") {
  signature_index idx;
  idx.add(node("w1", {{"f", "int()"}}));
  // w1 itself, started again with a new build: nothing else has `f`.
  CHECK(idx.conflict(node("w1", {{"f", "long()"}})).empty());
  idx.add(node("w1", {{"f", "long()"}}));
  idx.add(node("c1", {{"f", "long()"}}));
  CHECK_FALSE(idx.conflict(node("w2", {{"f", "int()"}})).empty());
  idx.remove("w1");
  CHECK(idx.conflict(node("w2", {{"f", "int()"}})) ==
        "function 'f' is int() on node 'w2' but long() on node 'c1'");
  idx.remove("c1");
  CHECK(idx.conflict(node("w2", {{"f", "int()"}})).empty());
}
