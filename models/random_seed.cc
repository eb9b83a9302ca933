#include "models/random_seed.h"

#include <random>

#include "util/mutex.h"

namespace graphgc {
namespace {

struct SeedStream {
  Mutex mu;
  std::optional<uint64_t> seed ABSL_GUARDED_BY(mu);
  std::mt19937_64 engine ABSL_GUARDED_BY(mu);
};

SeedStream& Stream() {
  static SeedStream* const stream = new SeedStream;  // never destroyed
  return *stream;
}

uint64_t RandomDeviceSeed() {
  std::random_device device;
  return (uint64_t{device()} << 32) | device();
}

}  // namespace

void SetRandomSeed(uint64_t seed) {
  SeedStream& s = Stream();
  WriterLock l(s.mu);
  s.seed = seed;
  s.engine.seed(seed);
}

std::optional<uint64_t> GetRandomSeed() {
  SeedStream& s = Stream();
  ReaderLock l(s.mu);
  return s.seed;
}

uint64_t DrawSeed() {
  SeedStream& s = Stream();
  {
    WriterLock l(s.mu);
    if (s.seed.has_value()) {
      uint64_t seed = 0;
      while (seed == 0) seed = s.engine();
      return seed;
    }
  }
  uint64_t seed = 0;
  while (seed == 0) seed = RandomDeviceSeed();
  return seed;
}

uint64_t FitShuffleSeed(uint64_t given) {
  if (given != 0 || !GetRandomSeed().has_value()) return given;
  return DrawSeed();
}

}  // namespace graphgc
