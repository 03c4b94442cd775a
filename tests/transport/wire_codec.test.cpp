#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "transport/wire_codec.hpp"
#include "transport/wire_samples.hpp"

using namespace swarm::wire_msg;

namespace {

node_info head_row() {
  node_info n;
  n.name = "head";
  n.address = "127.0.0.1";
  n.port = 7100;
  n.head = true;
  n.incarnation = 1764100000000;
  return n;
}

std::vector<message> samples() {
  task_submit t;
  t.function = "add";
  t.args.emplace_back(value{"int", {1, 0, 0, 0}});
  t.args.emplace_back(remote_ref{{3, 9}, "worker-1", 1 << 20, {"worker-2", "head"}});
  t.owner_node = "head";
  t.replicas = 3;
  t.result = {3, 10};
  t.resources = {{"CPU", 1.0}, {"GPU", 0.5}};
  t.max_retries = 3;
  t.retry_exceptions = true;
  t.priority = -2;
  t.job = "training";
  t.job_share = 3;
  t.stream_owner = (uint64_t{2} << 40) + 5;
  t.stream_window = 16;
  return {
      hello{"head", std::vector<uint8_t>(32, 7), 1},
      proof{std::vector<uint8_t>(32, 9)},
      heartbeat{
          123456789, 0.75, {{"CPU", 1.5}}, 4, {100, 200, 50, 30, 7}, 1, {{5, 2}, {0, 3}}},
      t,
      task_result{{3, 10}, value{"int", {3, 0, 0, 0}}},
      task_result{{3, 11}, error_value{0, "boom"}},
      object_pull{{1, 2}, 4096, 1 << 20},
      object_chunk{
          {std::vector<uint8_t>(1000, 0xab)}, {1, 2}, 4096, 1 << 20, {}, {"worker-1"}},
      task_result{{3, 12}, stored_at{"worker-2", 1 << 24, {"worker-1"}}},
      node_table{{node_info{"head",
                            "127.0.0.1",
                            7100,
                            {{"CPU", 2}},
                            {{"CPU", 1}},
                            3,
                            true,
                            true,
                            12,
                            {1 << 20, 4 << 20, 1 << 10},
                            {{"add", "int(int, int)"}},
                            {{"counter", "(int); add: int(int)"}},
                            1,
                            {{-1, 4}}}},
                 {job_info{7, "head", 4242, true, 1000, 0}}},
      actor_call{
          5, "add", {value{"int", {1, 0, 0, 0}}}, {4, 4}, "head", 77, 8, false, -3},
      actor_location{9, true, 5, "worker-1", "counter", {}, 3},
      job_info{8, "worker-1", 99, false, 5, 6},
      object_location{{3, 12}, "worker-2", 1 << 24, true},
      actor_create{3, "ledger", {}, "", {}, 2, "head", true, {1, 2, 3}, 5, false, 0, 4},
      actor_checkpoint{6, {9, 8, 7}, 4, true},
      gcs_chain{3, gcs_chain::kind_type::ack, 77, 12, {"head", "worker-1"}, {1, 2}},
      kv_entry{"k", {5}},
      kv_request{4, kv_request::op_type::put, "key", {1, 2, 3}},
      kv_reply{4, false, {}, true, error_value{7, "no"}},
      list_request{5, "actors", 200},
      list_reply{5, "worker-1", {{"tally", "counter", "alive", "", {1, 2}}}, 350},
      task_output{"train", "worker-2", "epoch 3: loss 0.25\n"},
      object_replicate{remote_ref{{3, 12}, "worker-2", 1 << 24, {"worker-1"}}},
      object_replicated{{3, 12}, "no room"},
      task_cancel{{3, 13}},
      group_ask{6, group_ask::kind_type::create, 42, {{{"CPU", 1}}, {{"GPU", 0.5}}}, 3},
      group_answer{6, true, {"worker-1", "worker-2"}, {{{"CPU", 1}}, {}}, {}},
      object_borrow{{3, 14}},
      object_borrowed{{3, 14},
                      true,
                      object_borrowed::state_type::ready,
                      remote_ref{{3, 14}, "worker-1", 1 << 20, {"head"}},
                      {}},
      object_borrowed{{3, 15},
                      false,
                      object_borrowed::state_type::failed,
                      value{},
                      error_value{5, "freed"}},
      object_unborrow{{3, 14}},
      stream_item{{3, 10}, 7, task_result{{9, 7}, stored_at{"worker-1", 1 << 22, {}}}},
      stream_ack{{3, 10}, 8},
      actor_checkpoint_taken{6, 4, true},
      task_placed{{3, 14}, "worker-2", 1764100000123},
      client_ask{12},
      client_welcome{12,
                     true,
                     {},
                     "test",
                     9,
                     {head_row()},
                     100,
                     1000,
                     30000,
                     2,
                     1,
                     1 << 17,
                     64 << 20},
      job_submit{13, {"./train", "--epochs", "3"}, "/tmp"},
      job_ask{14, job_ask::kind_type::stop, 2, 0},
      job_answer{14,
                 true,
                 {},
                 {{2, "./train --epochs 3", 4242, "stopped", -15, 5, 9}},
                 {'o', 'k', '\n'},
                 3}};
}

std::vector<message> decode_all(const std::vector<uint8_t>& bytes, size_t step) {
  frame_decoder d{1 << 20};
  std::vector<message> out;
  for (size_t i = 0; i < bytes.size(); i += step)
    REQUIRE(d.feed(bytes.data() + i, std::min(step, bytes.size() - i), out));
  CHECK(d.buffered() == 0);
  return out;
}

} // namespace

TEST_CASE("every message the schema declares comes back from its frame with each field "
          "it set") {
  // Generated from wire.capnp: each kind, every field other than its default, and a
  // message with a union once per member of it.
  auto all = sample_messages();
  std::vector<bool> kinds(std::variant_size_v<message>);
  for (auto& m : all) {
    kinds[m.index()] = true;
    auto f = encode_frame(m);
    auto back = decode_all(f, f.size());
    REQUIRE(back.size() == 1);
    REQUIRE(back[0].index() == m.index());
    // Compared as values where they can be (a chunk's payload lives apart from it), and
    // as bytes once encoded again.
    std::visit(
        [&](const auto& sent) {
          using T = std::decay_t<decltype(sent)>;
          if constexpr (!std::is_same_v<T, object_chunk>)
            CHECK(std::get<T>(back[0]) == sent);
        },
        m);
    CHECK(encode_frame(back[0]) == f);
  }
  CHECK(std::count(kinds.begin(), kinds.end(), true) == static_cast<long>(kinds.size()));
  auto is_chunk = [](const message& m) {
    return std::holds_alternative<object_chunk>(m);
  };
  auto& chunk = std::get<object_chunk>(*std::find_if(all.begin(), all.end(), is_chunk));
  REQUIRE_FALSE(chunk.data.empty());
  auto back = decode_all(encode_frame(chunk), 1 << 20);
  auto& got = std::get<object_chunk>(back.at(0));
  CHECK(std::vector<uint8_t>(got.bytes(), got.bytes() + got.size()) == chunk.data);
  CHECK(got.holders == chunk.holders);
}

TEST_CASE("every message kind round-trips through a frame") {
  std::vector<uint8_t> stream;
  for (auto& m : samples()) {
    auto f = encode_frame(m);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  auto back = decode_all(stream, stream.size());
  REQUIRE(back.size() == samples().size());
  auto& t = std::get<task_submit>(back[3]);
  CHECK(t.function == "add");
  CHECK(std::get<value>(t.args[0]) == value{"int", {1, 0, 0, 0}});
  CHECK(std::get<remote_ref>(t.args[1]) ==
        remote_ref{{3, 9}, "worker-1", 1 << 20, {"worker-2", "head"}});
  CHECK(t.replicas == 3);
  CHECK(t.owner_node == "head");
  CHECK(t.resources[1].second == 0.5);
  CHECK(t.priority == -2);
  CHECK(t.stream_owner == (uint64_t{2} << 40) + 5);
  CHECK(t.stream_window == 16);
  CHECK(t.job == "training");
  CHECK(t.job_share == 3);
  CHECK(std::get<error_value>(std::get<task_result>(back[5]).outcome).message == "boom");
  CHECK(std::get<object_chunk>(back[7]).data.size() == 1000);
  CHECK(std::get<object_chunk>(back[7]).holders == std::vector<std::string>{"worker-1"});
  CHECK(std::get<hello>(back[0]).nonce.size() == 32);
  CHECK(std::get<stored_at>(std::get<task_result>(back[8]).outcome).node == "worker-2");
  CHECK(std::get<stored_at>(std::get<task_result>(back[8]).outcome).replicas ==
        std::vector<std::string>{"worker-1"});
  auto& table = std::get<node_table>(back[9]);
  REQUIRE(table.nodes.size() == 1);
  CHECK(table.nodes[0].port == 7100);
  CHECK(table.nodes[0].available[0].second == 1);
  CHECK(table.nodes[0].store.capacity == 4u << 20);
  CHECK(table.nodes[0].store.pulled == 1u << 10);
  CHECK(std::get<heartbeat>(back[2]).store.bytes == 100);
  CHECK(std::get<heartbeat>(back[2]).store.pooled == 30);
  CHECK(std::get<heartbeat>(back[2]).store.pool_reuses == 7);
  CHECK(std::get<heartbeat>(back[2]).by_priority ==
        swarm::wire_msg::priority_counts{{5, 2}, {0, 3}});
  CHECK(table.nodes[0].by_priority == swarm::wire_msg::priority_counts{{-1, 4}});
  CHECK_FALSE(table.nodes[0].client);
  auto n = back.size();
  CHECK(std::get<job_submit>(back[n - 3]).argv ==
        std::vector<std::string>{"./train", "--epochs", "3"});
  CHECK(std::get<job_ask>(back[n - 2]).kind == job_ask::kind_type::stop);
  auto& jobs = std::get<job_answer>(back[n - 1]);
  REQUIRE(jobs.jobs.size() == 1);
  CHECK(jobs.jobs[0].exit_code == -15);
  CHECK(jobs.output == std::vector<uint8_t>{'o', 'k', '\n'});
  auto& welcome = std::get<client_welcome>(back[n - 4]);
  CHECK(welcome.owner_index == 9);
  REQUIRE(welcome.nodes.size() == 1);
  CHECK(welcome.nodes[0].port == 7100);
  CHECK(welcome.gcs_shards == 2);
  CHECK(welcome.max_message_bytes == 64u << 20);
  CHECK(std::get<actor_call>(back[10]).method == "add");
  CHECK(std::get<actor_call>(back[10]).stream_owner == 77);
  CHECK(std::get<actor_call>(back[10]).stream_window == 8);
  CHECK(std::get<actor_call>(back[10]).priority == -3);
  CHECK(std::get<actor_location>(back[11]).node == "worker-1");
  REQUIRE(table.jobs.size() == 1);
  CHECK(table.jobs[0].pid == 4242);
  CHECK(std::get<job_info>(back[12]).ended_ms == 6);
  CHECK_FALSE(std::get<job_info>(back[12]).running);
  CHECK(std::get<object_location>(back[13]).node == "worker-2");
  CHECK(std::get<object_location>(back[13]).size == 1 << 24);
  CHECK(std::get<actor_create>(back[14]).checkpoint == std::vector<uint8_t>{1, 2, 3});
  CHECK(std::get<actor_create>(back[14]).checkpoint_every == 5);
  CHECK(std::get<actor_checkpoint>(back[15]).state == std::vector<uint8_t>{9, 8, 7});
  auto& chain = std::get<gcs_chain>(back[16]);
  CHECK(chain.shard == 3);
  CHECK(chain.kind == gcs_chain::kind_type::ack);
  CHECK(chain.epoch == 77);
  CHECK(chain.seq == 12);
  CHECK(chain.members == std::vector<std::string>{"head", "worker-1"});
  CHECK(chain.records == std::vector<uint8_t>{1, 2});
  CHECK(std::get<kv_entry>(back[17]) == kv_entry{"k", {5}});
  auto& req = std::get<kv_request>(back[18]);
  CHECK(req.op == kv_request::op_type::put);
  CHECK(req.value == std::vector<uint8_t>{1, 2, 3});
  auto& rep = std::get<kv_reply>(back[19]);
  CHECK(rep.failed);
  CHECK(rep.error == error_value{7, "no"});
  CHECK(std::get<list_request>(back[20]).what == "actors");
  CHECK(std::get<list_request>(back[20]).limit == 200);
  auto& listed = std::get<list_reply>(back[21]);
  CHECK(listed.total == 350);
  REQUIRE(listed.rows.size() == 1);
  CHECK(listed.rows[0] == list_row{"tally", "counter", "alive", "", {1, 2}});
  auto& printed = std::get<task_output>(back[22]);
  CHECK(printed.function == "train");
  CHECK(printed.node == "worker-2");
  CHECK(printed.text == "epoch 3: loss 0.25\n");
  CHECK(std::get<object_replicate>(back[23]).ref ==
        remote_ref{{3, 12}, "worker-2", 1 << 24, {"worker-1"}});
  CHECK(std::get<object_replicated>(back[24]).error == "no room");
  CHECK(std::get<task_cancel>(back[25]).result == object_ref_id{3, 13});
  auto& ask = std::get<group_ask>(back[26]);
  CHECK(ask.kind == group_ask::kind_type::create);
  CHECK(ask.id == 42);
  CHECK(ask.bundles == std::vector<resource_list>{{{"CPU", 1}}, {{"GPU", 0.5}}});
  CHECK(ask.strategy == 3);
  auto& answer = std::get<group_answer>(back[27]);
  CHECK(answer.ok);
  CHECK(answer.nodes == std::vector<std::string>{"worker-1", "worker-2"});
  CHECK(answer.bundles.size() == 2);
  CHECK(std::get<object_borrow>(back[28]).id == object_ref_id{3, 14});
  auto& lent = std::get<object_borrowed>(back[29]);
  CHECK(lent.ack);
  CHECK(lent.state == object_borrowed::state_type::ready);
  CHECK(std::get<remote_ref>(lent.value) ==
        remote_ref{{3, 14}, "worker-1", 1 << 20, {"head"}});
  auto& refused = std::get<object_borrowed>(back[30]);
  CHECK(refused.state == object_borrowed::state_type::failed);
  CHECK(refused.error == error_value{5, "freed"});
  CHECK(std::get<object_unborrow>(back[31]).id == object_ref_id{3, 14});
  auto& item = std::get<stream_item>(back[32]);
  CHECK(item.result == object_ref_id{3, 10});
  CHECK(item.seq == 7);
  CHECK(item.item.result == object_ref_id{9, 7});
  CHECK(std::get<stored_at>(item.item.outcome).node == "worker-1");
  CHECK(std::get<stored_at>(item.item.outcome).size == 1 << 22);
  CHECK(std::get<stream_ack>(back[33]).taken == 8);
  CHECK(std::get<actor_checkpoint>(back[15]).seq == 4);
  CHECK(std::get<actor_checkpoint>(back[15]).answer);
  CHECK(std::get<actor_checkpoint_taken>(back[34]) == actor_checkpoint_taken{6, 4, true});
}

TEST_CASE("a change of the node table carries its versions, the rows new to it, what "
          "changed in the others (a node stopping too) and the rows that left") {
  node_table delta;
  delta.version = 12;
  delta.base = 11;
  delta.nodes = {head_row()};
  delta.nodes[0].leaving = true;
  node_change c;
  c.name = "worker-3";
  c.alive = false;
  c.last_seen_ms = 2500;
  c.available = {{"CPU", 0.5}};
  c.queued = 7;
  c.running = 2;
  c.by_priority = {{1, 9}};
  c.store.bytes = 4096;
  c.leaving = true;
  delta.changes = {c};
  delta.removed = {"client-1"};
  heartbeat hb;
  hb.needs_table = true;
  hb.wants_load = true;
  auto frames = encode_frame(delta);
  auto more = encode_frame(hb);
  frames.insert(frames.end(), more.begin(), more.end());
  auto back = decode_all(frames, frames.size());
  REQUIRE(back.size() == 2);
  auto& t = std::get<node_table>(back[0]);
  CHECK(t.version == 12);
  CHECK(t.base == 11);
  REQUIRE(t.nodes.size() == 1);
  CHECK(t.nodes[0].name == "head");
  CHECK(t.nodes[0].leaving);
  REQUIRE(t.changes.size() == 1);
  auto& d = t.changes[0];
  CHECK(d.name == "worker-3");
  CHECK_FALSE(d.alive);
  CHECK(d.last_seen_ms == 2500);
  CHECK(d.available == resource_list{{"CPU", 0.5}});
  CHECK(d.queued == 7);
  CHECK(d.running == 2);
  CHECK(d.by_priority == priority_counts{{1, 9}});
  CHECK(d.store.bytes == 4096);
  CHECK(d.leaving);
  CHECK(t.removed == std::vector<std::string>{"client-1"});
  CHECK(std::get<heartbeat>(back[1]).needs_table);
  CHECK(std::get<heartbeat>(back[1]).wants_load);
}

TEST_CASE("an object chunk's payload follows its message raw, exactly its bytes, padded "
          "to whole words with zeros") {
  // The chunk is 13 bytes from offset 3 of a 16-byte object: the rest must not travel.
  auto source = std::make_shared<const std::vector<uint8_t>>(
      std::vector<uint8_t>{0xee, 0xee, 0xee, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13});
  object_chunk from_source{
      {{}, source, source->data() + 3, 13}, {1, 2}, 3, source->size()};
  // A chunk with bytes of its own, allocated to its exact size: under AddressSanitizer a
  // read past it is an error.
  object_chunk own{
      {std::vector<uint8_t>(source->begin() + 3, source->end())}, {1, 2}, 3, 16};
  for (auto* m : {&from_source, &own}) {
    auto f = encode_frame(*m);
    REQUIRE(f.size() >= raw_tail_header_bytes + 16);
    CHECK(f[5] == raw_tail_flag);
    CHECK(f[frame_header_bytes] == 13);
    CHECK(f.size() % 8 == 0);
    CHECK(std::equal(f.end() - 16, f.end() - 3, source->begin() + 3));
    CHECK(std::all_of(f.end() - 3, f.end(), [](uint8_t b) { return b == 0; }));
    auto back = decode_all(f, f.size());
    REQUIRE(back.size() == 1);
    CHECK(std::get<object_chunk>(back[0]).offset == 3);
    CHECK(std::get<object_chunk>(back[0]).data ==
          std::vector<uint8_t>(source->begin() + 3, source->end()));
  }
}

TEST_CASE("a raw tail after a message that is not a chunk, or with unknown flags, is "
          "rejected") {
  auto f = encode_frame(object_chunk{{std::vector<uint8_t>(8, 1)}, {1, 1}, 0, 8});
  auto other = encode_frame(object_pull{{1, 1}, 0, 8});
  // The pull's message with the chunk's raw-tail header and payload.
  std::vector<uint8_t> forged(f.begin(), f.begin() + raw_tail_header_bytes);
  for (int i = 0; i < 4; ++i)
    forged[static_cast<size_t>(i)] = other[static_cast<size_t>(i)];
  forged.insert(forged.end(), other.begin() + frame_header_bytes, other.end());
  forged.insert(forged.end(), f.end() - 8, f.end());
  frame_decoder d{1 << 20};
  std::vector<message> out;
  auto r = d.feed(forged.data(), forged.size(), out);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("not a chunk") != std::string::npos);
  f[5] = 4;
  frame_decoder d2{1 << 20};
  CHECK(d2.feed(f.data(), f.size(), out).err().message.find("unknown flags") !=
        std::string::npos);
}

TEST_CASE("a stream arriving a byte at a time decodes into the same frames") {
  std::vector<uint8_t> stream;
  for (auto& m : samples()) {
    auto f = encode_frame(m);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  CHECK(decode_all(stream, 1).size() == samples().size());
  CHECK(decode_all(stream, 7).size() == samples().size());
}

TEST_CASE("messages travel on their lanes: bulk transfers apart from control and calls") {
  CHECK(lane_of(object_chunk{}) == lane::bulk);
  CHECK(lane_of(object_pull{}) == lane::bulk);
  CHECK(lane_of(task_submit{}) == lane::call);
  CHECK(lane_of(heartbeat{}) == lane::control);
  CHECK(encode_frame(object_chunk{})[4] == static_cast<uint8_t>(lane::bulk));
}

TEST_CASE("latency-critical tasks, calls and their results travel on the control lane, "
          "and say so on the wire") {
  task_submit t;
  t.latency_critical = true;
  actor_call c;
  c.latency_critical = true;
  task_result r{{3, 10}, value{"int", {3, 0, 0, 0}}, true};
  CHECK(lane_of(t) == lane::control);
  CHECK(lane_of(c) == lane::control);
  CHECK(lane_of(r) == lane::control);
  CHECK(lane_of(actor_call{}) == lane::call);
  CHECK(lane_of(task_result{}) == lane::call);
  CHECK_FALSE(urgent(actor_call{}));
  CHECK_FALSE(urgent(heartbeat{}));
  CHECK(encode_frame(actor_call{})[5] == 0);
  std::vector<uint8_t> stream;
  for (const message& m : {message{t}, message{c}, message{r}}) {
    auto f = encode_frame(m);
    CHECK(f[4] == static_cast<uint8_t>(lane::control));
    CHECK(f[5] == urgent_flag);
    CHECK(urgent(m));
    stream.insert(stream.end(), f.begin(), f.end());
  }
  auto back = decode_all(stream, stream.size());
  REQUIRE(back.size() == 3);
  CHECK(std::get<task_submit>(back[0]).latency_critical);
  CHECK(std::get<actor_call>(back[1]).latency_critical);
  CHECK(std::get<task_result>(back[2]).latency_critical);
}

namespace {

// A call to actor `id`; urgent (latency-critical) or not.
actor_call call_to(uint64_t id, bool urgent_call) {
  actor_call c;
  c.actor_id = id;
  c.method = "m";
  c.latency_critical = urgent_call;
  return c;
}

// What `out` holds, as "call N" (with a star when urgent), "heartbeat" or "chunk".
std::vector<std::string> kinds(const std::vector<message>& out) {
  std::vector<std::string> k;
  for (auto& m : out)
    if (auto* c = std::get_if<actor_call>(&m))
      k.push_back("call " + std::to_string(c->actor_id) +
                  (c->latency_critical ? "*" : ""));
    else if (std::holds_alternative<heartbeat>(m))
      k.push_back("heartbeat");
    else
      k.push_back("chunk");
  return k;
}

// Calls 1 to 6, 3 and 5 urgent, with a heartbeat after 1 and a chunk after 4.
std::vector<uint8_t> mixed_stream() {
  std::vector<uint8_t> s;
  auto add = [&](const message& m) {
    auto f = encode_frame(m);
    s.insert(s.end(), f.begin(), f.end());
  };
  add(call_to(1, false));
  add(heartbeat{});
  add(call_to(2, false));
  add(call_to(3, true));
  add(call_to(4, false));
  add(object_chunk{{std::vector<uint8_t>(24, 7)}, {1, 1}, 0, 24});
  add(call_to(5, true));
  add(call_to(6, false));
  return s;
}

} // namespace

TEST_CASE("urgent frames received behind others are decoded ahead of them, and the "
          "others keep their order") {
  auto stream = mixed_stream();
  std::vector<message> out;
  SUBCASE("all at once") {
    frame_decoder d{1 << 20};
    d.set_urgent_ahead(true);
    REQUIRE(d.feed(stream.data(), stream.size(), out));
    CHECK(kinds(out) == std::vector<std::string>{"call 3*", "call 5*", "call 1",
                                                 "heartbeat", "call 2", "call 4", "chunk",
                                                 "call 6"});
    CHECK(d.buffered() == 0);
  }
  SUBCASE("held as it arrives, then decoded") {
    frame_decoder d{1 << 20};
    d.set_urgent_ahead(true);
    for (size_t at = 0; at < stream.size();) {
      auto [room, cap] = d.prepare(13);
      auto n = std::min(cap, stream.size() - at);
      std::memcpy(room, stream.data() + at, n);
      REQUIRE(d.hold(n));
      at += n;
    }
    CHECK(d.buffered() == stream.size());
    REQUIRE(d.commit(0, out));
    CHECK(kinds(out).front() == "call 3*");
    CHECK(kinds(out)[1] == "call 5*");
    CHECK(out.size() == 8);
  }
  SUBCASE("a frame at a time, with the buffer moved between") {
    // One frame per commit: the urgent ones come first, and those decoded ahead are
    // stepped over later, after the unread bytes moved to a larger buffer.
    frame_decoder d{1 << 20};
    d.set_limits(1 << 20, 1);
    d.set_urgent_ahead(true);
    auto half = stream.size() / 2;
    REQUIRE(d.feed(stream.data(), half, out));
    auto [room, cap] = d.prepare(1 << 16);
    REQUIRE(cap >= stream.size() - half);
    std::memcpy(room, stream.data() + half, stream.size() - half);
    REQUIRE(d.commit(stream.size() - half, out));
    while (d.buffered() > 0) {
      auto before = out.size();
      REQUIRE(d.commit(0, out));
      REQUIRE(out.size() > before);
    }
    auto k = kinds(out);
    REQUIRE(k.size() == 8);
    // Urgent ones before what followed them, the others in order.
    std::vector<std::string> ordinary;
    for (auto& x : k)
      if (x.back() != '*') ordinary.push_back(x);
    CHECK(ordinary == std::vector<std::string>{"call 1", "heartbeat", "call 2", "call 4",
                                               "chunk", "call 6"});
    auto pos = [&](const std::string& x) { return std::find(k.begin(), k.end(), x); };
    CHECK(pos("call 3*") < pos("call 2"));
    CHECK(pos("call 5*") < pos("call 4"));
  }
  SUBCASE("not asked for: in the order sent") {
    frame_decoder d{1 << 20};
    REQUIRE(d.feed(stream.data(), stream.size(), out));
    CHECK(kinds(out) == std::vector<std::string>{"call 1", "heartbeat", "call 2",
                                                 "call 3*", "call 4", "chunk", "call 5*",
                                                 "call 6"});
  }
}

TEST_CASE("a frame marked urgent that holds an ordinary message, an urgent message in a "
          "frame not marked, and an urgent chunk are rejected") {
  std::vector<message> out;
  auto plain = encode_frame(call_to(1, false));
  plain[5] = urgent_flag;
  frame_decoder d{1 << 20};
  d.set_urgent_ahead(true);
  auto r = d.feed(plain.data(), plain.size(), out);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("a frame marked urgent holds a message that is not") !=
        std::string::npos);
  auto hidden = encode_frame(call_to(2, true));
  hidden[5] = 0;
  frame_decoder d2{1 << 20};
  r = d2.feed(hidden.data(), hidden.size(), out);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("not marked urgent") != std::string::npos);
  auto chunk = encode_frame(object_chunk{{std::vector<uint8_t>(8, 1)}, {1, 1}, 0, 8});
  chunk[5] |= urgent_flag;
  frame_decoder d3{1 << 20};
  r = d3.feed(chunk.data(), chunk.size(), out);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("an urgent frame has a raw tail") != std::string::npos);
  CHECK(out.empty());
}

TEST_CASE("garbage bytes are rejected with a reason and the decoder refuses more") {
  std::mt19937 gen{42};
  size_t rejected = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<uint8_t> junk(64 + gen() % 256);
    for (auto& b : junk)
      b = static_cast<uint8_t>(gen());
    // A plausible header so the payload itself is what is wrong.
    uint32_t len = static_cast<uint32_t>((junk.size() - frame_header_bytes) & ~size_t{7});
    for (int i = 0; i < 4; ++i)
      junk[static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (8 * i));
    junk[4] = 1;
    frame_decoder d{1 << 20};
    std::vector<message> out;
    auto r = d.feed(junk.data(), junk.size(), out);
    if (!r) {
      ++rejected;
      CHECK_FALSE(r.err().message.empty());
      CHECK_FALSE(d.feed(junk.data(), 1, out));
    }
  }
  CHECK(rejected > 150);
}

TEST_CASE("a frame larger than the limit is rejected before its payload arrives") {
  auto big = encode_frame(object_chunk{{std::vector<uint8_t>(4096)}, {1, 1}, 0, 0});
  frame_decoder d{1024};
  std::vector<message> out;
  auto r = d.feed(big.data(), raw_tail_header_bytes, out);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("raw tail of 4096 bytes") != std::string::npos);
  CHECK(r.err().message.find("exceeds the limit of 1024") != std::string::npos);
  auto long_message = encode_frame(kv_entry{"k", std::vector<uint8_t>(4096)});
  frame_decoder d2{1024};
  r = d2.feed(long_message.data(), frame_header_bytes, out);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("exceeds the limit of 1024") != std::string::npos);
}

TEST_CASE("a message on the wrong lane or an unknown lane is rejected") {
  auto f = encode_frame(object_chunk{});
  f[4] = static_cast<uint8_t>(lane::control);
  frame_decoder d{1 << 20};
  std::vector<message> out;
  auto r = d.feed(f.data(), f.size(), out);
  REQUIRE_FALSE(r);
  CHECK(r.err().message.find("belongs on lane 2") != std::string::npos);
  f[4] = 9;
  frame_decoder d2{1 << 20};
  CHECK(d2.feed(f.data(), f.size(), out).err().message.find("unknown lane 9") !=
        std::string::npos);
}

TEST_CASE(
    "a chunk is sent from its value's memory and read in the buffer it arrived in") {
  auto value = std::make_shared<std::vector<uint8_t>>(3 * shared_chunk_min + 5);
  for (size_t i = 0; i < value->size(); ++i)
    (*value)[i] = static_cast<uint8_t>(i * 13);
  object_chunk c{{{}, value, value->data(), value->size()}, {4, 2}, 0, value->size()};
  auto parts = encode_frame_parts(c);
  // The value's bytes are referenced, not copied, and kept alive by the frame.
  CHECK(parts.tail == value->data());
  CHECK(parts.tail_size == value->size());
  CHECK(parts.bytes.size() < 256);
  CHECK(parts.keep.get() == static_cast<const void*>(value.get()));
  auto flat = encode_frame(c);
  CHECK(flat.size() == parts.size());
  // A chunk whose bytes only the message holds is copied into the frame.
  object_chunk owned{{*value}, {4, 2}, 0, value->size()};
  auto copied = encode_frame_parts(owned);
  CHECK(copied.tail == nullptr);
  CHECK(copied.bytes == flat);

  // Received: the large chunk shares the decoder's buffer; later frames go elsewhere.
  frame_decoder d{64 << 20};
  std::vector<message> out;
  REQUIRE(d.feed(flat.data(), flat.size(), out));
  auto small = encode_frame(heartbeat{5, 0, {}, 0, {}});
  for (int i = 0; i < 3; ++i)
    REQUIRE(d.feed(flat.data(), flat.size(), out));
  REQUIRE(d.feed(small.data(), small.size(), out));
  REQUIRE(out.size() == 5);
  for (int i = 0; i < 4; ++i) {
    auto& got = std::get<object_chunk>(out[static_cast<size_t>(i)]);
    REQUIRE(static_cast<bool>(got.source));
    CHECK(got.data.empty());
    REQUIRE(got.size() == value->size());
    CHECK(std::equal(got.bytes(), got.bytes() + got.size(), value->begin()));
  }
  CHECK(std::get<heartbeat>(out[4]).sent_ns == 5);
  // A small chunk is copied out as before.
  object_chunk tiny{{std::vector<uint8_t>(8, 1)}, {4, 2}, 0, 8};
  auto tf = encode_frame(tiny);
  out.clear();
  REQUIRE(d.feed(tf.data(), tf.size(), out));
  CHECK_FALSE(static_cast<bool>(std::get<object_chunk>(out.at(0)).source));
  CHECK(std::get<object_chunk>(out.at(0)).data == std::vector<uint8_t>(8, 1));
}

TEST_CASE("a chunk's payload is received straight where its lander puts it, and the "
          "frames after it decode") {
  // An odd size: the payload's padding follows it on the wire.
  auto value = std::make_shared<std::vector<uint8_t>>(2 * shared_chunk_min + 3);
  for (size_t i = 0; i < value->size(); ++i)
    (*value)[i] = static_cast<uint8_t>(i * 7);
  object_chunk c{{{}, value, value->data(), value->size()}, {4, 2}, 100, 1 << 20};
  auto stream = encode_frame(c);
  auto hb = encode_frame(heartbeat{5, 0, {}, 0, {}});
  stream.insert(stream.end(), hb.begin(), hb.end());

  auto dest = std::make_shared<std::vector<uint8_t>>(value->size() + 10);
  std::vector<std::pair<uint64_t, uint64_t>> asked;
  frame_decoder d{64 << 20};
  d.set_lander([&](const object_chunk& h, uint64_t n) -> std::optional<landing> {
    asked.emplace_back(h.offset, n);
    return landing{dest->data() + 10, value->size(), dest};
  });
  std::vector<message> out;
  // The header, the message and a little of the payload arrive; then the rest is read
  // straight into the destination, as a socket would be read.
  size_t first = raw_tail_header_bytes + 200;
  REQUIRE(d.feed(stream.data(), first, out));
  REQUIRE(asked.size() == 1);
  CHECK(asked[0] == std::pair<uint64_t, uint64_t>{100, value->size()});
  CHECK(out.empty());
  size_t at = first;
  while (at < stream.size()) {
    auto [room, cap] = d.prepare(4096);
    if (at < stream.size() - hb.size() - 5) // before the padding: the destination itself
      CHECK((room >= dest->data() + 10 && room < dest->data() + dest->size()));
    auto n = std::min(cap, stream.size() - at);
    std::memcpy(room, stream.data() + at, n);
    auto ok = d.commit(n, out);
    REQUIRE_MESSAGE(ok, (ok ? "" : ok.err().message));
    at += n;
  }
  REQUIRE(out.size() == 2);
  auto& got = std::get<object_chunk>(out[0]);
  CHECK(got.landed);
  CHECK(got.offset == 100);
  CHECK(got.bytes() == dest->data() + 10);
  CHECK(got.size() == value->size());
  CHECK(got.source.get() == static_cast<const void*>(dest.get()));
  CHECK(std::equal(value->begin(), value->end(), dest->begin() + 10));
  CHECK(std::get<heartbeat>(out[1]).sent_ns == 5);
}

TEST_CASE(
    "a decoder trimmed gives back the buffers a flood grew, never bytes it holds or "
    "a chunk still reads, and keeps a small one") {
  constexpr size_t keep = 256 << 10;
  constexpr size_t frames = 32;
  auto value = std::make_shared<std::vector<uint8_t>>(2 * shared_chunk_min, 3);
  auto f = encode_frame(
      object_chunk{{{}, value, value->data(), value->size()}, {4, 2}, 0, value->size()});
  std::vector<uint8_t> stream;
  for (size_t i = 0; i < frames; ++i)
    stream.insert(stream.end(), f.begin(), f.end());
  frame_decoder d{64 << 20};
  // Read ahead without decoding, as a reader does while its socket stays full.
  for (size_t at = 0; at < stream.size();) {
    auto [room, cap] = d.prepare(keep);
    auto n = std::min(cap, stream.size() - at);
    std::memcpy(room, stream.data() + at, n);
    REQUIRE(d.hold(n));
    at += n;
  }
  CHECK(d.held_bytes() >= stream.size());
  CHECK(d.trim(keep) == 0);
  CHECK(d.buffered() == stream.size());
  std::vector<message> out;
  REQUIRE(d.commit(0, out));
  REQUIRE(out.size() == frames);
  // The chunks read the buffer they arrived in: once trimmed, it is theirs alone.
  CHECK(d.trim(keep) >= stream.size());
  CHECK(d.held_bytes() == 0);
  for (auto& m : out) {
    auto& got = std::get<object_chunk>(m);
    REQUIRE(got.size() == value->size());
    CHECK(std::equal(got.bytes(), got.bytes() + got.size(), value->begin()));
  }
  auto hb = encode_frame(heartbeat{5, 0, {}, 0, {}});
  REQUIRE(d.feed(hb.data(), hb.size(), out));
  CHECK(std::get<heartbeat>(out.back()).sent_ns == 5);
  CHECK(d.held_bytes() > 0);
  CHECK(d.held_bytes() <= keep);
  CHECK(d.trim(keep) == 0);
}

TEST_CASE("a chunk nobody expects, or too large for its place, arrives in the buffer") {
  auto value = std::make_shared<std::vector<uint8_t>>(shared_chunk_min + 1, 9);
  object_chunk c{{{}, value, value->data(), value->size()}, {4, 2}, 0, value->size()};
  auto f = encode_frame(c);
  std::vector<uint8_t> small_place(16);
  for (bool refuse : {true, false}) {
    frame_decoder d{64 << 20};
    int asked = 0;
    d.set_lander([&](const object_chunk&, uint64_t) -> std::optional<landing> {
      ++asked;
      if (refuse) return std::nullopt;
      return landing{small_place.data(), small_place.size(), nullptr};
    });
    std::vector<message> out;
    for (size_t at = 0; at < f.size(); at += 1000)
      REQUIRE(d.feed(f.data() + at, std::min<size_t>(1000, f.size() - at), out));
    CHECK(asked == 1);
    REQUIRE(out.size() == 1);
    auto& got = std::get<object_chunk>(out[0]);
    CHECK_FALSE(got.landed);
    REQUIRE(got.size() == value->size());
    CHECK(std::equal(got.bytes(), got.bytes() + got.size(), value->begin()));
    CHECK(std::all_of(small_place.begin(), small_place.end(),
                      [](uint8_t b) { return b == 0; }));
  }
}

TEST_CASE("a landing place takes one chunk, only from the node it was asked of") {
  landing_table t;
  auto mem = std::make_shared<std::vector<uint8_t>>(1000);
  t.await_chunk("worker-1", {1, 2}, 64, {mem->data(), 500, mem});
  t.await_chunk("worker-1", {1, 2}, 564, {mem->data() + 500, 500, mem});
  t.await_chunk("worker-1", {1, 3}, 0, {mem->data(), 100, mem});
  CHECK_FALSE(t.claim("worker-2", {1, 2}, 64, 500));
  CHECK_FALSE(t.claim("worker-1", {1, 2}, 64, 501));
  CHECK_FALSE(t.claim("worker-1", {1, 2}, 65, 10));
  auto got = t.claim("worker-1", {1, 2}, 64, 400);
  REQUIRE(got);
  CHECK(got->at == mem->data());
  CHECK_FALSE(t.claim("worker-1", {1, 2}, 64, 400));
  t.forget({1, 2}, 564);
  CHECK_FALSE(t.claim("worker-1", {1, 2}, 564, 10));
  CHECK(t.size() == 1);
  t.drop({1, 3});
  CHECK(t.size() == 0);
}
