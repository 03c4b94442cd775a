// The names of the fragments of docs/guide/benchmarks.md.
#pragma once

#include <cstdio>
#include <string>

#include <swarm/swarm.hpp>

struct tokenizer : swarm::actor {
  long count_words(std::string sentence);
};

#define SWARM_FRAGMENT_PARAMETERS swarm::actor_handle<tokenizer> tok, std::string sentence
