#include "actors/control_store/gcs_record.hpp"

#include <array>

#include "transport/wire_codec.hpp"

namespace swarm::actors {

namespace {

constexpr uint8_t op_put = 1;
constexpr uint8_t op_erase = 2;

// Rows are small; anything near this is damage, not a row.
constexpr size_t max_row_bytes = 64u << 20;

struct table_kind {
  const char* name;
  size_t row_index; // the alternative of table_row it holds
  const char* row_name;
};

constexpr table_kind known_tables[] = {
    {"node", 0, "node_info"},
    {"job", 1, "job_info"},
    {"object", 2, "object_location"},
    {"kv", 3, "kv_entry"}};

const table_kind* find_table(const std::string& name) {
  for (auto& t : known_tables)
    if (name == t.name) return &t;
  return nullptr;
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  put_le(out, v, 4);
}

uint32_t get_u32(const uint8_t* p) {
  return static_cast<uint32_t>(get_le(p, 4));
}

void put_text(std::vector<uint8_t>& out, const std::string& s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

bool get_text(const uint8_t*& p, const uint8_t* end, std::string& out) {
  if (end - p < 4) return false;
  auto n = get_u32(p);
  p += 4;
  if (static_cast<size_t>(end - p) < n) return false;
  out.assign(reinterpret_cast<const char*>(p), n);
  p += n;
  return true;
}

std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

} // namespace

void put_le(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

uint32_t crc32(const uint8_t* data, size_t size) {
  static const auto table = make_crc_table();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i)
    c = table[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void apply_record(row_tables& tables, const gcs_record& rec) {
  if (rec.row) {
    tables[rec.table][rec.key] = *rec.row;
  } else if (auto t = tables.find(rec.table); t != tables.end()) {
    t->second.erase(rec.key);
    if (t->second.empty()) tables.erase(t);
  }
}

result<void> check_record(const gcs_record& rec) {
  auto* t = find_table(rec.table);
  if (!t)
    return error{errc::invalid_argument, "unknown control-store table '" + rec.table +
                                             "' (known: node, job, object, kv)"};
  if (rec.row && rec.row->index() != t->row_index)
    return error{errc::invalid_argument,
                 "a row of table '" + rec.table + "' must be a " + t->row_name};
  return {};
}

std::vector<uint8_t> encode_record(const gcs_record& rec) {
  std::vector<uint8_t> payload;
  payload.push_back(rec.row ? op_put : op_erase);
  put_text(payload, rec.table);
  put_text(payload, rec.key);
  if (rec.row) {
    auto frame = wire_msg::encode_frame(std::visit(
        [](auto& r) -> wire_msg::message {
          // A node row travels as the `join` that carries it; the others are messages.
          if constexpr (std::is_same_v<std::decay_t<decltype(r)>, wire_msg::node_info>)
            return wire_msg::join{r};
          else
            return r;
        },
        *rec.row));
    payload.insert(payload.end(), frame.begin(), frame.end());
  }
  std::vector<uint8_t> out;
  out.reserve(record_header_bytes + payload.size());
  put_u32(out, static_cast<uint32_t>(payload.size()));
  put_u32(out, crc32(out.data(), 4));
  put_u32(out, crc32(payload.data(), payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

result<gcs_record> decode_record(const uint8_t* payload, size_t size) {
  auto bad = [](std::string why) {
    return error{errc::invalid_argument, std::move(why)};
  };
  const uint8_t* p = payload;
  const uint8_t* end = payload + size;
  if (size < 1) return bad("empty record");
  auto op = *p++;
  if (op != op_put && op != op_erase) return bad("unknown op " + std::to_string(op));
  gcs_record rec;
  if (!get_text(p, end, rec.table) || !get_text(p, end, rec.key))
    return bad("table or key runs past the record");
  if (!find_table(rec.table)) return check_record(rec).err();
  if (op == op_erase) {
    if (p != end) return bad("an erase record carries a row");
    return rec;
  }
  if (p == end)
    return bad("a put record of '" + rec.table + "/" + rec.key + "' has no row");
  wire_msg::frame_decoder dec{max_row_bytes};
  std::vector<wire_msg::message> msgs;
  if (auto ok = dec.feed(p, static_cast<size_t>(end - p), msgs); !ok)
    return bad("row of '" + rec.table + "/" + rec.key + "': " + ok.err().message);
  if (msgs.size() != 1 || dec.buffered() != 0)
    return bad("row of '" + rec.table + "/" + rec.key + "' is not exactly one frame");
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, wire_msg::join>)
          rec.row = std::move(m.node);
        else if constexpr (std::is_same_v<T, wire_msg::job_info> ||
                           std::is_same_v<T, wire_msg::object_location> ||
                           std::is_same_v<T, wire_msg::kv_entry>)
          rec.row = std::move(m);
      },
      msgs.front());
  if (!rec.row) return bad("row of '" + rec.table + "/" + rec.key + "' is no table row");
  if (auto ok = check_record(rec); !ok) return ok.err();
  return rec;
}

frame_at next_frame(const uint8_t* data, size_t size, size_t at) {
  frame_at f;
  if (at >= size) return f;
  const uint8_t* h = data + at;
  size_t left = size - at;
  auto torn = [&](std::string why) {
    f.what = frame_at::kind::torn;
    f.why = std::move(why);
    return f;
  };
  if (left < record_header_bytes)
    return torn("a record header cut short (" + std::to_string(left) + " of " +
                std::to_string(record_header_bytes) + " bytes)");
  auto len = get_u32(h);
  if (get_u32(h + 4) != crc32(h, 4)) {
    // Space the file system allocated but never wrote reads as zeros.
    if (all_zero(h, left)) return torn("zeros after the last record");
    f.what = frame_at::kind::damaged;
    f.why = "record header checksum mismatch";
    return f;
  }
  if (left - record_header_bytes < len)
    return torn("a record of " + std::to_string(len) + " bytes cut short after " +
                std::to_string(left - record_header_bytes));
  const uint8_t* payload = h + record_header_bytes;
  if (get_u32(h + 8) != crc32(payload, len)) {
    // The last record's bytes may be zeros or partly written after a crash.
    if (left - record_header_bytes == len)
      return torn("the last record fails its checksum");
    f.what = frame_at::kind::damaged;
    f.why = "record checksum mismatch";
    return f;
  }
  f.what = frame_at::kind::record;
  f.payload = payload;
  f.size = len;
  f.next = at + record_header_bytes + len;
  return f;
}

} // namespace swarm::actors
