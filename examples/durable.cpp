// The control store's key-value table and durable objects: state that outlives the
// program that wrote it (and, in a cluster, any one node), read back by name.
#include <cstdio>
#include <string>
#include <vector>

#include "framework/swarm.hpp"

int main() {
  swarm::application app;
  swarm::runtime rt{app};

  // Raw bytes under a key, as Ray's internal KV: a model's version, say.
  if (!rt.kv_put("model/version", {2, 1})) return 1;
  auto version = rt.kv_get("model/version").value();
  std::printf("model/version has %zu bytes\n", version ? version->size() : 0);

  // A durable object: a typed value the control store owns until it is freed, so it
  // outlives the context that put it. Any node reads it by name, with its type checked.
  auto ref =
      rt.put_durable("vocabulary", std::vector<std::string>{"swarm", "ray", "caf"});
  if (!ref) return 1;
  auto words = rt.get_durable<std::vector<std::string>>("vocabulary").value();
  std::printf("vocabulary: %zu words, the first '%s'\n", words.size(), words[0].c_str());
  auto wrong = rt.get_durable<long>("vocabulary");
  std::printf("read as a long: %s\n",
              wrong ? "no error" : wrong.err().to_string().c_str());

  if (!rt.free_durable("vocabulary")) return 1;
  auto gone = rt.get_durable<std::vector<std::string>>("vocabulary");
  std::printf("after free: %s\n", gone ? "still there" : gone.err().to_string().c_str());
  return version && version->size() == 2 && words.size() == 3 && !wrong && !gone ? 0 : 1;
}
