// Writes the seed corpus of the fuzz targets: `fuzz_make_corpus DIR` fills
// DIR/<target>/ with a few small valid inputs per target (scripts/fuzz.sh corpus runs it
// on tests/fuzz/corpus). The inputs follow each target's input format, described at the
// top of its source.

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/fuzz/sample.hpp"
#include "transport/codec.hpp"
#include "transport/wire_codec.hpp"
#include "transport/wire_samples.hpp"

namespace {

using bytes = std::vector<uint8_t>;
namespace wire = swarm::wire_msg;

bool write(const std::string& path, const bytes& b) {
  std::ofstream out{path, std::ios::binary};
  out.write(reinterpret_cast<const char*>(b.data()),
            static_cast<std::streamsize>(b.size()));
  return static_cast<bool>(out);
}

bool write_all(const std::string& dir, const std::string& target,
               const std::vector<bytes>& seeds) {
  auto sub = dir + "/" + target;
  ::mkdir(sub.c_str(), 0755);
  for (size_t i = 0; i < seeds.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/seed-%02zu", i);
    if (!write(sub + name, seeds[i])) return false;
  }
  return true;
}

bytes with_prefix(bytes prefix, const bytes& rest) {
  prefix.insert(prefix.end(), rest.begin(), rest.end());
  return prefix;
}

std::vector<bytes> frame_decoder_seeds() {
  wire::task_submit t;
  t.function = "add";
  t.args.emplace_back(wire::value{"int", {1, 0, 0, 0}});
  t.args.emplace_back(wire::remote_ref{{3, 9}, "worker-1", 1 << 20});
  t.result = {3, 10};
  t.resources = {{"CPU", 1.0}};
  t.owner_node = "head";
  std::vector<wire::message> messages = {
      wire::hello{"head", bytes(32, 7), 1},
      wire::heartbeat{123456789, 0.75, {{"CPU", 1.5}}, 4},
      t,
      wire::task_result{{3, 11}, wire::error_value{0, "boom"}},
      wire::object_chunk{{bytes(64, 0xab)}, {1, 2}, 0, 64},
      wire::node_table{
          {wire::node_info{
              "head", "127.0.0.1", 7100, {{"CPU", 2}}, {{"CPU", 1}}, 3, true, true, 12}},
          {wire::job_info{7, "head", 4242, true, 1000, 0}}},
      wire::node_table{{},
                       {},
                       12,
                       11,
                       {wire::node_change{"worker-1", false, 2500, {{"CPU", 0.5}}, 7, 2}},
                       {"client-1"}},
      wire::heartbeat{123456790, 0.5, {}, 1, {}, 0, {}, true},
      wire::task_cancel{{3, 11}},
      wire::actor_create{3,
                         "ledger",
                         {wire::value{"int", {5, 0, 0, 0}}},
                         "ledger-1",
                         {},
                         2,
                         "head",
                         true,
                         {1, 2, 3},
                         5},
      wire::gcs_chain{
          3, wire::gcs_chain::kind_type::write, 77, 12, {"head", "worker-1"}, {1, 2}},
      wire::kv_request{4, wire::kv_request::op_type::put, "key", {1, 2, 3}},
      wire::group_ask{6, wire::group_ask::kind_type::create, 42, {{{"CPU", 1}}}, 1},
      wire::object_borrow{{3, 14}},
      wire::object_borrowed{{3, 14},
                            true,
                            wire::object_borrowed::state_type::ready,
                            wire::remote_ref{{3, 14}, "worker-1", 1 << 20, {}},
                            {}},
      wire::stream_item{{3, 10}, 7, {{9, 7}, wire::value{"int", {7, 0, 0, 0}}}},
      wire::stream_ack{{3, 10}, 8},
      wire::client_ask{11},
      wire::job_submit{12, {"./train", "--epochs", "3"}, "/tmp"},
      wire::job_ask{13, wire::job_ask::kind_type::output, 2, 4096},
      wire::job_answer{13,
                       true,
                       {},
                       {{2, "./train", 4242, "running", 0, 5, 0}},
                       {'o', 'k', '\n'},
                       4099},
      wire::client_welcome{11,
                           true,
                           {},
                           "test",
                           9,
                           {wire::node_table{}.nodes},
                           100,
                           1000,
                           30000,
                           2,
                           1,
                           1 << 17,
                           64 << 20},
  };
  // A node stopping: its heartbeat, its row, and a change saying so.
  wire::heartbeat leaving;
  leaving.leaving = true;
  wire::node_info stopping{"worker-2", "127.0.0.1", 7102, {{"CPU", 1}}};
  stopping.alive = true;
  stopping.leaving = true;
  wire::node_change stopping_change{"worker-2"};
  stopping_change.leaving = true;
  messages.push_back(leaving);
  messages.push_back(wire::node_table{{stopping}, {}, 14, 13, {stopping_change}, {}});
  messages.push_back(wire::task_placed{{3, 12}, "worker-2", 1764100000123});
  // Every kind the schema declares, each field set (generated from wire.capnp).
  for (auto& m : wire::sample_messages())
    messages.push_back(std::move(m));
  std::vector<bytes> seeds;
  bytes stream;
  for (auto& m : messages) {
    auto frame = wire::encode_frame(m);
    seeds.push_back(with_prefix({0x3f}, frame)); // whole, fed at once
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  seeds.push_back(with_prefix({0x06}, stream));               // 7-byte chunks, fed
  seeds.push_back(with_prefix({0x40 | 0x80 | 0x0c}, stream)); // one per commit, prepare
  return seeds;
}

using swarm::fuzz::sample;

// The type indices are those of `types` in fuzz_value_codec.cpp.
std::vector<bytes> value_codec_seeds() {
  sample s{7, "layer", {1.5, -2.25}, true, {3, "t"}, {std::nullopt, 9}};
  return {
      with_prefix({0}, swarm::encode(int64_t{-42})),
      with_prefix({1}, swarm::encode(std::string{"hello"})),
      with_prefix({2}, swarm::encode(bytes{1, 2, 3, 255})),
      with_prefix({3}, swarm::encode(std::vector<std::string>{"a", "", "bc"})),
      with_prefix({4}, swarm::encode(std::map<std::string, int64_t>{{"a", 1}, {"b", 2}})),
      with_prefix({5}, swarm::encode(std::optional<std::string>{"x"})),
      with_prefix({6}, swarm::encode(std::vector<std::vector<int32_t>>{{1, 2}, {}, {3}})),
      with_prefix({7}, swarm::encode(s)),
      with_prefix({11}, swarm::encode(std::map<int32_t, std::vector<sample>>{{1, {s}}})),
  };
}

std::vector<bytes> text_seeds(const std::vector<std::string>& texts) {
  std::vector<bytes> out;
  for (auto& t : texts)
    out.emplace_back(t.begin(), t.end());
  return out;
}

std::vector<bytes> cluster_config_seeds() {
  return text_seeds({
      // The smallest valid file.
      "[cluster]\nsecret = \"0123456789abcdef\"\n\n[[node]]\nname = \"head\"\n"
      "address = \"127.0.0.1\"\nport = 7100\nrole = \"head\"\n",
      // Every key.
      "[cluster]\nname = \"c\"\nsecret = \"0123456789abcdef\"\ngcs_shards = 4\n"
      "gcs_replication = 2\ngcs_dir = \"/var/lib/swarm\"\nheartbeat_ms = 100\n"
      "node_timeout_ms = 1000\n\n[limits]\nobject_store = \"2GiB\"\n"
      "inline_threshold = \"100KiB\"\nmax_message = \"64MiB\"\n\n"
      "[[node]]\nname = \"head\"\naddress = \"localhost\"\nport = 7100\nrole = \"head\"\n"
      "cpus = \"discover\"\ngpus = 0\n\n"
      "[[node]]\nname = \"w1\"\naddress = \"127.0.0.1\"\nport = 7101\ncpus = 0.5\n"
      "gpus = \"discover\"\nresources = { TPU = 2, ssd = 1.5 }\n",
      // Errors: two heads, an unknown key, a bad byte size.
      "[cluster]\nsecret = \"0123456789abcdef\"\n[[node]]\nname = \"a\"\n"
      "address = \"10.0.0.1\"\nport = 1\nrole = \"head\"\n[[node]]\nname = \"b\"\n"
      "address = \"10.0.0.2\"\nport = 2\nrole = \"head\"\n",
      "[cluster]\nsecret = \"0123456789abcdef\"\ncolour = 3\n[limits]\n"
      "max_message = \"12XB\"\n",
  });
}

bytes gcs_input(uint8_t mode, uint32_t param, const bytes& data) {
  bytes out{mode};
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(param >> (8 * i)));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// Modes and parameters as fuzz_gcs_log.cpp reads them.
std::vector<bytes> gcs_log_seeds() {
  // A payload that is a valid erase of kv/"k": op 2, table and key with u32 lengths.
  bytes erase{2, 2, 0, 0, 0, 'k', 'v', 1, 0, 0, 0, 'k'};
  return {
      gcs_input(0, 100, {}),                // log cut inside a record
      gcs_input(0x80, 30, {}),              // snapshot cut short
      gcs_input(1, 40, {0xff, 0x00, 0x13}), // log overwritten
      gcs_input(0x81, 25, {0x01}),          // snapshot overwritten
      gcs_input(2, 0, bytes(16, 0)),        // zeros appended to the log
      gcs_input(3, 2, erase),               // a log record replaced by a valid erase
      gcs_input(0x83, 1, {1, 0, 0}),        // a snapshot record replaced by garbage
  };
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  ::mkdir(dir.c_str(), 0755);
  bool ok = write_all(dir, "frame_decoder", frame_decoder_seeds()) &&
            write_all(dir, "value_codec", value_codec_seeds()) &&
            write_all(dir, "cluster_config", cluster_config_seeds()) &&
            write_all(dir, "gcs_log", gcs_log_seeds());
  if (!ok) std::fprintf(stderr, "cannot write the corpus under %s\n", dir.c_str());
  return ok ? 0 : 1;
}
