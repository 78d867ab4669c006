/* digits.h -- numbers as decimal text, written straight into memory (the
 * caller has made room: buf.h's sp_out_reserve): integers, and nanoseconds
 * as microseconds with three decimals. Shared by the output buffer (buf.c)
 * and the trace writer's per-slice path (chrome_write.c), which inline them. */
#ifndef SP_DIGITS_H
#define SP_DIGITS_H

#include <stdint.h>
#include <string.h>

/* Two digits per step, filled from the end: timestamps have 10 to 16 digits,
 * and number formatting is most of the per-slice cost. */
static const char digits2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull};

/* Number of decimal digits of v (1 for 0): log10 from the bit length, then
 * one comparison. */
static inline unsigned ndigits(uint64_t v) {
    unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
    return t + (v >= pow10_u64[t]) + !v;
}

/* The 8 decimal digits of v < 10^8 as ASCII, the first in the lowest byte:
 * the halves, quarters and digits split in parallel lanes of one integer
 * (x / 100 as x * 10486 >> 20 for x < 10^4, x / 10 as x * 103 >> 10 for
 * x < 100; no lane carries into the next). */
static inline uint64_t digits8(uint32_t v) {
    uint64_t y = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
    uint64_t h = (y * 10486 >> 20) & 0x0000007F0000007Full;
    y = h | (y - h * 100) << 16;
    uint64_t d = (y * 103 >> 10) & 0x000F000F000F000Full;
    y = d | (y - d * 10) << 8;
    return y | 0x3030303030303030ull;
}

/* Store the 8 bytes of d, lowest first (digits8's order). */
static inline void store8(char *p, uint64_t d) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    d = __builtin_bswap64(d);
#endif
    memcpy(p, &d, 8);
}

/* The 8 digits of v < 10^8 at p[0..8), leading zeros included. */
static inline void put8(char *p, uint32_t v) { store8(p, digits8(v)); }

/* v < 10^8 without leading zeros; writes 8 bytes (garbage past the digits). */
static inline char *put_var8(char *p, uint32_t v) {
    unsigned n = ndigits(v);
    store8(p, digits8(v) >> (8 * (8 - n)));
    return p + n;
}

/* At most 20 digits; writes at most 20 bytes (garbage past the digits). */
static inline char *put_u64(char *p, uint64_t v) {
    if (v < 100000000) return put_var8(p, (uint32_t)v);
    if (v < 10000000000000000ull) {
        p = put_var8(p, (uint32_t)(v / 100000000));
        put8(p, (uint32_t)(v % 100000000));
        return p + 8;
    }
    uint64_t r = v % 10000000000000000ull;
    p = put_var8(p, (uint32_t)(v / 10000000000000000ull));
    put8(p, (uint32_t)(r / 100000000));
    put8(p + 8, (uint32_t)(r % 100000000));
    return p + 16;
}

/* The last 8 digits of a time in ns, ns % 10^8, as microseconds: 5 digits
 * of the integer part, the point, 3 decimals (9 bytes; writes 16). `skip`
 * leading digits left out (at most 4: "0.001" keeps its 0). */
static inline char *put_us_low(char *p, uint32_t v, unsigned skip) {
    uint64_t d = digits8(v);
    uint64_t a = (d & 0xFFFFFFFFFFull) | (uint64_t)'.' << 40 | (d >> 40) << 48;
    uint64_t b = d >> 56;
    unsigned sh = 8 * skip;
    if (sh) {
        a = a >> sh | b << (64 - sh);
        b >>= sh;
    }
    store8(p, a);
    store8(p + 8, b);
    return p + 9 - skip;
}

/* Nanoseconds as microseconds, "%llu.%03llu"; writes at most 24 bytes. */
static inline char *put_us(char *p, uint64_t ns) {
    if (ns < 100000000) { /* below 10^5 us: one split, leading zeros left out */
        unsigned n = ndigits(ns);
        return put_us_low(p, (uint32_t)ns, n > 4 ? 8 - n : 4);
    }
    if (ns < 10000000000000000ull) {
        p = put_var8(p, (uint32_t)(ns / 100000000));
        return put_us_low(p, (uint32_t)(ns % 100000000), 0);
    }
    uint64_t f = ns % 1000;
    p = put_u64(p, ns / 1000);
    p[0] = '.';
    p[1] = (char)('0' + f / 100);
    memcpy(p + 2, digits2 + f % 100 * 2, 2);
    return p + 4;
}

#endif
