// A pipeline of actors across a local cluster of three node processes: tokenize on
// worker-1, embed on two replicas (one on each worker), mean-pool on the head. The
// builder checks at compile time that each stage takes what the one before returns;
// at most `window` documents are in flight, so a slow stage slows the source.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
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

struct tokenizer : swarm::actor {
  std::vector<std::string> tokenize(std::string text) {
    std::istringstream in{text};
    std::vector<std::string> tokens;
    for (std::string word; in >> word;)
      tokens.push_back(word);
    return tokens;
  }
};

struct embedder : swarm::actor {
  std::vector<embedding> embed(std::vector<std::string> tokens) {
    std::vector<embedding> out;
    for (auto& t : tokens)
      out.push_back(embed_token(t));
    return out;
  }
};

struct pooler : swarm::actor {
  long documents = 0;
  /// Mean-pools a document's token embeddings into one.
  embedding pool(std::vector<embedding> vectors) {
    ++documents;
    embedding m(8, 0.0f);
    for (auto& v : vectors)
      for (size_t i = 0; i < m.size(); ++i)
        m[i] += v[i] / static_cast<float>(vectors.size());
    return m;
  }
};

swarm::stage_options on(std::vector<std::string> nodes) {
  swarm::stage_options o;
  o.replicas = static_cast<uint32_t>(nodes.size());
  o.nodes = std::move(nodes);
  return o;
}

int main() {
  swarm::application app; // registered before the workers are forked: they share it
  auto tokenizer_t =
      app.actor_type<tokenizer>("tokenizer").method("tokenize", &tokenizer::tokenize);
  auto embedder_t =
      app.actor_type<embedder>("embedder").method("embed", &embedder::embed);
  auto pooler_t = app.actor_type<pooler>("pooler").method("pool", &pooler::pool);

  swarm::local_cluster_config lc;
  lc.nodes = 3; // this process is the head; worker-1 and worker-2 are forked
  lc.cpus_per_node = 1;
  swarm::runtime rt{app, lc};

  auto run = swarm::pipeline<std::string>{}
                 .then(tokenizer_t, &tokenizer::tokenize, on({"worker-1"}))
                 .then(embedder_t, &embedder::embed, on({"worker-1", "worker-2"}))
                 .then(pooler_t, &pooler::pool, on({"head"}))
                 .start(rt, /*window=*/2);

  const std::vector<std::string> docs{"the quick brown fox", "jumps over", "the lazy dog",
                                      "and the end"};
  // Pushing waits while two documents are in flight; the reader below takes them.
  std::thread feeder{[&] {
    for (auto& d : docs)
      run.push(d).value();
    run.close();
  }};
  int bad = 0;
  for (auto& d : docs) {
    embedding expected(8, 0.0f);
    std::istringstream in{d};
    std::vector<embedding> tokens;
    for (std::string word; in >> word;)
      tokens.push_back(embed_token(word));
    for (auto& e : tokens)
      for (size_t k = 0; k < expected.size(); ++k)
        expected[k] += e[k] / static_cast<float>(tokens.size());
    auto got = run.next().value(); // outputs come in the order documents went in
    bool same = got && got->size() == expected.size();
    for (size_t k = 0; same && k < expected.size(); ++k)
      same = std::fabs((*got)[k] - expected[k]) < 1e-5f;
    std::printf("\"%s\": pooled embedding[0] = %.4f, %s\n", d.c_str(),
                got ? (*got)[0] : -1.0f, same ? "as computed here" : "WRONG");
    bad += !same;
  }
  feeder.join();
  bad += run.next().value().has_value(); // closed and drained: nothing more
  return bad;
}
