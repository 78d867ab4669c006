/* test_format.c -- the trace format's damage detection (issue 17, items 12
 * and 14), on a real trace written by prog_flip and read by the reporter
 * in-process (sp_main):
 * - every single-bit flip in the file header, in every chunk header and in
 *   the whole END chunk is either detected (a message on stderr naming the
 *   file) or harmless (the same output, the same stderr, exit 0);
 * - a damaged chunk length loses that chunk only: reading resumes at the
 *   next valid chunk, and the command says so and exits 1;
 * - an END chunk whose event count disagrees with the events read is
 *   reported;
 * - the CRC-32 of both ways the header computes it (tables; carry-less
 *   multiply where the CPU has it) is zlib's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "child.h"
#include "read.h"
#define SCOPEPROF_AGGREGATION
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"
#ifndef SP_NO_ZLIB
#include <zlib.h>
#endif

static char *slurp_stream(FILE *f) {
    fflush(f);
    long n = ftell(f);
    char *s = malloc((size_t)n + 1);
    if (!s) abort();
    rewind(f);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

/* `scopeprof table --per-rank PATH` in-process: exit status, stdout, stderr
 * (per-rank: the header's rank is part of the output). */
static int report(const char *path, char **out, char **err) {
    char *argv[] = {"scopeprof", "table", "--per-rank", (char *)path, NULL};
    FILE *o = tmpfile(), *e = tmpfile();
    if (!o || !e) abort();
    int rc = sp_main(4, argv, o, e);
    *out = slurp_stream(o);
    *err = slurp_stream(e);
    return rc;
}

static void save(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void put_le32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* A fresh trace of prog_flip, loaded. */
typedef struct trace_file {
    child run;
    unsigned char *b;
    size_t n;
    size_t chunk[64]; /* offsets of the chunks */
    int nchunks;
} trace_file;

static void load(trace_file *t) {
    child_run_ex(&t->run, "prog_flip", 1, NULL, NULL);
    if (t->run.timed_out || !t->run.exited || t->run.code != 0)
        fail_msg("prog_flip failed (status %d): %s", t->run.status, t->run.err);
    /* PROFILE_SET_RANK(3) puts the rank in the explicit path's name, as a
     * launcher's rank does: <dir>/trace.sprof -> <dir>/trace.rank3.sprof. */
    char path[PATH_MAX + 16];
    size_t l = strlen(t->run.trace);
    snprintf(path, sizeof path, "%.*s.rank3.sprof", (int)(l - 6), t->run.trace);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    t->n = (size_t)ftell(f);
    rewind(f);
    t->b = malloc(t->n);
    assert_non_null(t->b);
    assert_int_equal(fread(t->b, 1, t->n, f), t->n);
    fclose(f);
    /* Walk the chunks of the undamaged file. */
    t->nchunks = 0;
    for (size_t at = le32(t->b + 12); at + 16 <= t->n; at += 16 + le32(t->b + at + 8)) {
        assert_true(t->nchunks < 64);
        t->chunk[t->nchunks++] = at;
    }
    assert_int_equal(le32(t->b + t->chunk[t->nchunks - 1] + 4), SCOPEPROF_CHUNK_END);
}

static void unload(trace_file *t) {
    free(t->b);
    child_free(&t->run);
}

static int count_type(const trace_file *t, uint32_t type) {
    int k = 0;
    for (int i = 0; i < t->nchunks; i++) k += le32(t->b + t->chunk[i] + 4) == type;
    return k;
}

static void test_bitflip_sweep(void **state) {
    (void)state;
    trace_file t;
    load(&t);
    /* The file has what the sweep is meant to cover. */
    assert_int_equal(le32(t.b + 8) & 0xFFFF, SCOPEPROF_FORMAT_MAJOR);
    assert_true(count_type(&t, SCOPEPROF_CHUNK_EVENTS) >= 3);
    assert_true(count_type(&t, SCOPEPROF_CHUNK_SITES) >= 1);
    assert_true(count_type(&t, SCOPEPROF_CHUNK_THREAD) >= 2);
    assert_int_equal(count_type(&t, SCOPEPROF_CHUNK_MEMORY), 1);
    assert_int_equal(count_type(&t, SCOPEPROF_CHUNK_STEPS), 1);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/flipped.sprof", t.run.dir);
    char *base_out, *base_err;
    save(path, t.b, t.n);
    assert_int_equal(report(path, &base_out, &base_err), 0);
    assert_string_equal(base_err, "");
    assert_non_null(strstr(base_out, "rank 3"));
    assert_non_null(strstr(base_out, "inner"));
    /* The bytes to sweep: the file header, each chunk's header, the END
     * chunk whole. */
    size_t lo[66], hi[66];
    int nr = 0;
    lo[nr] = 0, hi[nr++] = le32(t.b + 12);
    for (int i = 0; i < t.nchunks; i++) lo[nr] = t.chunk[i], hi[nr++] = t.chunk[i] + 16;
    hi[nr - 1] = t.n; /* END: header and payload */
    unsigned detected = 0, as_truncation = 0, harmless = 0, bits = 0;
    for (int r = 0; r < nr; r++)
        for (size_t at = lo[r]; at < hi[r]; at++)
            for (int bit = 0; bit < 8; bit++) {
                t.b[at] ^= (unsigned char)(1u << bit);
                save(path, t.b, t.n);
                t.b[at] ^= (unsigned char)(1u << bit);
                char *out, *err;
                int rc = report(path, &out, &err);
                bits++;
                if (rc == 0 && strcmp(out, base_out) == 0 && strcmp(err, base_err) == 0) harmless++;
                else if (strstr(err, path) && rc == SP_EXIT_INPUT) detected++;
                else if (strstr(err, path) && rc == 0 && strstr(err, "truncated at byte")) as_truncation++;
                else
                    fail_msg("byte %zu bit %d: exit %d, no message, and the output changed:\n%s\n"
                             "-- was --\n%s", at, bit, rc, out, base_out);
                free(out);
                free(err);
            }
    /* A length grown past the end of the file in the last chunk looks like a
     * file cut short: reported as such (exit 0, as for a cut file). */
    printf("bit-flip sweep: %u bits (header, %d chunk headers, END): %u detected as damage, "
           "%u as truncation, %u harmless\n", bits, t.nchunks, detected, as_truncation, harmless);
    free(base_out);
    free(base_err);
    unload(&t);
}

/* A length that points past the file's end (or anywhere) costs its chunk
 * only: the chunks after it are read. */
static void test_damaged_length_resyncs(void **state) {
    (void)state;
    trace_file t;
    load(&t);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/damaged.sprof", t.run.dir);
    int first_events = -1;
    for (int i = 0; i < t.nchunks && first_events < 0; i++)
        if (le32(t.b + t.chunk[i] + 4) == SCOPEPROF_CHUNK_EVENTS) first_events = i;
    assert_true(first_events >= 0);
    static const uint32_t lens[] = {0x00100000u, 0x7FFFFFFFu, 3u};
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        unsigned char *len = t.b + t.chunk[first_events] + 8;
        uint32_t was = le32(len);
        put_le32(len, lens[k]);
        save(path, t.b, t.n);
        put_le32(len, was);
        char *out, *err;
        assert_int_equal(report(path, &out, &err), SP_EXIT_INPUT);
        if (!strstr(err, "read on from the next valid chunk"))
            fail_msg("length %u: stderr lacks the resync: %s", lens[k], err);
        /* Events of every later chunk are counted: the worker's 10 "work"
         * (first EVENTS chunk, the worker's) are lost, the 12 "inner" are not. */
        const char *inner = strstr(out, "inner");
        if (!inner || !strstr(inner, " 12 ")) fail_msg("length %u: the table lost later chunks:\n%s", lens[k], out);
        free(out);
        free(err);
    }
    unload(&t);
}

/* An END chunk whose count disagrees (a valid CRC: a writer that lost
 * events) is reported. Format 4 counts 16-byte record units. */
static void test_end_count_checked(void **state) {
    (void)state;
    trace_file t;
    load(&t);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/end.sprof", t.run.dir);
    unsigned char *end = t.b + t.chunk[t.nchunks - 1];
    uint32_t total = le32(end + 16);
    put_le32(end + 16, total + 1);
    put_le32(end + 12, scopeprof_chunk_crc(scopeprof_crc32(0, end + 16, 16), end));
    save(path, t.b, t.n);
    char *out, *err, want[128];
    assert_int_equal(report(path, &out, &err), SP_EXIT_INPUT);
    snprintf(want, sizeof want, "the END chunk counts %u record unit(s) of 16 bytes, %u were read",
             total + 1, total);
    if (!strstr(err, want)) fail_msg("stderr lacks '%s': %s", want, err);
    free(out);
    free(err);
    unload(&t);
}

/* The format's CRC is zlib's crc32 (docs/FORMAT.md): every length up to
 * a few hundred bytes and some longer ones, at every alignment mod 16, from
 * varied start values, by scopeprof_crc32 and by each of its two ways
 * directly (the folding only takes 64 bytes and more). */
static void test_crc_is_zlibs(void **state) {
    (void)state;
#ifdef SP_NO_ZLIB
    skip();
#else
    static unsigned char buf[9000];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    const scopeprof__crc_data *d = scopeprof__crc_tables();
    assert_non_null(d);
    int ways = 1;
#ifdef SCOPEPROF__CLMUL
    ways += d->clmul; /* 1: 16-byte folding; 2: also 32-byte */
#endif
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n + off <= sizeof buf; n += n < 400 ? 1 : 61 + off) {
            uint32_t init = (uint32_t)(n * 2654435761u + off);
            uint32_t want = (uint32_t)crc32(init, buf + off, (uInt)n);
            assert_int_equal(scopeprof_crc32(init, buf + off, n), want);
            assert_int_equal(~scopeprof__crc_slices(d, ~init, buf + off, n), want);
#ifdef SCOPEPROF__CLMUL
            if (d->clmul && n >= 64)
                assert_int_equal(~scopeprof__crc_clmul(d, ~init, buf + off, n), want);
            if (d->clmul == 2 && n >= 128)
                assert_int_equal(~scopeprof__crc_vclmul(d, ~init, buf + off, n), want);
#endif
        }
    print_message("CRC-32 checked against zlib, %d way(s)\n", ways);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitflip_sweep),
        cmocka_unit_test(test_damaged_length_resyncs),
        cmocka_unit_test(test_end_count_checked),
        cmocka_unit_test(test_crc_is_zlibs),
    };
    return cmocka_run_group_tests_name("format" VARIANT, tests, NULL, NULL);
}
