// The names of the fragments of docs/guide/pipelines_and_streams.md.
#pragma once

#include <string>
#include <vector>

#include <swarm/swarm.hpp>

struct tokenizer : swarm::actor {
  std::vector<std::string> split(std::string line);
};
struct embedder : swarm::actor {
  std::vector<float> embed(std::vector<std::string> words);
};
struct audit : swarm::actor {
  bool record(std::vector<float> embedding);
};
struct aggregator : swarm::actor {
  double add(std::vector<float> embedding);
};

void use(double mean);

std::vector<std::string> generate(const std::string& prompt);
void tokens(swarm::stream_writer<std::string>& out, std::string prompt);
void print(const std::string& token);

#define SWARM_FRAGMENT_PARAMETERS                                                        \
  swarm::application &app, swarm::runtime &rt,                                           \
      swarm::actor_class<tokenizer> tokenizer_t,                                         \
      swarm::actor_class<embedder> embedder_t, swarm::actor_class<audit> audit_t,        \
      swarm::actor_class<aggregator> aggregator_t, swarm::stage_options four_on_gpus,    \
      std::string text, std::string prompt
