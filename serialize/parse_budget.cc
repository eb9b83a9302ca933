// serialize/parse_budget.cc: a memory bound of a protobuf parse from its
// wire bytes, and a parse refused when the bound is over a budget.
#include "serialize/parse_budget.h"

#include <algorithm>
#include <climits>
#include <new>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/wire_format_lite.h"
#include "util/status_macros.h"

namespace graphgc {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using WireFormatLite = google::protobuf::internal::WireFormatLite;

// Nesting of messages and groups the walk follows; protobuf's own parser
// refuses deeper input (its recursion limit is 100), so nothing it accepts
// is refused here.
constexpr int kMaxDepth = 101;

// What malloc takes for a request of n bytes: glibc adds an 8-byte header
// and rounds up to 16, 32 at least.
constexpr uint64_t Alloc(uint64_t n) {
  return std::max<uint64_t>(32, (n + 8 + 15) & ~uint64_t{15});
}
// A heap std::string (protobuf keeps string fields behind a pointer) and,
// past its 15 inline characters, its buffer.
constexpr uint64_t StringBytes(uint64_t length) {
  return Alloc(32) + (length > 15 ? Alloc(length + 1) : 0);
}
// The first block of a repeated field, a map's first table, or a message's
// unknown-field set: charged once per field per message.
constexpr uint64_t kFirstBlock = 128;
// Repeated storage grows by doubling and copies: capacity up to twice the
// count, plus the old array while a growth step copies it.
constexpr uint64_t kGrowth = 3;
// A map entry's hash node links, bucket share (the table grows too) and,
// when a bucket overflows into a tree, its tree node.
constexpr uint64_t kMapEntry = 128;
// An unknown field's UnknownField (16 bytes) in its growing vector.
constexpr uint64_t kUnknownField = kGrowth * 16;
// An unknown group's nested UnknownFieldSet object.
constexpr uint64_t kUnknownGroup = Alloc(24);

// Bytes one element of a repeated scalar field takes in its RepeatedField.
uint64_t ElementSize(const FieldDescriptor& f) {
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return 1;
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return 8;
    default:
      return 4;  // int32, uint32, float, enum
  }
}

// Reads a varint of at most 10 bytes; false if `end` comes first.
bool ReadVarint(const char*& p, const char* end, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    const auto b = static_cast<uint8_t>(*p++);
    v |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) {
      *out = v;
      return true;
    }
  }
  return false;
}

class Walker {
 public:
  Walker(const char* begin, uint64_t stop_above)
      : begin_(begin), stop_above_(stop_above) {}

  uint64_t total() const { return total_; }
  bool over() const { return total_ > stop_above_; }

  void Charge(uint64_t bytes) { total_ += bytes; }

  // Heap bytes of one object of message type `d`: an upper bound of its
  // class's size from its fields (the default instance's SpaceUsedLong()
  // crashes on a type with a map field in some builds).
  uint64_t SizeOf(const Descriptor* d) {
    auto [it, inserted] = sizes_.try_emplace(d, 0);
    if (inserted) {
      uint64_t size = 64;  // vtable, metadata, cached size, has-bits, oneofs
      for (int i = 0; i < d->field_count(); ++i) {
        const FieldDescriptor* f = d->field(i);
        size += f->is_map() ? 256 : f->is_repeated() ? 32 : 8;
      }
      it->second = size;
    }
    return it->second;
  }

  // Walks the fields from `p` to `end` of a message of type `d` (null for a
  // set of unknown fields), or, when `group` is not 0, up to the end tag of
  // that group. Stops early, OK, once over().
  absl::Status Fields(const char*& p, const char* end, const Descriptor* d,
                      uint32_t group, int depth) {
    // Field numbers 1..63 whose first block is charged; bit 0 stands for
    // the unknown-field set.
    uint64_t seen = 0;
    auto first = [&seen](uint32_t number) -> uint64_t {
      const uint64_t bit = number < 64 ? uint64_t{1} << number : 0;
      if ((seen & bit) != 0) return 0;
      seen |= bit;
      return kFirstBlock;
    };
    while (p < end) {
      if (over()) return absl::OkStatus();
      const char* field_start = p;
      uint64_t tag;
      if (!ReadVarint(p, end, &tag) || tag > UINT32_MAX) {
        return Malformed(field_start, "bad tag");
      }
      const auto number = static_cast<uint32_t>(tag >> 3);
      const auto wire = static_cast<WireFormatLite::WireType>(tag & 7);
      if (number == 0) return Malformed(field_start, "field number 0");
      if (wire == WireFormatLite::WIRETYPE_END_GROUP) {
        if (number != group) {
          return Malformed(field_start, "end of a group that is not open");
        }
        return absl::OkStatus();
      }
      const FieldDescriptor* f =
          d != nullptr ? d->FindFieldByNumber(number) : nullptr;
      if (f != nullptr) {
        const auto expected = WireFormatLite::WireTypeForFieldType(
            static_cast<WireFormatLite::FieldType>(f->type()));
        if (f->is_packable() &&
            wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
          GG_RETURN_IF_ERROR(Packed(p, end, *f, first(number)));
          continue;
        }
        if (wire == expected) {
          GG_RETURN_IF_ERROR(Known(p, end, *f, first, depth));
          continue;
        }
        // Another wire type than the field's: the parser keeps it as an
        // unknown field.
      }
      GG_RETURN_IF_ERROR(Unknown(p, end, number, wire, first(0), depth));
    }
    if (group != 0 && !over()) {
      return Malformed(p, absl::StrCat("group ", group, " has no end"));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Malformed(const char* at, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("byte offset ", at - begin_, ": ", what));
  }

  absl::StatusOr<uint64_t> Length(const char*& p, const char* end) const {
    const char* start = p;
    uint64_t length;
    if (!ReadVarint(p, end, &length)) return Malformed(start, "bad length");
    if (length > static_cast<uint64_t>(end - p)) {
      return Malformed(start, absl::StrCat("length ", length,
                                           " runs past the "
                                           "end of its message"));
    }
    return length;
  }

  absl::Status Skip(const char*& p, const char* end,
                    WireFormatLite::WireType wire) const {
    const char* start = p;
    uint64_t ignored;
    switch (wire) {
      case WireFormatLite::WIRETYPE_VARINT:
        if (!ReadVarint(p, end, &ignored))
          return Malformed(start, "bad varint");
        return absl::OkStatus();
      case WireFormatLite::WIRETYPE_FIXED32:
      case WireFormatLite::WIRETYPE_FIXED64: {
        const int64_t n = wire == WireFormatLite::WIRETYPE_FIXED32 ? 4 : 8;
        if (end - p < n) return Malformed(start, "truncated fixed-size value");
        p += n;
        return absl::OkStatus();
      }
      default:
        return Malformed(start, absl::StrCat("bad wire type ", wire));
    }
  }

  // A packed run of a repeated scalar field.
  absl::Status Packed(const char*& p, const char* end, const FieldDescriptor& f,
                      uint64_t first_block) {
    GG_ASSIGN_OR_RETURN(const uint64_t length, Length(p, end));
    const auto wire = WireFormatLite::WireTypeForFieldType(
        static_cast<WireFormatLite::FieldType>(f.type()));
    uint64_t count = 0;
    if (wire == WireFormatLite::WIRETYPE_VARINT) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(p);
      for (uint64_t i = 0; i < length; ++i) count += bytes[i] < 0x80;
      if (length > 0 && bytes[length - 1] >= 0x80) {
        return Malformed(p + length - 1, "packed varints end inside a varint");
      }
    } else {
      const uint64_t size = wire == WireFormatLite::WIRETYPE_FIXED32 ? 4 : 8;
      count = (length + size - 1) / size;
    }
    p += length;
    Charge(first_block + kGrowth * count * ElementSize(f));
    return absl::OkStatus();
  }

  // A field of `f`'s own wire type.
  template <typename First>
  absl::Status Known(const char*& p, const char* end, const FieldDescriptor& f,
                     First& first, int depth) {
    const auto wire = WireFormatLite::WireTypeForFieldType(
        static_cast<WireFormatLite::FieldType>(f.type()));
    const uint32_t number = static_cast<uint32_t>(f.number());
    const uint64_t slot = f.is_repeated() ? first(number) : 0;
    switch (wire) {
      case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
        GG_ASSIGN_OR_RETURN(const uint64_t length, Length(p, end));
        if (f.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          Charge(slot + (f.is_repeated() ? kGrowth * sizeof(void*) : 0) +
                 StringBytes(length));
          p += length;
          return absl::OkStatus();
        }
        // A message.
        Charge(slot + Alloc(SizeOf(f.message_type())));
        if (f.is_repeated()) {
          Charge(kGrowth * sizeof(void*) + (f.is_map() ? kMapEntry : 0));
        }
        if (depth + 1 > kMaxDepth) return Malformed(p, "nested too deeply");
        const char* sub_end = p + length;
        return Fields(p, sub_end, f.message_type(), 0, depth + 1);
      }
      case WireFormatLite::WIRETYPE_START_GROUP:
        Charge(slot + Alloc(SizeOf(f.message_type())) +
               (f.is_repeated() ? kGrowth * sizeof(void*) : 0));
        if (depth + 1 > kMaxDepth) return Malformed(p, "nested too deeply");
        return Fields(p, end, f.message_type(), number, depth + 1);
      default:
        if (f.is_repeated()) Charge(slot + kGrowth * ElementSize(f));
        return Skip(p, end, wire);
    }
  }

  // A field the message type does not have (or not of this wire type).
  absl::Status Unknown(const char*& p, const char* end, uint32_t number,
                       WireFormatLite::WireType wire, uint64_t set_block,
                       int depth) {
    Charge(set_block + kUnknownField);
    switch (wire) {
      case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
        GG_ASSIGN_OR_RETURN(const uint64_t length, Length(p, end));
        Charge(StringBytes(length));
        p += length;
        return absl::OkStatus();
      }
      case WireFormatLite::WIRETYPE_START_GROUP:
        Charge(kUnknownGroup);
        if (depth + 1 > kMaxDepth) return Malformed(p, "nested too deeply");
        return Fields(p, end, nullptr, number, depth + 1);
      default:
        return Skip(p, end, wire);
    }
  }

  const char* begin_;
  uint64_t stop_above_;
  uint64_t total_ = 0;
  absl::flat_hash_map<const Descriptor*, uint64_t> sizes_;
};

}  // namespace

absl::StatusOr<uint64_t> EstimateParsedBytes(std::string_view wire,
                                             const Descriptor& type,
                                             uint64_t stop_above) {
  Walker walker(wire.data(), stop_above);
  walker.Charge(Alloc(walker.SizeOf(&type)));
  const char* p = wire.data();
  GG_RETURN_IF_ERROR(
      walker.Fields(p, wire.data() + wire.size(), &type, 0, /*depth=*/0));
  return walker.total();
}

absl::Status ParseWithinBudget(std::string_view wire, uint64_t budget,
                               google::protobuf::Message* out,
                               uint64_t* estimate) {
  const Descriptor& type = *out->GetDescriptor();
  try {
    GG_ASSIGN_OR_RETURN(const uint64_t bytes,
                        EstimateParsedBytes(wire, type, budget));
    if (bytes > budget) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "parsing ", wire.size(), " bytes as ", type.full_name(),
          " needs more than the budget of ", budget, " bytes of memory"));
    }
    if (wire.size() > static_cast<size_t>(INT_MAX) ||
        !out->ParseFromArray(wire.data(), static_cast<int>(wire.size()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a valid ", type.full_name()));
    }
    if (estimate != nullptr) *estimate = bytes;
    return absl::OkStatus();
  } catch (const std::bad_alloc&) {
    out->Clear();
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory parsing ", wire.size(), " bytes as ", type.full_name(),
        " (within the budget of ", budget, " bytes)"));
  }
}

}  // namespace graphgc
