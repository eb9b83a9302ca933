// models/random_seed.h
//
// The process-wide random seed of Keras's keras.utils.set_random_seed.
// Every seed graphgc draws for an argument left at 0 (a layer's
// initialiser, Dropout's masks, Fit's shuffling) comes from here: after
// SetRandomSeed(s) the draws are one stream started at s, so a program
// that builds and fits the same models in the same order gets the same
// weights and history; before it, initialisers and Dropout draw from
// std::random_device and Fit shuffles with seed 0. Thread-safe: concurrent
// draws each get a different value of the stream, in an order the threads
// decide.
#ifndef GRAPHGC_MODELS_RANDOM_SEED_H_
#define GRAPHGC_MODELS_RANDOM_SEED_H_

#include <cstdint>
#include <optional>

namespace graphgc {

// Starts the stream of drawn seeds at `seed` (any value, 0 included).
void SetRandomSeed(uint64_t seed);

// The seed SetRandomSeed set last, or nullopt when it was never called.
std::optional<uint64_t> GetRandomSeed();

// A non-zero seed: the stream's next value after SetRandomSeed, else one
// from std::random_device.
uint64_t DrawSeed();

// Fit's shuffling seed: `given` when non-zero or when SetRandomSeed was
// never called (0 stays 0, a fixed order), else DrawSeed().
uint64_t FitShuffleSeed(uint64_t given);

}  // namespace graphgc

#endif  // GRAPHGC_MODELS_RANDOM_SEED_H_
