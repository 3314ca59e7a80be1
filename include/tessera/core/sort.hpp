#pragma once
/// \file sort.hpp
/// `sort_pairs`: a stable sort of (key, value) pairs by key on every backend.
///
///     tessera::sort_pairs(exec, keys.view(), values.view(), 40);   // keys below 2^40
///
/// Radix sort: CUB's DeviceRadixSort on the GPU, a least-significant-digit radix sort (8-bit
/// digits, chunks of the range in parallel under OpenMP) on the CPU. Equal keys keep the order
/// they had in the input on every backend, so the result is the same on every backend and in
/// every run.

#include <cstdint>

#include "tessera/core/exec.hpp"
#include "tessera/core/view.hpp"

namespace tessera {

/// Sorts keys ascending and permutes values alongside, stably, in place. Only the lowest
/// `key_bits` bits (1..64) are compared: every key must be below 2^key_bits (fewer bits, fewer
/// passes). Both views in exec's memory space and of equal size. Uses scratch memory of the
/// size of both views. Throws tessera::Error for mismatched sizes or spaces.
void sort_pairs(const Exec& exec, View<std::uint64_t, 1> keys, View<std::int64_t, 1> values, int key_bits = 64);
/// The same with 32-bit values (half the memory traffic of the values).
void sort_pairs(const Exec& exec, View<std::uint64_t, 1> keys, View<std::int32_t, 1> values, int key_bits = 64);

/// Number of bits needed to hold every value below n (at least 1): the key_bits of keys < n.
int bits_for(std::uint64_t n);

}  // namespace tessera
