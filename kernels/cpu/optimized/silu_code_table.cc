// Finding, and proving, every real at which a layer's SiLU code changes.
//
// Let v(r) = r x sigmoid(r) / output_scale, exactly, and c(r) = reference::quantize_silu(r, ...),
// the code the reference computes in float: e = rexp(-|r|) (within 1.37 x 2^-24 of e^-|r|
// relative for every normal result: an exhaustive check over the floats of [-104, 0], session 7),
// then 1 + e, the sigmoid's division, the product and the division by the scale, each rounded
// once (2^-24). Carried through (the error of e moves 1 + e by at most half of it, since e <= 1),
// the value c rounds is within 6.1 x 2^-24 of v(r), relative. Call r near a boundary b = k + 1/2
// when |v(r) - b| <= 2^-19 |v(r)| (kRelativeMargin: a factor 5 over that bound). A real near no
// boundary gets the code of v(r) rounded exactly, then saturated. So between two consecutive
// floats the code can change only (a) where v crosses a boundary, or (b) where one of the two is
// near a boundary.
//
// SiLU falls from 0 to its minimum at r = kSiluMinimum and rises after it, so on each side v is
// monotonic: v crosses a boundary at most once per side, found by bisection over the floats in
// order; and the floats near b form at most one run per side, which holds a float of the
// crossing pair, or (no crossing on that side) the side's float nearest the minimum. build()
// walks each such run from those floats, evaluates c on every float of the runs and of the
// crossing pairs (and one float either side), and keeps the places where c changes: by the
// argument, there are no others. The runs are a few hundred floats long except where a boundary
// lies within the margin of SiLU's minimum; runs too long make build() give up.
#include "optimized/silu_code_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/convolution.h"

namespace orknn::kernels::cpu::optimized {
namespace {

constexpr double kRelativeMargin = 0x1p-19;
// For values near 0 (exp results below 2^-126 lose relative accuracy): |v| < 2^-20 there for
// every scale build() accepts, far from any boundary.
constexpr double kAbsoluteMargin = 0x1p-40;
// Where r x sigmoid(r) is smallest (1 + r (1 - sigmoid(r)) = 0).
constexpr double kSiluMinimum = -1.2784645427610738;
// The longest run of floats near one boundary build() evaluates.
constexpr int64_t kLongestRun = int64_t{1} << 16;
// The largest finite float's key.
constexpr int64_t kLargestKey = 0x7F7FFFFF;
constexpr int64_t kSmallestKey = -1 - kLargestKey;

// The floats in order as integers, as the vector rows compute them (the bits, with a negative
// float's magnitude bits flipped): key(a) < key(b) when a < b; -0 is -1 and +0 is 0.
int64_t key_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const int64_t magnitude = bits & 0x7FFFFFFFu;
  return (bits >> 31) != 0 ? -1 - magnitude : magnitude;
}

float float_of(int64_t key) {
  const uint32_t bits =
      key >= 0 ? static_cast<uint32_t>(key) : (0x80000000u | static_cast<uint32_t>(-1 - key));
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// v(r) in double: within about 1e-15 relative of the exact value, far inside the margin.
double exact_scaled(int64_t key, double output_scale) {
  const double real = float_of(key);
  return real / (1.0 + std::exp(-real)) / output_scale;
}

bool near_boundary(double value, double boundary) {
  return std::fabs(value - boundary) <= kRelativeMargin * std::fabs(value) + kAbsoluteMargin;
}

// The smallest key in (low, high] where `holds` is true, given it is false at low and true at
// high.
template <typename Predicate>
int64_t first_key_where(int64_t low, int64_t high, Predicate&& holds) {
  while (high - low > 1) {
    const int64_t middle = low + (high - low) / 2;
    (holds(middle) ? high : low) = middle;
  }
  return high;
}

struct KeyRange {
  int64_t first;
  int64_t last;
};

struct Change {
  int64_t key;  // the first float with the new code
  int8_t before;
  int8_t after;
};

// Changes a few floats apart (where the computed code jitters around a boundary) as one: the
// floats from the first change up to the last one are looked up by computing their code.
struct Zone {
  int64_t first;
  int64_t last;
  int8_t before;
  int8_t after;
};
constexpr int64_t kLongestZone = 4096;

// The bucket of `real`: the operations lookup_silu_code and the vector rows use.
size_t bucket_of(const SiluCodes& codes, float real) {
  float position = (real - codes.origin) * codes.inverse_step;
  position = std::min(std::max(position, 0.0f), codes.last_bucket);
  return static_cast<size_t>(static_cast<int32_t>(position));
}

}  // namespace

int8_t lookup_silu_code(const SiluCodes& codes, float real) {
  const size_t bucket = bucket_of(codes, real);
  const int64_t key = key_of(real);
  const int32_t threshold = codes.threshold_keys[bucket];
  const uint32_t word = codes.code_words[bucket];
  if (static_cast<uint32_t>(key - threshold) < word >> 16) {
    return reference::quantize_silu(real, codes.output_scale, codes.output_zero_point);
  }
  return static_cast<int8_t>(key >= threshold ? word >> 8 : word);
}

std::optional<SiluCodeTable> silu_code_table_for(const MicroKernels& kernels,
                                                 const reference::Int8Requantization& q) {
  if (!q.silu || !kernels.silu_row_reads_codes) return std::nullopt;
  return SiluCodeTable::build(q.output_scale, q.output_zero_point);
}

std::optional<SiluCodeTable> SiluCodeTable::build(float output_scale, int32_t output_zero_point) {
  // Scales from 2^-60 keep |v| < 2^-20 wherever the exp's result is subnormal (|r| > 87).
  if (!(output_scale >= 0x1p-60f && output_scale <= 0x1p60f)) return std::nullopt;
  if (output_zero_point < -128 || output_zero_point > 127) return std::nullopt;
  const double scale = output_scale;
  const auto code_at = [&](int64_t key) {
    return reference::quantize_silu(float_of(key), output_scale, output_zero_point);
  };

  // Down side: keys up to minimum_key, where v falls; up side: from minimum_key + 1, where it
  // rises.
  const int64_t minimum_key = key_of(static_cast<float>(kSiluMinimum));
  std::vector<int64_t> starts;
  std::vector<KeyRange> evaluated;
  for (int64_t key = minimum_key - 2; key <= minimum_key + 3; ++key) starts.push_back(key);
  // Boundaries between two codes that saturation leaves apart: k + zp and k + 1 + zp in
  // [-128, 127].
  for (int32_t k = -128 - output_zero_point; k <= 126 - output_zero_point; ++k) {
    const double boundary = k + 0.5;
    // Down side: v(-FLT_MAX) = -0 > boundary when the boundary is negative.
    if (boundary < 0 && exact_scaled(minimum_key, scale) <= boundary) {
      const int64_t key = first_key_where(kSmallestKey, minimum_key, [&](int64_t k2) {
        return exact_scaled(k2, scale) <= boundary;
      });
      starts.push_back(key - 1);
      starts.push_back(key);
      evaluated.push_back({key - 1, key});
    }
    // Up side: v(FLT_MAX) is above every boundary.
    if (exact_scaled(minimum_key + 1, scale) < boundary) {
      const int64_t key = first_key_where(minimum_key + 1, kLargestKey, [&](int64_t k2) {
        return exact_scaled(k2, scale) >= boundary;
      });
      starts.push_back(key - 1);
      starts.push_back(key);
      evaluated.push_back({key - 1, key});
    }
    // Walk the runs of floats near this boundary from every start that is near it.
    for (const int64_t start : starts) {
      if (!near_boundary(exact_scaled(start, scale), boundary)) continue;
      int64_t first = start;
      int64_t last = start;
      while (first > kSmallestKey && near_boundary(exact_scaled(first - 1, scale), boundary)) {
        if (last - --first > kLongestRun) return std::nullopt;
      }
      while (last < kLargestKey && near_boundary(exact_scaled(last + 1, scale), boundary)) {
        if (++last - first > kLongestRun) return std::nullopt;
      }
      evaluated.push_back({std::max(first - 1, kSmallestKey), std::min(last + 1, kLargestKey)});
    }
    starts.resize(6);  // keep the floats around the minimum for the next boundary
  }

  // Every change of the code between consecutive evaluated floats, in order.
  std::sort(evaluated.begin(), evaluated.end(),
            [](const KeyRange& a, const KeyRange& b) { return a.first < b.first; });
  std::vector<Change> changes;
  int64_t done = std::numeric_limits<int64_t>::min();  // the last key evaluated
  for (const KeyRange& range : evaluated) {
    // A range that touches the last one continues it (the change between them is checked too).
    int64_t key = done >= range.first - 1 ? done : range.first;
    int8_t previous = code_at(key);
    while (++key <= range.last) {
      const int8_t code = code_at(key);
      if (code != previous) changes.push_back({key, previous, code});
      previous = code;
    }
    done = std::max(done, range.last);
  }
  // The code is the zero point below the first change (v tends to -0) and each change starts
  // from the code the previous one left: anything else means the argument above failed.
  int8_t code = static_cast<int8_t>(output_zero_point);
  std::vector<Zone> zones;
  for (const Change& change : changes) {
    if (change.before != code) return std::nullopt;
    code = change.after;
    if (!zones.empty() && change.key - zones.back().last <= kLongestZone) {
      zones.back().last = change.key;
      zones.back().after = change.after;
    } else {
      zones.push_back({change.key, change.key, change.before, change.after});
    }
  }
  for (const Zone& zone : zones) {
    if (zone.last - zone.first >= kLongestZone) return std::nullopt;
  }

  // Buckets as wide as the closest two zones, narrowed until the rounded index puts every zone
  // in one bucket of its own.
  SiluCodeTable table;
  SiluCodes& codes = table.codes_;
  codes.output_scale = output_scale;
  codes.output_zero_point = output_zero_point;
  double width = 1.0;
  for (size_t j = 1; j < zones.size(); ++j) {
    width = std::min(width, static_cast<double>(float_of(zones[j].first)) -
                                static_cast<double>(float_of(zones[j - 1].last)));
  }
  const double first_real = zones.empty() ? 0.0 : float_of(zones.front().first);
  std::vector<size_t> zone_buckets(zones.size());
  for (int attempt = 0;; ++attempt) {
    if (attempt == 8) return std::nullopt;
    codes.origin = static_cast<float>(first_real - width / 2);
    codes.inverse_step = static_cast<float>(1.0 / width);
    codes.last_bucket = static_cast<float>(kMaximumBuckets - 1);
    bool apart = true;
    for (size_t j = 0; j < zones.size(); ++j) {
      zone_buckets[j] = bucket_of(codes, float_of(zones[j].first));
      if (bucket_of(codes, float_of(zones[j].last)) != zone_buckets[j]) apart = false;
      if (j > 0 && zone_buckets[j] <= zone_buckets[j - 1]) apart = false;
    }
    const size_t buckets = zones.empty() ? 1 : zone_buckets.back() + 1;
    if (buckets >= kMaximumBuckets) return std::nullopt;
    if (apart) {
      codes.last_bucket = static_cast<float>(buckets - 1);
      table.threshold_keys_.resize(buckets);
      table.code_words_.resize(buckets);
      break;
    }
    width /= 2;
  }
  // A bucket without a zone keeps the code the last zone left (its threshold is never reached:
  // the largest float's key is below INT32_MAX).
  code = static_cast<int8_t>(output_zero_point);
  size_t next = 0;
  const auto byte = [](int8_t c) { return static_cast<uint32_t>(static_cast<uint8_t>(c)); };
  for (size_t bucket = 0; bucket < table.threshold_keys_.size(); ++bucket) {
    if (next < zones.size() && zone_buckets[next] == bucket) {
      const Zone& zone = zones[next++];
      table.threshold_keys_[bucket] = static_cast<int32_t>(zone.first);
      table.code_words_[bucket] =
          byte(code) | byte(zone.after) << 8 | static_cast<uint32_t>(zone.last - zone.first) << 16;
      code = zone.after;
    } else {
      table.threshold_keys_[bucket] = std::numeric_limits<int32_t>::max();
      table.code_words_[bucket] = byte(code) | byte(code) << 8;
    }
  }
  codes.threshold_keys = table.threshold_keys_.data();
  codes.code_words = table.code_words_.data();
  return table;
}

}  // namespace orknn::kernels::cpu::optimized
