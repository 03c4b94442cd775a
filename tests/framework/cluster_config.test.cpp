#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "framework/cluster_config.hpp"
#include "framework/secret_weakness.hpp"

namespace {

const char* valid = R"(
[cluster]
secret = "0123456789abcdef"
gcs_shards = 2

[[node]]
name = "head"
address = "127.0.0.1"
port = 7100
role = "head"

[[node]]
name = "w1"
address = "127.0.0.1"
port = 7101
cpus = 1.5
gpus = 2
resources = { TPU = 4 }
)";

std::string error_of(const std::string& text) {
  auto r = swarm::parse_cluster_config(text, "cluster.toml");
  REQUIRE_FALSE(r);
  return r.err().message;
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

} // namespace

TEST_CASE("a valid cluster file gives every node its resources and the head") {
  auto cfg = swarm::parse_cluster_config(valid, "cluster.toml").value();
  CHECK(cfg.gcs_shards == 2);
  REQUIRE(cfg.nodes.size() == 2);
  CHECK(cfg.head().name == "head");
  auto* w1 = cfg.find("w1").value();
  CHECK(w1->cpus == 1.5);
  auto rt = cfg.runtime_for(*w1);
  CHECK(rt.cpus == 1.5);
  CHECK(rt.extra_resources.get("GPU") == 2);
  CHECK(rt.extra_resources.get("TPU") == 4);
  CHECK_FALSE(cfg.head().cpus.has_value()); // discover
  CHECK(cfg.find("nobody").err().message.find("head, w1") != std::string::npos);
}

TEST_CASE("a value of the wrong type is rejected with its line and key") {
  auto msg = error_of(replace(valid, "port = 7101", "port = \"7101\""));
  CHECK(msg.find("cluster.toml:15:") != std::string::npos);
  CHECK(msg.find("node[1] (w1).port") != std::string::npos);
  CHECK(msg.find("must be an integer") != std::string::npos);
}

TEST_CASE("a value out of range is rejected with the range and the value") {
  auto msg = error_of(replace(valid, "port = 7101", "port = 70000"));
  CHECK(msg.find("between 1 and 65535, got 70000") != std::string::npos);
}

TEST_CASE("every number is checked against its range, naming the key and the range") {
  auto cpus = error_of(replace(valid, "cpus = 1.5", "cpus = 1e300"));
  CHECK(cpus.find("cluster.toml:16:") != std::string::npos);
  CHECK(cpus.find("node[1] (w1).cpus") != std::string::npos);
  CHECK(cpus.find("between 0 and 4096") != std::string::npos);
  auto gpus = error_of(replace(valid, "gpus = 2", "gpus = 9223372036854775807"));
  CHECK(gpus.find("node[1] (w1).gpus") != std::string::npos);
  CHECK(gpus.find("an integer between 0 and 1024") != std::string::npos);
  auto tpu = error_of(replace(valid, "TPU = 4", "TPU = 1e300"));
  CHECK(tpu.find("node[1] (w1).resources.TPU") != std::string::npos);
  CHECK(tpu.find("between 0 and 1e+15") != std::string::npos);
  auto store =
      error_of(replace(valid, "gcs_shards = 2",
                       "gcs_shards = 2\n[limits]\nobject_store = 2000000000000000000"));
  CHECK(store.find("limits.object_store") != std::string::npos);
  CHECK(store.find("between 1 and 1PiB") != std::string::npos);
  auto message = error_of(replace(valid, "gcs_shards = 2",
                                  "gcs_shards = 2\n[limits]\nmax_message = \"1MiB\""));
  CHECK(message.find("limits.max_message") != std::string::npos);
  CHECK(message.find("between 4MiB and 256MiB, got 1MiB") != std::string::npos);
}

TEST_CASE("a node's stop deadline defaults to 20 s and stop_timeout_ms sets it within "
          "its range") {
  CHECK(swarm::parse_cluster_config(valid, "cluster.toml")->stop_timeout ==
        std::chrono::milliseconds{20000});
  auto set = swarm::parse_cluster_config(
      replace(valid, "gcs_shards = 2", "gcs_shards = 2\nstop_timeout_ms = 1500"),
      "cluster.toml");
  REQUIRE(set);
  CHECK(set->stop_timeout == std::chrono::milliseconds{1500});
  auto msg =
      error_of(replace(valid, "gcs_shards = 2", "gcs_shards = 2\nstop_timeout_ms = 5"));
  CHECK(msg.find("cluster.stop_timeout_ms") != std::string::npos);
  CHECK(msg.find("between 100 and 3600000") != std::string::npos);
}

TEST_CASE("idle connections close after a minute by default, idle_connection_ms sets "
          "it, 0 never, and a time the heartbeats would never reach is refused") {
  using std::chrono::milliseconds;
  CHECK(swarm::parse_cluster_config(valid, "cluster.toml")->idle_connection ==
        milliseconds{60000});
  auto with = [&](const std::string& lines) {
    return replace(valid, "gcs_shards = 2", "gcs_shards = 2\n" + lines);
  };
  CHECK(swarm::parse_cluster_config(with("idle_connection_ms = 0"), "cluster.toml")
            ->idle_connection == milliseconds{0});
  CHECK(swarm::parse_cluster_config(with("idle_connection_ms = 5000"), "cluster.toml")
            ->idle_connection == milliseconds{5000});
  // Slow heartbeats move the default past them.
  CHECK(swarm::parse_cluster_config(with("heartbeat_ms = 20000\nnode_timeout_ms = 60000"),
                                    "cluster.toml")
            ->idle_connection == milliseconds{160000});
  auto msg = error_of(with("idle_connection_ms = 1000"));
  CHECK(msg.find("cluster.toml:5:") != std::string::npos);
  CHECK(msg.find("cluster.idle_connection_ms") != std::string::npos);
  CHECK(msg.find("longer than four times cluster.heartbeat_ms") != std::string::npos);
}

TEST_CASE("a max_message smaller than the inline threshold is a contradiction") {
  auto msg = error_of(replace(valid, "gcs_shards = 2",
                              "gcs_shards = 2\n[limits]\ninline_threshold = \"8MiB\"\n"
                              "max_message = \"4MiB\""));
  CHECK(msg.find("cluster.toml:7:") != std::string::npos);
  CHECK(msg.find("limits.max_message") != std::string::npos);
  CHECK(msg.find("smaller than limits.inline_threshold (8MiB)") != std::string::npos);
  // The default max_message (64 MiB) counts too.
  CHECK(error_of(replace(valid, "gcs_shards = 2",
                         "gcs_shards = 2\n[limits]\ninline_threshold = \"128MiB\""))
            .find("smaller than limits.inline_threshold (128MiB)") != std::string::npos);
}

TEST_CASE("a host name is resolved to its IPv4 address when the file is read") {
  auto cfg = swarm::parse_cluster_config(
                 replace(valid, "address = \"127.0.0.1\"", "address = \"localhost\""),
                 "cluster.toml")
                 .value();
  CHECK(cfg.head().address.rfind("127.", 0) == 0);
  // The same endpoint under two names is still one endpoint.
  auto same =
      replace(replace(valid, "address = \"127.0.0.1\"", "address = \"localhost\""),
              "port = 7101", "port = 7100");
  CHECK(error_of(same).find("127.0.0.1:7100 is used") != std::string::npos);
  auto msg = error_of(
      replace(valid, "address = \"127.0.0.1\"", "address = \"no-such-host.invalid\""));
  CHECK(msg.find("cluster.toml:8:") != std::string::npos);
  CHECK(msg.find("node[0] (head).address") != std::string::npos);
  CHECK(msg.find("'no-such-host.invalid' is neither an IPv4 address nor a host name") !=
        std::string::npos);
}

TEST_CASE("a file that is not valid UTF-8 is refused with the byte's offset") {
  auto text = replace(valid, "name = \"w1\"",
                      "name = \"w\xff"
                      "1\"");
  auto at = text.find('\xff');
  auto msg = error_of(text);
  CHECK(msg.find("cluster.toml:13:10: not valid UTF-8 at byte offset " +
                 std::to_string(at)) != std::string::npos);
  // Overlong forms, surrogates and truncated sequences are not UTF-8 either.
  for (const char* bad : {"\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"})
    CHECK(
        error_of(replace(valid, "name = \"w1\"", std::string{"name = \"w"} + bad + "\""))
            .find("not valid UTF-8") != std::string::npos);
  // Valid multi-byte text passes.
  CHECK(swarm::parse_cluster_config(
      replace(valid, "name = \"w1\"", "name = \"w\xc3\xa9\""), "cluster.toml"));
}

TEST_CASE("an unknown key is rejected instead of silently ignored") {
  auto msg = error_of(replace(valid, "gcs_shards = 2", "gcs_shard = 2"));
  CHECK(msg.find("cluster.gcs_shard") != std::string::npos);
  CHECK(msg.find("unknown key") != std::string::npos);
  CHECK(msg.find("gcs_shards") != std::string::npos); // the known keys are listed
}

TEST_CASE("a cluster without exactly one head is rejected") {
  CHECK(error_of(replace(valid, "role = \"head\"", "role = \"worker\""))
            .find("exactly one node must have role = \"head\", found 0") !=
        std::string::npos);
  CHECK(error_of(replace(valid, "role = \"head\"", "role = \"boss\""))
            .find("must be \"head\" or \"worker\"") != std::string::npos);
}

TEST_CASE("repeated node names and endpoints are rejected") {
  CHECK(error_of(replace(valid, "name = \"w1\"", "name = \"head\"")).find("repeats") !=
        std::string::npos);
  CHECK(error_of(replace(valid, "port = 7101", "port = 7100"))
            .find("127.0.0.1:7100 is used") != std::string::npos);
}

TEST_CASE("a short or missing secret is rejected") {
  CHECK(error_of(replace(valid, "0123456789abcdef", "short")).find("at least 16") !=
        std::string::npos);
  CHECK(error_of(replace(valid, "secret = \"0123456789abcdef\"", ""))
            .find("cluster.secret") != std::string::npos);
}

TEST_CASE("[http] sets the token, threads and request timeout of the metrics and the "
          "dashboard, and refuses a token that is short, unprintable or the secret") {
  auto plain = swarm::parse_cluster_config(valid, "cluster.toml").value();
  CHECK(plain.http.token.empty());
  CHECK(plain.http.threads == 8);
  CHECK(plain.http.request_timeout == std::chrono::milliseconds{5000});
  auto with = [](const std::string& table) {
    return std::string{valid} + "\n[http]\n" + table;
  };
  auto cfg = swarm::parse_cluster_config(with("token = \"scrape-9f86d081884c7d65\"\n"
                                              "threads = 4\nrequest_timeout_ms = 1500\n"),
                                         "cluster.toml")
                 .value();
  CHECK(cfg.http.token == "scrape-9f86d081884c7d65");
  CHECK(cfg.http.threads == 4);
  CHECK(cfg.http.request_timeout == std::chrono::milliseconds{1500});
  // Every node serves so: its runtime gets the table.
  CHECK(cfg.runtime_for(cfg.nodes.back()).http.token == "scrape-9f86d081884c7d65");
  CHECK(error_of(with("token = \"short\"\n")).find("http.token") != std::string::npos);
  CHECK(error_of(with("token = \"two words 0123456789\"\n")).find("without spaces") !=
        std::string::npos);
  CHECK(error_of(with("token = \"0123456789abcdef\"\n"))
            .find("must differ from "
                  "cluster.secret") != std::string::npos);
  CHECK(error_of(with("threads = 0\n")).find("http.threads") != std::string::npos);
  CHECK(error_of(with("request_timeout_ms = 5\n")).find("http.request_timeout_ms") !=
        std::string::npos);
  CHECK(error_of(with("tokens = \"x\"\n")).find("unknown key") != std::string::npos);
  // The job token is a permission of its own: not the scrapers' token either.
  CHECK(error_of(with("token = \"scrape-9f86d081884c7d65\"\n[jobs]\n"
                      "token = \"scrape-9f86d081884c7d65\"\n"))
            .find("jobs.token") != std::string::npos);
  auto jobs = swarm::parse_cluster_config(
                  with("token = \"scrape-9f86d081884c7d65\"\n[jobs]\ntoken = "
                       "\"jobs-0b1c2d3e4f5a6978\"\nrun_as = \"nobody\"\n"),
                  "cluster.toml")
                  .value();
  CHECK(jobs.jobs.token == "jobs-0b1c2d3e4f5a6978");
  CHECK(jobs.jobs.run_as == "nobody");
  CHECK(error_of(std::string{valid} + "\n[jobs]\nrun_as = \"nobody\"\n")
            .find("jobs.token") != std::string::npos);
}

TEST_CASE("a placeholder secret or one of little entropy is named weak, a random one "
          "is not") {
  CHECK(swarm::secret_weakness("change-me-to-a-long-random-string")
            .find("the example's placeholder") != std::string::npos);
  CHECK(swarm::secret_weakness("ChangeMe-ChangeMe-ChangeMe") != "");
  auto low = swarm::secret_weakness("aaaaaaaaaaaaaaaaaaaaaaaa");
  CHECK(low.find("about 0 bits of entropy, fewer than 64") != std::string::npos);
  CHECK(swarm::secret_weakness("passwordpassword") != ""); // 16 characters, 44 bits
  CHECK(swarm::secret_weakness("0123456789abcdef") == ""); // 16 distinct: 64 bits
  CHECK(swarm::secret_weakness(
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
            .empty());
}

TEST_CASE("broken TOML is reported with its place") {
  auto msg = error_of("[cluster\nsecret = 1");
  CHECK(msg.find("cluster.toml:1:") != std::string::npos);
  CHECK(msg.find("not valid TOML") != std::string::npos);
}

TEST_CASE("byte sizes take binary and decimal units") {
  CHECK(swarm::parse_byte_size("512") == 512u);
  CHECK(swarm::parse_byte_size("100KiB") == 102400u);
  CHECK(swarm::parse_byte_size("1.5MB") == 1500000u);
  CHECK(swarm::parse_byte_size("4GiB") == (size_t{4} << 30));
  CHECK(swarm::parse_byte_size("1PiB") == (size_t{1} << 50));
  CHECK_FALSE(swarm::parse_byte_size("4 parsecs"));
  CHECK_FALSE(swarm::parse_byte_size("GiB"));
  auto msg = error_of(replace(valid, "gcs_shards = 2",
                              "gcs_shards = 2\n[limits]\nobject_store = \"lots\""));
  CHECK(msg.find("limits.object_store") != std::string::npos);
}

TEST_CASE(
    "the store's pool of freed memory is set per cluster, a quarter of the store unset") {
  auto unset = swarm::parse_cluster_config(valid, "cluster.toml").value();
  CHECK_FALSE(unset.runtime_for(unset.head()).object_pool_bytes.has_value());
  auto cfg = swarm::parse_cluster_config(
                 replace(valid, "gcs_shards = 2",
                         "gcs_shards = 2\n[limits]\nobject_pool = \"0\""),
                 "cluster.toml")
                 .value();
  CHECK(cfg.runtime_for(cfg.head()).object_pool_bytes == size_t{0});
  auto msg = error_of(
      replace(valid, "gcs_shards = 2", "gcs_shards = 2\n[limits]\nobject_pool = -1"));
  CHECK(msg.find("limits.object_pool") != std::string::npos);
}

TEST_CASE("spilling is on by default, and [limits] sets its folder and limit or turns it "
          "off") {
  auto unset = swarm::parse_cluster_config(valid, "cluster.toml").value();
  auto rt = unset.runtime_for(unset.head());
  CHECK(rt.spill);
  CHECK(rt.spill_dir.empty());
  CHECK(rt.spill_limit_bytes == 0);
  auto cfg = swarm::parse_cluster_config(
                 replace(valid, "gcs_shards = 2",
                         "gcs_shards = 2\n[limits]\nspill_dir = \"/var/tmp/s\"\n"
                         "spill_limit = \"2GiB\""),
                 "cluster.toml")
                 .value();
  rt = cfg.runtime_for(cfg.nodes[1]);
  CHECK(rt.spill_dir == "/var/tmp/s");
  CHECK(rt.spill_limit_bytes == size_t{2} << 30);
  auto off =
      swarm::parse_cluster_config(
          replace(valid, "gcs_shards = 2", "gcs_shards = 2\n[limits]\nspill = false"),
          "cluster.toml")
          .value();
  CHECK_FALSE(off.runtime_for(off.head()).spill);
  auto msg = error_of(
      replace(valid, "gcs_shards = 2", "gcs_shards = 2\n[limits]\nspill = \"yes\""));
  CHECK(msg.find("key `limits.spill`: must be true or false") != std::string::npos);
}

TEST_CASE("gcs replication cannot exceed the number of nodes") {
  auto msg = error_of(replace(valid, "gcs_shards = 2", "gcs_replication = 3"));
  CHECK(msg.find("only 2 node(s)") != std::string::npos);
}

TEST_CASE("gcs_hosts spreads the key-value shards over several nodes, replicated and in "
          "memory, or is refused saying why") {
  auto cfg = swarm::parse_cluster_config(
                 replace(valid, "gcs_shards = 2", "gcs_hosts = 2\ngcs_replication = 2"),
                 "cluster.toml")
                 .value();
  CHECK(cfg.gcs_hosts == 2);
  CHECK(cfg.runtime_for(cfg.head()).gcs_hosts == 2);
  auto msg =
      error_of(replace(valid, "gcs_shards = 2", "gcs_hosts = 3\ngcs_replication = 2"));
  CHECK(msg.find("cluster.gcs_hosts") != std::string::npos);
  CHECK(msg.find("only 2 node(s)") != std::string::npos);
  msg = error_of(replace(valid, "gcs_shards = 2", "gcs_hosts = 2"));
  CHECK(msg.find("need gcs_replication >= 2") != std::string::npos);
  msg = error_of(replace(valid, "gcs_shards = 2",
                         "gcs_hosts = 2\ngcs_replication = 2\ngcs_dir = \"/var/gcs\""));
  CHECK(msg.find("not persisted: remove gcs_dir or set gcs_hosts = 1") !=
        std::string::npos);
}

TEST_CASE("gcs_dir gives the head a control-store directory of its own name") {
  auto none = swarm::parse_cluster_config(valid, "cluster.toml").value();
  CHECK(none.gcs_dir.empty());
  CHECK(none.runtime_for(none.head()).gcs_dir.empty());
  auto cfg =
      swarm::parse_cluster_config(
          replace(valid, "gcs_shards = 2", "gcs_shards = 2\ngcs_dir = \"/var/gcs\""),
          "cluster.toml")
          .value();
  CHECK(cfg.gcs_dir == "/var/gcs");
  CHECK(cfg.runtime_for(cfg.head()).gcs_dir == "/var/gcs/head");
  // Workers hold no control-store tables.
  CHECK(cfg.runtime_for(*cfg.find("w1").value()).gcs_dir.empty());
}

TEST_CASE(
    "a gcs_dir that is not a string, or a node name unfit for a path, is rejected") {
  auto msg = error_of(replace(valid, "gcs_shards = 2", "gcs_shards = 2\ngcs_dir = 7"));
  CHECK(msg.find("cluster.toml:5:") != std::string::npos);
  CHECK(msg.find("`cluster.gcs_dir`: must be a string") != std::string::npos);
  auto with_dir =
      replace(valid, "gcs_shards = 2", "gcs_shards = 2\ngcs_dir = \"/var/gcs\"");
  msg = error_of(replace(with_dir, "name = \"w1\"", "name = \"../w1\""));
  CHECK(msg.find("node[1] (../w1).name") != std::string::npos);
  CHECK(msg.find("directory name under cluster.gcs_dir") != std::string::npos);
  // The same name is fine while nothing persists.
  CHECK(swarm::parse_cluster_config(replace(valid, "name = \"w1\"", "name = \"../w1\""),
                                    "cluster.toml"));
}

TEST_CASE("[code] libraries lists the user code to load, and anything but a list of "
          "paths is rejected with its line") {
  auto cfg =
      swarm::parse_cluster_config(
          replace(valid, "[[node]]", "[code]\nlibraries = [\"a/libapp.so\"]\n\n[[node]]"),
          "cluster.toml")
          .value();
  CHECK(cfg.code_libraries == std::vector<std::string>{"a/libapp.so"});
  for (auto bad :
       {"libraries = \"libapp.so\"", "libraries = [\"\"]", "libraries = [1]"}) {
    auto msg = error_of(
        replace(valid, "[[node]]", "[code]\n" + std::string{bad} + "\n\n[[node]]"));
    CHECK(msg.find("cluster.toml:7:") != std::string::npos);
    CHECK(msg.find("code.libraries") != std::string::npos);
    CHECK(msg.find("must be a list of paths") != std::string::npos);
  }
  CHECK(error_of(replace(valid, "[[node]]", "[code]\nlibrary = []\n\n[[node]]"))
            .find("code.library") != std::string::npos);
}

TEST_CASE("every problem of a cluster file is reported, one line each, not only the "
          "first") {
  auto text = replace(replace(valid, "port = 7101", "port = 70000"), "gcs_shards = 2",
                      "gcs_shards = 2\nheartbeat = 5");
  auto msg = error_of(text);
  CHECK(msg.find("between 1 and 65535, got 70000") != std::string::npos);
  CHECK(msg.find("cluster.heartbeat") != std::string::npos);
  CHECK(std::count(msg.begin(), msg.end(), '\n') == 1);
}

TEST_CASE("the log level comes from [log] level, and an unknown one names the levels") {
  auto cfg = swarm::parse_cluster_config(
                 std::string{valid} + "[log]\nlevel = \"debug\"\n", "cluster.toml")
                 .value();
  CHECK(cfg.verbosity == swarm::log_level::debug);
  CHECK(cfg.runtime_for(cfg.head()).verbosity == swarm::log_level::debug);
  CHECK(swarm::parse_cluster_config(valid, "cluster.toml").value().verbosity ==
        swarm::log_level::info);
  auto msg = error_of(std::string{valid} + "[log]\nlevel = \"loud\"\n");
  CHECK(msg.find("log.level") != std::string::npos);
  CHECK(msg.find("unknown log level 'loud' (levels: trace, debug, info, warn, error, "
                 "off)") != std::string::npos);
}

TEST_CASE("only the head serves the dashboard, on a port no other node or port uses") {
  auto ok = swarm::parse_cluster_config(
      replace(valid, "role = \"head\"", "role = \"head\"\ndashboard_port = 9100"),
      "cluster.toml");
  REQUIRE_MESSAGE(ok, ok.err().message);
  CHECK(ok->head().dashboard_port == 9100);
  CHECK_FALSE(ok->find("w1").value()->dashboard_port);
  CHECK(error_of(replace(valid, "cpus = 1.5", "cpus = 1.5\ndashboard_port = 9100"))
            .find("`node[1] (w1).dashboard_port`: only the head serves the dashboard") !=
        std::string::npos);
  CHECK(error_of(replace(valid, "role = \"head\"",
                         "role = \"head\"\nmetrics_port = 9100\ndashboard_port = 9100"))
            .find("dashboard_port`: 127.0.0.1:9100 is used by another node or port") !=
        std::string::npos);
  CHECK(error_of(
            replace(valid, "role = \"head\"", "role = \"head\"\ndashboard_port = 7101"))
            .find("127.0.0.1:7101 is used") != std::string::npos);
}

TEST_CASE("a node's gpu_backend reaches its runtime, and an unknown or countless one is "
          "rejected") {
  auto host =
      swarm::parse_cluster_config(
          replace(valid, "gpus = 2", "gpus = 2\ngpu_backend = \"host\""), "cluster.toml")
          .value();
  auto* w1 = host.find("w1").value();
  CHECK(host.runtime_for(*w1).gpu_backend == "host");
  CHECK(host.runtime_for(host.head()).gpu_backend.empty()); // discover
  auto zero =
      swarm::parse_cluster_config(replace(valid, "gpus = 2", "gpus = 0"), "cluster.toml")
          .value();
  CHECK(zero.runtime_for(*zero.find("w1").value()).gpu_backend == "none");
  auto tpu = error_of(replace(valid, "gpus = 2", "gpus = 2\ngpu_backend = \"tpu\""));
  CHECK(tpu.find("node[1] (w1).gpu_backend") != std::string::npos);
  CHECK(tpu.find("must be \"cuda\" or \"host\", got \"tpu\"") != std::string::npos);
  auto none = error_of(replace(valid, "gpus = 2", "gpu_backend = \"host\""));
  CHECK(none.find("give their number") != std::string::npos);
}

TEST_CASE("an [autoscaler] gives its provider and each node type's resources and "
          "bounds") {
  auto text = std::string{valid} + R"(
[autoscaler]
provider = "command"
start_command = "gcloud compute instances create $SWARM_NODE_NAME"
stop_command = "gcloud compute instances delete $SWARM_NODE_NAME"
max_launching = 3
upscaling_speed = 0.5

[[autoscaler.node_type]]
name = "gpu"
cpus = 8
gpus = 1
resources = { special = 2 }
min = 1
max = 4
idle_timeout_ms = 30000
)";
  auto cfg = swarm::parse_cluster_config(text, "cluster.toml").value();
  auto& a = cfg.autoscaler;
  REQUIRE(a.enabled());
  CHECK(a.provider == swarm::autoscaler_config::provider_type::command);
  CHECK(a.max_launching == 3);
  CHECK(a.upscaling_speed == 0.5);
  CHECK(a.launch_cap(4) == 3);
  CHECK(a.launch_cap(9) == 5);
  REQUIRE(a.node_types.size() == 1);
  auto& t = a.node_types[0];
  CHECK(t.min == 1);
  CHECK(t.max == 4);
  CHECK(t.idle_timeout == std::chrono::seconds(30));
  CHECK(t.total().get("CPU") == 8);
  CHECK(t.total().get("GPU") == 1);
  CHECK(t.total().get("special") == 2);
  CHECK_FALSE(swarm::parse_cluster_config(valid, "cluster.toml").value().autoscaler.enabled());
}

TEST_CASE("an [autoscaler] without node types, with min above max, or a command "
          "provider without its commands is rejected naming the key") {
  auto base = std::string{valid} + "\n[autoscaler]\n";
  CHECK(error_of(base).find("key `autoscaler.node_type`: is required") !=
        std::string::npos);
  auto bounds = base + "[[autoscaler.node_type]]\nname = \"t\"\nmin = 3\nmax = 2\n";
  CHECK(error_of(bounds).find("autoscaler.node_type[0].min`: is 3, more than max (2)") !=
        std::string::npos);
  auto command = std::string{valid} +
                 "\n[autoscaler]\nprovider = \"command\"\n[[autoscaler.node_type]]\n"
                 "name = \"t\"\n";
  CHECK(error_of(command).find("provider \"command\" needs start_command and "
                               "stop_command") != std::string::npos);
  auto speed =
      base + "upscaling_speed = \"fast\"\n[[autoscaler.node_type]]\nname = \"t\"\n";
  CHECK(error_of(speed).find("autoscaler.upscaling_speed`: must be a number between 0 "
                             "and 100") != std::string::npos);
}
