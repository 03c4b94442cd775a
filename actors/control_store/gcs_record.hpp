#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/control_store/table_row.hpp"
#include "base/result.hpp"

namespace swarm::actors {

/// One write to a shard's row tables: a put when `row` is set, an erase when it is not.
struct gcs_record {
  std::string table;
  std::string key;
  std::optional<table_row> row;
};

/// Applies `rec` to `tables`: a put replaces the row; erasing a missing row does nothing.
void apply_record(row_tables& tables, const gcs_record& rec);

/// The tables a record may name, and the row each holds: "node" (node_info), "job"
/// (job_info), "object" (object_location), "kv" (kv_entry). An error naming the table otherwise.
result<void> check_record(const gcs_record& rec);

/// Bytes before a record's payload: the little-endian u32 payload length, the CRC-32 of
/// those four bytes, and the CRC-32 of the payload.
inline constexpr size_t record_header_bytes = 12;

/// Encodes `rec` as one framed record. The payload is an op byte (1 put, 2 erase), the
/// table and the key (u32 length + bytes each) and, for a put, the row wrapped in its
/// wire message (a node row in a `join`) and encoded as one frame of
/// `transport/wire_codec.hpp`.
std::vector<uint8_t> encode_record(const gcs_record& rec);

/// Decodes a record's payload; the error says what is wrong with it (not where).
result<gcs_record> decode_record(const uint8_t* payload, size_t size);

/// What `next_frame` finds at an offset of a record file.
struct frame_at {
  enum class kind {
    record,  ///< a whole record whose checksums match
    end,     ///< the end of the bytes
    torn,    ///< what a crash mid-append leaves: a record cut short, or zeros, at the end
    damaged, ///< anything else: a checksum fails with more bytes after it
  };
  kind what = kind::end;
  const uint8_t* payload = nullptr;
  size_t size = 0;
  /// Offset just after the record (for `record`).
  size_t next = 0;
  /// For `torn` and `damaged`: what is wrong.
  std::string why;
};

/// Reads the framed record at `at` of `data[0, size)`.
frame_at next_frame(const uint8_t* data, size_t size, size_t at);

/// Appends the low `bytes` bytes of `v` to `out`, little-endian.
void put_le(std::vector<uint8_t>& out, uint64_t v, int bytes);

/// Reads a `bytes`-byte little-endian number at `p`.
uint64_t get_le(const uint8_t* p, int bytes);

/// The CRC-32 (IEEE 802.3, as zlib's) of `data[0, size)`.
uint32_t crc32(const uint8_t* data, size_t size);

} // namespace swarm::actors
