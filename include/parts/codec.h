/* The implementation starts here (SCOPEPROF_IMPLEMENTATION): every function
 * is hidden and weak, so each executable or shared library uses one copy, and
 * defining SCOPEPROF_IMPLEMENTATION in two files of one module is harmless.
 *
 * codec.h: CRC-32 and the event record codec, shared by the writer and the
 * reporter (docs/FORMAT.md). */
#ifdef SCOPEPROF__IMPL
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
/* The CRC's carry-less multiply (SCOPEPROF_NO_CLMUL leaves it out). */
#if defined(__x86_64__) && !defined(SCOPEPROF_NO_CLMUL)
#define SCOPEPROF__CLMUL 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* Public functions of the implementation and internal ones: both hidden and
 * weak (see above). */
#define SCOPEPROF__API __attribute__((weak, visibility("hidden")))
#define SCOPEPROF__INTERNAL __attribute__((weak, visibility("hidden")))
/* Code that runs once per process or per file (set-up, creating the file,
 * the exit table), marked cold: gcc compiles it for size and out of the way
 * of the paths that run per event, which keeps the implementation under its
 * 64 KiB (tests/dropin/size.sh); clang moves it out of the way, and
 * compiles it for size when told so (minsize). */
#ifdef __clang__
#define SCOPEPROF__ONCE __attribute__((cold, minsize))
#else
#define SCOPEPROF__ONCE __attribute__((cold))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CRC-32 (IEEE 802.3, reflected, as zlib), for chunk payloads -----------
 * The CRC runs over every byte written, so its speed is the streaming
 * writer's speed. Two ways, same result:
 * - eight bytes per step with eight 256-entry tables ("slicing"), for short
 *   pieces and any CPU;
 * - on x86-64 CPUs with PCLMULQDQ and AVX (carry-less multiply in the
 *   three-operand VEX form: x86-64 CPUs since 2011, but for some Atoms), 64
 *   bytes per step by folding (below): about 0.3 instructions a byte
 *   against 4. (The two-operand SSE form needs a copy of each accumulator
 *   and a separate load per fold: 29 instructions per 64 bytes against 19.)
 *   Where the CPU also multiplies 256-bit registers (VPCLMULQDQ with AVX2:
 *   Intel since 2019, AMD since 2020), 128 bytes per step: two 16-byte
 *   folds per instruction.
 * The tables and the folding constants are built once and published with a
 * compare-and-swap, so racing first callers never share a half-built one. */
typedef struct scopeprof__crc_data {
    uint32_t t[8][256];
    /* x^(N-1) mod P for the folding distances N (see scopeprof__crc_fold),
     * in pairs (D + 64, D) for the distances D of 512, 128, 1024 and 256
     * bits: the pair at SCOPEPROF__K<D> is one 16-byte lane (scopeprof__crc_k). */
    uint64_t fold[8];
    /* 0: tables only; 1: the CPU has PCLMULQDQ and AVX and the OS saves AVX
     * state; 2: also VPCLMULQDQ and AVX2. */
    int clmul;
} scopeprof__crc_data;
__attribute__((weak, visibility("hidden"))) scopeprof__crc_data *scopeprof__crc_state;

/* Where each folding distance's pair of constants begins in
 * scopeprof__crc_data.fold (the distances, in this order, are in
 * scopeprof__crc_tables). */
enum { SCOPEPROF__K512 = 0, SCOPEPROF__K128 = 2, SCOPEPROF__K1024 = 4, SCOPEPROF__K256 = 6 };

/* x^(n-1) mod P as the folding multiplies by it: reflected, in the top 32
 * bits of a 64-bit lane (why n-1: a carry-less product of two reflected
 * 64-bit lanes comes out one bit short of reflected 128 bits, which is one
 * more factor x). */
static inline uint64_t scopeprof__crc_xpow(unsigned n) {
    uint32_t r = 0x80000000u; /* x^0, reflected */
    for (unsigned i = 0; i + 1 < n; i++) r = (r >> 1) ^ (0xEDB88320u & (0u - (r & 1u)));
    return (uint64_t)r << 32;
}

SCOPEPROF__INTERNAL scopeprof__crc_data *scopeprof__crc_tables(void) {
    scopeprof__crc_data *d = __atomic_load_n(&scopeprof__crc_state, __ATOMIC_ACQUIRE);
    if (d) return d;
    d = (scopeprof__crc_data *)malloc(sizeof *d);
    if (!d) return NULL;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t r = i;
        for (int k = 0; k < 8; k++) r = (r >> 1) ^ (0xEDB88320u & (0u - (r & 1u)));
        d->t[0][i] = r;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++) d->t[k][i] = (d->t[k - 1][i] >> 8) ^ d->t[0][d->t[k - 1][i] & 0xFF];
    static const unsigned dist[4] = {512, 128, 1024, 256}; /* SCOPEPROF__K512, _K128, _K1024, _K256 */
    for (int k = 0; k < 4; k++) {
        d->fold[2 * k] = scopeprof__crc_xpow(dist[k] + 64);
        d->fold[2 * k + 1] = scopeprof__crc_xpow(dist[k]);
    }
    d->clmul = 0;
#ifdef SCOPEPROF__CLMUL
    unsigned ax, bx, cx, dx;
    if (__get_cpuid(1, &ax, &bx, &cx, &dx) && (cx & bit_PCLMUL) && (cx & bit_AVX) && (cx & bit_OSXSAVE)) {
        unsigned lo, hi; /* XCR0: the OS saves the SSE and AVX registers (bits 1, 2) */
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        d->clmul = (((uint64_t)hi << 32 | lo) & 6) == 6;
        /* Leaf 7: AVX2 (EBX bit 5), VPCLMULQDQ (ECX bit 10). */
        if (d->clmul && __get_cpuid_count(7, 0, &ax, &bx, &cx, &dx) && (bx & (1u << 5)) && (cx & (1u << 10)))
            d->clmul = 2;
    }
#endif
    scopeprof__crc_data *expected = NULL;
    if (!__atomic_compare_exchange_n(&scopeprof__crc_state, &expected, d, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(d); /* another thread won */
        d = expected;
    }
    return d;
}

/* The CRC register c (inverted, as inside scopeprof_crc32) after n bytes at
 * p, by the tables. */
static inline uint32_t scopeprof__crc_slices(const scopeprof__crc_data *d, uint32_t c,
                                             const unsigned char *p, size_t n) {
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                      (uint32_t)p[7] << 24;
        c = d->t[7][lo & 0xFF] ^ d->t[6][(lo >> 8) & 0xFF] ^ d->t[5][(lo >> 16) & 0xFF] ^
            d->t[4][lo >> 24] ^ d->t[3][hi & 0xFF] ^ d->t[2][(hi >> 8) & 0xFF] ^
            d->t[1][(hi >> 16) & 0xFF] ^ d->t[0][hi >> 24];
    }
    while (n--) c = (c >> 8) ^ d->t[0][(c ^ *p++) & 0xFF];
    return c;
}

#ifdef SCOPEPROF__CLMUL
/* Folding. The CRC register is the remainder mod P of the bytes read so far
 * (the register's start value xored into their first four), times x^32.
 * Take 16 bytes as a polynomial A of degree < 128 (reflected: byte 0's bit 0
 * is the highest power) and let N bits of data follow it: A x^N leaves the
 * same remainder as (A's first 8 bytes) * (x^(N+64) mod P) + (its last 8) *
 * (x^N mod P), two carry-less products of under 128 bits that line up with
 * the 16 bytes N bits later, and are xored into them. Four such 16-byte
 * accumulators step 64 bytes at a time (N = 512), then fold into one
 * (N = 128); the last one's remainder comes from the tables. */
__attribute__((target("pclmul,avx"))) static inline __m128i scopeprof__crc_fold(__m128i a, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

/* The constants of one folding distance (SCOPEPROF__K512 ...) as one lane:
 * the low half multiplies a lane's low 8 bytes, the high half its high 8
 * (x86-64 is little-endian: fold[i] is the low half). */
__attribute__((target("pclmul,avx"))) static inline __m128i scopeprof__crc_k(const scopeprof__crc_data *d, int i) {
    return _mm_loadu_si128((const __m128i *)(const void *)&d->fold[i]);
}

/* The end of a fold: the accumulator x with the n bytes at p after it,
 * 16 at a time (N = 128); the last accumulator's remainder and the bytes
 * left (under 16) by the tables. */
__attribute__((target("pclmul,avx"))) static inline uint32_t
scopeprof__crc_end(const scopeprof__crc_data *d, __m128i x, const unsigned char *p, size_t n) {
    const __m128i k128 = scopeprof__crc_k(d, SCOPEPROF__K128);
    for (; n >= 16; p += 16, n -= 16) x = _mm_xor_si128(scopeprof__crc_fold(x, k128), _mm_loadu_si128((const __m128i *)(const void *)p));
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)(void *)last, x);
    return scopeprof__crc_slices(d, scopeprof__crc_slices(d, 0, last, 16), p, n);
}

/* As scopeprof__crc_slices, for n >= 64. */
SCOPEPROF__INTERNAL __attribute__((target("pclmul,avx"))) uint32_t
scopeprof__crc_clmul(const scopeprof__crc_data *d, uint32_t c, const unsigned char *p, size_t n) {
    const __m128i k512 = scopeprof__crc_k(d, SCOPEPROF__K512), k128 = scopeprof__crc_k(d, SCOPEPROF__K128);
    const __m128i *q = (const __m128i *)(const void *)p;
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128(q), _mm_cvtsi32_si128((int)c));
    __m128i x1 = _mm_loadu_si128(q + 1), x2 = _mm_loadu_si128(q + 2), x3 = _mm_loadu_si128(q + 3);
    for (q += 4, n -= 64; n >= 64; q += 4, n -= 64) {
        x0 = _mm_xor_si128(scopeprof__crc_fold(x0, k512), _mm_loadu_si128(q));
        x1 = _mm_xor_si128(scopeprof__crc_fold(x1, k512), _mm_loadu_si128(q + 1));
        x2 = _mm_xor_si128(scopeprof__crc_fold(x2, k512), _mm_loadu_si128(q + 2));
        x3 = _mm_xor_si128(scopeprof__crc_fold(x3, k512), _mm_loadu_si128(q + 3));
    }
    x1 = _mm_xor_si128(scopeprof__crc_fold(x0, k128), x1);
    x2 = _mm_xor_si128(scopeprof__crc_fold(x1, k128), x2);
    x3 = _mm_xor_si128(scopeprof__crc_fold(x2, k128), x3);
    return scopeprof__crc_end(d, x3, (const unsigned char *)q, n);
}

/* The same on 32-byte registers, for n >= 128: four accumulators of two
 * 16-byte lanes each step 128 bytes (N = 1024), fold into one (N = 256),
 * whose two lanes fold into one (N = 128); scopeprof__crc_end takes the
 * rest. */
__attribute__((target("pclmul,avx2,vpclmulqdq"))) static inline __m256i scopeprof__crc_fold2(__m256i a, __m256i k) {
    return _mm256_xor_si256(_mm256_clmulepi64_epi128(a, k, 0x00), _mm256_clmulepi64_epi128(a, k, 0x11));
}
SCOPEPROF__INTERNAL __attribute__((target("pclmul,avx2,vpclmulqdq"))) uint32_t
scopeprof__crc_vclmul(const scopeprof__crc_data *d, uint32_t c, const unsigned char *p, size_t n) {
    const __m256i k1024 = _mm256_broadcastsi128_si256(scopeprof__crc_k(d, SCOPEPROF__K1024));
    const __m256i k256 = _mm256_broadcastsi128_si256(scopeprof__crc_k(d, SCOPEPROF__K256));
    const __m256i *q = (const __m256i *)(const void *)p;
    __m256i y0 = _mm256_xor_si256(_mm256_loadu_si256(q), _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, (int)c));
    __m256i y1 = _mm256_loadu_si256(q + 1), y2 = _mm256_loadu_si256(q + 2), y3 = _mm256_loadu_si256(q + 3);
    for (q += 4, n -= 128; n >= 128; q += 4, n -= 128) {
        y0 = _mm256_xor_si256(scopeprof__crc_fold2(y0, k1024), _mm256_loadu_si256(q));
        y1 = _mm256_xor_si256(scopeprof__crc_fold2(y1, k1024), _mm256_loadu_si256(q + 1));
        y2 = _mm256_xor_si256(scopeprof__crc_fold2(y2, k1024), _mm256_loadu_si256(q + 2));
        y3 = _mm256_xor_si256(scopeprof__crc_fold2(y3, k1024), _mm256_loadu_si256(q + 3));
    }
    y1 = _mm256_xor_si256(scopeprof__crc_fold2(y0, k256), y1);
    y2 = _mm256_xor_si256(scopeprof__crc_fold2(y1, k256), y2);
    y3 = _mm256_xor_si256(scopeprof__crc_fold2(y2, k256), y3);
    for (; n >= 32; q++, n -= 32) y3 = _mm256_xor_si256(scopeprof__crc_fold2(y3, k256), _mm256_loadu_si256(q));
    __m128i x = _mm_xor_si128(scopeprof__crc_fold(_mm256_castsi256_si128(y3), scopeprof__crc_k(d, SCOPEPROF__K128)),
                              _mm256_extracti128_si256(y3, 1));
    return scopeprof__crc_end(d, x, (const unsigned char *)q, n);
}
#endif

SCOPEPROF__API uint32_t scopeprof_crc32(uint32_t crc, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    uint32_t c = ~crc;
    const scopeprof__crc_data *d = scopeprof__crc_tables();
    if (!d) { /* out of memory: bit by bit */
        while (n--) {
            c ^= *p++;
            for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        }
        return ~c;
    }
#ifdef SCOPEPROF__CLMUL
    if (n >= 128 && d->clmul == 2) return ~scopeprof__crc_vclmul(d, c, p, n);
    if (n >= 64 && d->clmul) return ~scopeprof__crc_clmul(d, c, p, n);
#endif
    return ~scopeprof__crc_slices(d, c, p, n);
}

SCOPEPROF__API uint32_t scopeprof_chunk_crc(uint32_t payload_crc, const unsigned char *chunk_header) {
    /* Payload first, then the header: a streaming writer knows the length
     * only once the payload is done. */
    return scopeprof_crc32(payload_crc, chunk_header, 12);
}

/* ---- Event records (see "Event records" above) ---------------------------- */
/* Little-endian loads and stores: the file format's byte order. On a
 * little-endian CPU one move each (compilers do not always merge the byte
 * moves, and the writer makes four of these per event). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint32_t scopeprof__get32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t scopeprof__get64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline void scopeprof__put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void scopeprof__put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
#else
static inline uint32_t scopeprof__get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t scopeprof__get64(const unsigned char *p) {
    return (uint64_t)scopeprof__get32(p) | (uint64_t)scopeprof__get32(p + 4) << 32;
}
static inline void scopeprof__put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static inline void scopeprof__put64(unsigned char *p, uint64_t v) {
    scopeprof__put32(p, (uint32_t)v);
    scopeprof__put32(p + 4, (uint32_t)(v >> 32));
}
#endif

/* Whether e fits a 16-byte record. */
static inline int scopeprof__rec_short(const scopeprof_event *e) {
    return !(e->depth & SCOPEPROF_DEPTH_MEM) && e->end >= e->start &&
           e->end - e->start < SCOPEPROF_REC_LONG_MARK && e->site >> SCOPEPROF_REC_SITE_BITS == 0 &&
           (e->depth & SCOPEPROF_DEPTH_MASK) >> SCOPEPROF_REC_DEPTH_BITS == 0;
}

/* (The writer writes its buffers as they are: this is for readers and
 * tests that build records.) */
SCOPEPROF__API size_t scopeprof_rec_encode(unsigned char *p, const scopeprof_event *e) {
    if (scopeprof__rec_short(e)) {
        scopeprof__put64(p, e->start);
        scopeprof__put32(p + 8, (uint32_t)(e->end - e->start));
        scopeprof__put32(p + 12, scopeprof__key_pack(e->site, e->depth));
        return 16;
    }
    scopeprof__put64(p, e->start);
    scopeprof__put32(p + 8, SCOPEPROF_REC_LONG_MARK);
    scopeprof__put32(p + 12, e->depth);
    scopeprof__put64(p + 16, e->end);
    scopeprof__put32(p + 24, e->site);
    scopeprof__put32(p + 28, 0);
    return 32;
}

SCOPEPROF__API size_t scopeprof_rec_decode(const unsigned char *p, size_t avail, scopeprof_event *e) {
    if (avail < 16) return 0;
    uint32_t dur = scopeprof__get32(p + 8), key = scopeprof__get32(p + 12);
    e->start = scopeprof__get64(p);
    if (dur != SCOPEPROF_REC_LONG_MARK) {
        e->end = e->start + dur;
        scopeprof__key_unpack(key, e);
        return 16;
    }
    if (avail < 32) return 0;
    e->depth = key;
    e->end = scopeprof__get64(p + 16);
    e->site = scopeprof__get32(p + 24);
    return 32;
}

/* ---- Input shapes (see "Input shapes" in format.h) ------------------------
 * Reading a file's is the reporter's (SCOPEPROF_AGGREGATION); the writer
 * checks and prints the words it summed. */
#ifdef SCOPEPROF_AGGREGATION
SCOPEPROF__API size_t scopeprof_rec_decode_shaped(const unsigned char *p, size_t avail, scopeprof_event *e,
                                                  const unsigned char **shape, uint32_t *units) {
    *shape = NULL;
    *units = 0;
    size_t used = scopeprof_rec_decode(p, avail, e);
    if (used != 32) return used;
    uint32_t k = scopeprof__get32(p + 28);
    if (k == 0) return 32;
    if (k > (avail - 32) / 16) return 0;
    *shape = p + 32;
    *units = k;
    return 32 + (size_t)k * 16;
}

#endif

SCOPEPROF__API int scopeprof_shape_check(const uint64_t *w, uint32_t m) {
    if (m > SCOPEPROF_SHAPE_MAX_WORDS) return -1;
    int inputs = 0;
    for (uint32_t i = 0; i < m; inputs++) {
        uint64_t dims = w[i++];
        if (dims > m - i) return -1;
        i += (uint32_t)dims;
    }
    return inputs;
}

#ifdef SCOPEPROF_AGGREGATION
SCOPEPROF__API int scopeprof_shape_words(const unsigned char *shape, uint32_t units, uint64_t *w) {
    if (units == 0 || units > (SCOPEPROF_SHAPE_MAX_WORDS + 1) / 2) return -1;
    uint64_t m = scopeprof__get64(shape);
    if (m > 2 * (uint64_t)units - 1) return -1;
    for (uint32_t i = 0; i < (uint32_t)m; i++) w[i] = scopeprof__get64(shape + 8 + 8 * (size_t)i);
    return scopeprof_shape_check(w, (uint32_t)m) < 0 ? -1 : (int)m;
}
#endif

/* Append s to buf (n bytes) at *len, as far as it fits; *len counts all. */
SCOPEPROF__INTERNAL void scopeprof__put_str(char *buf, size_t n, size_t *len, const char *s) {
    size_t l = strlen(s);
    if (*len < n) memcpy(buf + *len, s, *len + l < n ? l : n - *len);
    *len += l;
}

SCOPEPROF__API size_t scopeprof_shape_format(char *buf, size_t n, const uint64_t *w, uint32_t m) {
    size_t len = 0;
    char piece[32];
    scopeprof__put_str(buf, n, &len, "[");
    for (uint32_t i = 0; i < m;) {
        uint32_t dims = (uint32_t)w[i++];
        scopeprof__put_str(buf, n, &len, i > 1 ? ", [" : "[");
        for (uint32_t d = 0; d < dims && i < m; d++, i++) {
            snprintf(piece, sizeof piece, "%s%" PRId64, d ? ", " : "", (int64_t)w[i]);
            scopeprof__put_str(buf, n, &len, piece);
        }
        scopeprof__put_str(buf, n, &len, "]");
    }
    scopeprof__put_str(buf, n, &len, "]");
    if (n) buf[len < n ? len : n - 1] = 0;
    return len;
}

#ifdef __cplusplus
}
#endif
#endif /* codec.h */
