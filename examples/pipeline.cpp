// A pipeline of actors across a local cluster of three node processes: tokenize on
// worker-1, embed on worker-2, aggregate on the head. Each stage is handed its
// successor's handle and hands each item on asynchronously: a method returns the next
// stage's future, so no thread waits anywhere along the way.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "framework/swarm.hpp"

using embedding = std::vector<float>;

/// A toy embedding: 8 numbers derived from the token's characters.
embedding embed_token(const std::string& token) {
  embedding e(8, 0.0f);
  for (size_t i = 0; i < token.size(); ++i)
    e[i % e.size()] += static_cast<float>(static_cast<unsigned char>(token[i])) / 128.0f;
  return e;
}

struct aggregator : swarm::actor {
  embedding sum = embedding(8, 0.0f);
  long count = 0;
  /// Adds a document's embeddings; how many have been added in all.
  long add(std::vector<embedding> vectors) {
    for (auto& v : vectors)
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += v[i];
    count += static_cast<long>(vectors.size());
    return count;
  }
  embedding mean() const {
    auto m = sum;
    for (auto& x : m)
      x /= static_cast<float>(count == 0 ? 1 : count);
    return m;
  }
};

struct embedder : swarm::actor {
  swarm::actor_handle<aggregator> next;
  void link(swarm::actor_handle<aggregator> to) { next = std::move(to); }
  swarm::object_ref<long> embed(std::vector<std::string> tokens) {
    std::vector<embedding> out;
    for (auto& t : tokens)
      out.push_back(embed_token(t));
    return next.call(&aggregator::add, std::move(out));
  }
};

struct tokenizer : swarm::actor {
  swarm::actor_handle<embedder> next;
  void link(swarm::actor_handle<embedder> to) { next = std::move(to); }
  swarm::object_ref<long> feed(std::string text) {
    std::istringstream in{text};
    std::vector<std::string> tokens;
    for (std::string word; in >> word;)
      tokens.push_back(word);
    return next.call(&embedder::embed, std::move(tokens));
  }
};

int main() {
  swarm::application app; // registered before the workers are forked: they share it
  auto tokenizer_t = app.actor_type<tokenizer>("tokenizer")
                         .method("link", &tokenizer::link)
                         .method("feed", &tokenizer::feed);
  auto embedder_t = app.actor_type<embedder>("embedder")
                        .method("link", &embedder::link)
                        .method("embed", &embedder::embed);
  auto aggregator_t = app.actor_type<aggregator>("aggregator")
                          .method("add", &aggregator::add)
                          .method("mean", &aggregator::mean);

  swarm::local_cluster_config lc;
  lc.nodes = 3; // this process is the head; worker-1 and worker-2 are forked
  lc.cpus_per_node = 1;
  swarm::runtime rt{app, lc};

  auto on = [](const char* node) {
    swarm::actor_options o;
    o.node = node;
    return o;
  };
  auto aggregate = rt.spawn(on("head"), aggregator_t);
  auto embed = rt.spawn(on("worker-2"), embedder_t);
  auto tokenize = rt.spawn(on("worker-1"), tokenizer_t);
  embed.call(&embedder::link, aggregate);
  tokenize.call(&tokenizer::link, embed);

  const std::vector<std::string> docs{"the quick brown fox", "jumps over", "the lazy dog",
                                      "and the end"};
  std::vector<swarm::object_ref<long>> counts;
  for (auto& d : docs)
    counts.push_back(tokenize.call(&tokenizer::feed, d));
  int bad = 0;
  long expected = 0;
  embedding sum(8, 0.0f);
  for (size_t i = 0; i < docs.size(); ++i) {
    std::istringstream in{docs[i]};
    for (std::string word; in >> word; ++expected) {
      auto e = embed_token(word);
      for (size_t k = 0; k < sum.size(); ++k)
        sum[k] += e[k];
    }
    auto got = counts[i].get().value();
    std::printf("after \"%s\": %ld tokens aggregated\n", docs[i].c_str(), got);
    bad += got != expected;
  }
  auto mean = aggregate.call(&aggregator::mean).get().value();
  for (size_t k = 0; k < mean.size(); ++k)
    bad += std::fabs(mean[k] - sum[k] / static_cast<float>(expected)) > 1e-4f;
  std::printf("mean embedding[0] = %.4f over %ld tokens: %s\n", mean[0], expected,
              bad == 0 ? "as computed here" : "WRONG");
  return bad == 0 ? 0 : 1;
}
