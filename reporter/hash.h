/* hash.h -- the reporter's string hash, for its open-addressing tables:
 * interned names (aggregate.c, timeline.c), string maps (chrome.c), a
 * picture's frames (flame.c, seeded with the parent frame's index so that
 * a frame's key is its parent and its name). FNV-1a, 64 bits: short keys,
 * a few instructions a byte. */
#ifndef SP_HASH_H
#define SP_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t sp_hash(uint64_t seed, const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

#endif
