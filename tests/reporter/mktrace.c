/* mktrace.c -- writes the hand-made trace files of the reporter tests.
 *
 *   mktrace known OUT [PID]   the known event set (tw.h)
 *   mktrace nasty OUT         names that need JSON escaping, two threads,
 *                             equal starts, zero durations
 *   mktrace rich OUT [RANK]   GPU scopes, memory, steps, device, peaks (tw.h)
 *   mktrace rank OUT PID RANK SCALE   the known set, times * SCALE, a rank
 *   mktrace shaped OUT        format 5: scopes with input shapes
 *   mktrace deep OUT [N]      about N scopes (default 1M) in recursions up
 *                             to 998 deep under one main, as an
 *                             interpreter's (the reporter benchmark's deep
 *                             stacks, bench/reporter_bench.sh)
 *   mktrace corpus DIR        the bad-file corpus (tests/reporter/corpus/,
 *                             regenerate with tests/reporter/make_corpus.sh)
 */
#include <stdio.h>
#include <string.h>

#include "tw.h"

static void nasty(tw *w) {
    /* Parent and first child start at the same ns; a zero-length scope; a
     * second thread whose events interleave in time with the first. */
    static const tw_ev t0[] = {{100, 100, 3, 2},  {100, 600, 2, 1},   {700, 900, 4, 1},
                               {100, 1000, 1, 0}, {2000, 2500, 2, 0}};
    static const tw_ev t1[] = {{300, 400, 4, 1}, {250, 950, 5, 0}};
    tw_header(w, 4242, "nasty \"prog\"");
    tw_site(w, 1, 1, "quote\" back\\slash", "dir\\file.c", "f");
    tw_site(w, 2, 2, "ctl\x01\x1f\ttab\nnl", "a.c", "g");
    tw_site(w, 3, 3, "utf8 \xc3\xa9 \xf0\x9f\x98\x80", "b.c", "h");
    tw_site(w, 4, 4, "bad \xff\xc3 utf8 \xed\xa0\x80", "c.c", "i");
    tw_site(w, 5, 5, "semi;colon", "d.c", "j");
    tw_thread(w, 0, 4242, "main");
    tw_thread(w, 1, 4243, "worker \"1\"");
    tw_events(w, 0, t0, 3);
    tw_events(w, 1, t1, 2);
    tw_events(w, 0, t0 + 3, 2);
    tw_end(w, 7);
}

/* Format 5: scopes with input shapes (PROFILE_SCOPE_SHAPE), times in ticks
 * of 1 ns. Thread 0, in close order:
 *   chunk 1: gemm [100,200] [[64, 32, 16]]; gemm [300,350] [[8, 8, 8]];
 *            gemm [400,500] no shapes (a 16-byte record);
 *            gemm [650,750] [[64, 32, 16]] inside
 *            conv2d [600,900] [[128, 64, 56, 56], [64, 64, 3, 3], [], [-1]];
 *            main [0,1000]
 *   chunk 2: gemm [1100,1300] [[64, 32, 16]]; gemm [1400,1450] with an
 *            empty list of inputs (m = 0: "[]", the row of gemm without)
 * By name and shape: gemm [[64, 32, 16]] 3 calls, 400 ns; [[8, 8, 8]] 1,
 * 50; [] 2, 150; conv2d 1, total 300, self 200; main 1, total 1000, self
 * 450. Units (a long record 2, its shape ceil((m + 1) / 2)): 5+5+1+5+9+1
 * in chunk 1, 5+3 in chunk 2: 34. */
static void shaped(tw *w) {
    static const tw_ev c1[] = {{100, 200, 2, 1}, {300, 350, 2, 1}, {400, 500, 2, 1},
                               {650, 750, 2, 2}, {600, 900, 3, 1}, {0, 1000, 1, 0}};
    static const tw_ev c2[] = {{1100, 1300, 2, 0}, {1400, 1450, 2, 0}};
    static const uint64_t g64[] = {4, 3, 64, 32, 16}, g8[] = {4, 3, 8, 8, 8}, none[] = {0},
                          conv[] = {13, 4, 128, 64, 56, 56, 4, 64, 64, 3, 3, 0, 1, (uint64_t)-1};
    const uint64_t *const s1[] = {g64, g8, NULL, g64, conv, NULL}, *const s2[] = {g64, none};
    int major = tw_major;
    tw_major = 5;
    tw_header(w, 77, "shaped");
    tw_ticks(w, 0, 0, 1.0);
    tw_site(w, 1, 10, "main", "m.c", "main");
    tw_site(w, 2, 20, "gemm", "m.c", "gemm");
    tw_site(w, 3, 30, "conv2d", "m.c", "conv");
    tw_thread(w, 0, 77, "main");
    tw_events_shaped(w, 0, c1, 6, s1);
    tw_events_shaped(w, 0, c2, 2, s2);
    tw_end(w, 34);
    tw_major = major;
}

/* Format 5, a good EVENTS chunk and then one whose second record's shapes
 * are bad: `words` (NULL: good ones) written as its shape; then, patched
 * into that payload (0: nothing), `units` as the record's units field and
 * `m` as its first word. */
static void shaped_bad(tw *w, const uint64_t *words, uint32_t units, uint64_t m) {
    static const tw_ev ev[] = {{10, 20, 1, 0}, {30, 40, 1, 0}};
    static const uint64_t good[] = {2, 1, 5};
    const uint64_t *const sh[] = {NULL, words ? words : good};
    int major = tw_major;
    tw_major = 5;
    tw_header(w, 1, "p");
    tw_ticks(w, 0, 0, 1.0);
    tw_site(w, 1, 1, "s", "f.c", "fn");
    tw_events(w, 0, ev, 1);
    tw p = {0, 0, 0};
    tw_events_payload(&p, 0, ev, 2, sh);
    if (units) tw_patch32(&p, 8 + 16 + 28, units); /* the long record follows a short one */
    if (m) tw_patch64(&p, 8 + 16 + 32, m);
    tw_chunk(w, 3, &p);
    free(p.b);
    tw_end(w, 1 + (uint64_t)(p.n - 8) / 16);
    tw_major = major;
}

static int save(const tw *w, const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (tw_save(w, path) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static void put32_at(tw *w, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) w->b[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static int corpus(const char *dir) {
    int bad = 0;
    tw w = {0, 0, 0};
    static const tw_ev one[] = {{10, 20, 1, 0}};
#define RESET() (w.n = 0)
    bad |= save(&w, dir, "empty");
    tw_put(&w, "NOTATRACEFILE-NOTATRACEFILE-NOTATRACEFILE-NOTATRACE", 52);
    bad |= save(&w, dir, "bad_magic");
    RESET();
    tw_header(&w, 1, "p");
    bad |= save(&w, dir, "header_only");
    w.n = 30;
    bad |= save(&w, dir, "header_cut");
    RESET();
    tw_header_v(&w, 1, "p", 99);
    tw_end(&w, 0);
    bad |= save(&w, dir, "wrong_version");
    RESET();
    tw_known(&w, 7);
    bad |= save(&w, dir, "known");
    w.n -= 40; /* into the END chunk's header... */
    w.n -= 30; /* ...and into the second EVENTS chunk */
    bad |= save(&w, dir, "truncated_mid_chunk");
    RESET();
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 1, "s", "f.c", "fn");
    size_t at = tw_events(&w, 0, one, 1);
    put32_at(&w, at, 0x4B4E4842u);
    bad |= save(&w, dir, "bad_chunk_magic");
    put32_at(&w, at, 0x4B4E4843u);
    w.b[w.n - 1] ^= 0x40; /* payload byte: CRC no longer matches */
    bad |= save(&w, dir, "bad_crc");
    w.b[w.n - 1] ^= 0x40;
    put32_at(&w, at + 8, 0xFFFFFFF0u);
    bad |= save(&w, dir, "absurd_length");
    RESET();
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 1, "s", "f.c", "fn");
    tw u = {0, 0, 0};
    tw_put(&u, "future data", 11);
    tw_chunk(&w, 99, &u);
    tw_events(&w, 0, one, 1);
    tw_end(&w, 1);
    bad |= save(&w, dir, "unknown_chunk");
    RESET();
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 1, "s", "f.c", "fn");
    tw_thread(&w, 0, 1, "main");
    tw_events(&w, 0, one, 0);
    tw_end(&w, 0);
    bad |= save(&w, dir, "zero_events");
    /* EVENTS payload claiming more events than it holds. */
    RESET();
    tw_header(&w, 1, "p");
    u.n = 0;
    tw_u32(&u, 0);
    tw_u32(&u, 1000000);
    tw_u64(&u, 1);
    tw_u64(&u, 2);
    tw_u32(&u, 1);
    tw_u32(&u, 0);
    tw_chunk(&w, 3, &u);
    bad |= save(&w, dir, "event_count_overflow");
    RESET();
    tw_header(&w, 1, "p");
    static const tw_ev deep[] = {{10, 20, 1, 0x3FFFFFFF}};
    tw_events(&w, 0, deep, 1);
    bad |= save(&w, dir, "absurd_depth");
    RESET();
    tw_header(&w, 1, "p");
    u.n = 0;
    tw_u32(&u, 1);
    tw_u32(&u, 1);
    tw_u32(&u, 1);
    tw_u32(&u, 0x7FFFFFFF);
    tw_u32(&u, 0x7FFFFFFF);
    tw_u32(&u, 4);
    tw_put(&u, "name", 4);
    tw_chunk(&w, 1, &u);
    bad |= save(&w, dir, "site_length_overflow");
    RESET();
    tw_header(&w, 1, "p");
    tw_site(&w, 0, 1, "zero", "f.c", "fn");
    bad |= save(&w, dir, "site_id_zero");
    RESET();
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 1, "s", "f.c", "fn");
    static const tw_ev far[] = {{10, 20, 1, 0}, {5, 30, 0xFFFFFFF0u, 0}};
    tw_thread(&w, 0xFFFFFFFFu, 9, "t");
    tw_events(&w, 0xFFFFFFFFu, far, 2);
    tw_end(&w, 2);
    bad |= save(&w, dir, "huge_ids");
    /* GPU and memory records: a GPU chunk ahead of its EVENTS chunk. */
    RESET();
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 1, "gpu", "g.c", "fn");
    tw_site(&w, 2, 2, "outer", "g.c", "fn");
    u.n = 0;
    tw_u32(&u, 0);
    tw_u32(&u, 1);
    tw_u64(&u, 150); /* start_ns */
    tw_u64(&u, 250); /* end_ns */
    tw_u64(&u, 100); /* launch_ns = the scope's start */
    tw_u64(&u, 7);   /* stream */
    tw_u32(&u, 1);
    tw_u32(&u, 0);
    tw_u32(&u, 0);
    tw_u32(&u, 0);
    tw_chunk(&w, 5, &u);
    static const tw_ev gm[] = {{100, 200, 1, 1u | 0x80000000u},
                               {120, (uint64_t)-4096, 0, 1u | 0x40000000u},
                               {0, 300, 2, 0}};
    tw_events(&w, 0, gm, 3);
    tw_end(&w, 3);
    bad |= save(&w, dir, "gpu_mem");
    /* Two threads sharing a stream of device 1: GPU intervals that overlap
     * without nesting; and each on the per-thread default stream (handle 2). */
    RESET();
    tw_header(&w, 5000, "p");
    tw_site(&w, 1, 1, "k", "g.c", "fn");
    tw_thread(&w, 0, 4242, "a");
    tw_thread(&w, 1, 4243, "b");
    for (uint32_t th = 0; th < 2; th++) {
        u.n = 0;
        tw_u32(&u, th);
        tw_u32(&u, 2);
        /* shared stream: thread 0 [150, 250], thread 1 [200, 300] */
        tw_u64(&u, 150 + 50 * th);
        tw_u64(&u, 250 + 50 * th);
        tw_u64(&u, 100 + 10 * th);
        tw_u64(&u, 0xdead0000u);
        tw_u32(&u, 1), tw_u32(&u, 1), tw_u32(&u, 0), tw_u32(&u, 0);
        /* per-thread default stream: [400, 450] and [410, 460] */
        tw_u64(&u, 400 + 10 * th);
        tw_u64(&u, 450 + 10 * th);
        tw_u64(&u, 300 + 10 * th);
        tw_u64(&u, 2);
        tw_u32(&u, 1), tw_u32(&u, 1), tw_u32(&u, 0), tw_u32(&u, 0);
        tw_chunk(&w, 5, &u);
        const tw_ev sh[] = {{100 + 10 * th, 200 + 10 * th, 1, 0x80000000u},
                            {300 + 10 * th, 320 + 10 * th, 1, 0x80000000u}};
        tw_events(&w, th, sh, 2);
    }
    tw_end(&w, 4);
    bad |= save(&w, dir, "gpu_shared");
    RESET();
    nasty(&w);
    bad |= save(&w, dir, "nasty");
    RESET();
    tw_rich(&w, 100, 0xFFFFFFFFu);
    bad |= save(&w, dir, "rich");
    /* Format 2: the same sets in 16- and 32-byte records. Scaled by 10^4
     * the known set's durations pass 2^32 ns (32-byte records); the memory
     * records of gpu_mem and rich always take 32 bytes. */
    tw_major = 2;
    RESET();
    tw_known(&w, 7);
    bad |= save(&w, dir, "v2_known");
    RESET();
    tw_known_rank(&w, 7, 0xFFFFFFFFu, 10000);
    bad |= save(&w, dir, "v2_known_long");
    RESET();
    tw_rich(&w, 100, 0xFFFFFFFFu);
    bad |= save(&w, dir, "v2_rich");
    /* A 32-byte record cut by its chunk's end: count 2, a short record, then
     * half of a long one. */
    RESET();
    tw_header(&w, 1, "p");
    tw_site(&w, 1, 1, "a", "a.c", "f");
    {
        static const tw_ev cut[] = {{10, 20, 1, 1}, {0, 1ull << 40, 1, 0}};
        size_t at = tw_events(&w, 0, cut, 2);
        w.n -= 16;                  /* drop the long record's second half */
        put32_at(&w, at + 8, 8 + 16 + 16);
        put32_at(&w, at + 12, scopeprof_crc32(0, w.b + at + 16, 8 + 16 + 16));
    }
    tw_end(&w, 2);
    bad |= save(&w, dir, "v2_long_cut");
    tw_major = 1;
    RESET();
    tw_known_rank(&w, 7, 0xFFFFFFFFu, 10000);
    bad |= save(&w, dir, "known_long");
    /* Format 5: input shapes, and shapes that do not parse (each after a
     * good chunk, which is still counted): m past its units, an input whose
     * dimensions run past m, more words than a record holds (65 units), and
     * units that run past the chunk. */
    RESET();
    shaped(&w);
    bad |= save(&w, dir, "v5_shapes");
    RESET();
    shaped_bad(&w, NULL, 0, 4); /* 2 units hold m <= 3 */
    bad |= save(&w, dir, "v5_shape_m_past");
    static const uint64_t dims_past[] = {2, 3, 64};
    RESET();
    shaped_bad(&w, dims_past, 0, 0);
    bad |= save(&w, dir, "v5_shape_dims_past");
    {
        uint64_t many[129] = {128, 127};
        for (int i = 2; i < 129; i++) many[i] = (uint64_t)i;
        RESET();
        shaped_bad(&w, many, 0, 0);
        bad |= save(&w, dir, "v5_shape_too_many");
    }
    RESET();
    shaped_bad(&w, NULL, 9, 0);
    bad |= save(&w, dir, "v5_shape_units_past");
    /* Format 4: the same long record's last field (reserved, ignored there)
     * nonzero, and zero: the two read alike. */
    tw_major = 4;
    for (int k = 0; k < 2; k++) {
        static const tw_ev lg[] = {{10, 20, 1, 1}, {0, 1ull << 40, 1, 0}};
        RESET();
        tw_header(&w, 1, "p");
        tw_ticks(&w, 0, 0, 1.0);
        tw_site(&w, 1, 1, "s", "f.c", "fn");
        u.n = 0;
        tw_events_payload(&u, 0, lg, 2, NULL);
        if (k == 0) tw_patch32(&u, 8 + 16 + 28, 3);
        tw_chunk(&w, 3, &u);
        tw_end(&w, 3);
        bad |= save(&w, dir, k == 0 ? "v4_reserved" : "v4_reserved_zero");
    }
    tw_major = 1;
    free(w.b);
    free(u.b);
    return bad;
}

/* Recursions 998 - 97k deep (k = 0..7 in turn), the frame at each level one
 * of four names chosen by the level (so stacks share their prefixes, as an
 * interpreter's calls do), a leaf at the bottom; all under one main, held
 * whole by the reporter until main closes. Each level lasts 2 ns longer
 * than the one inside it: every scope's self time is 2 ns. Format 2. */
static void deep(tw *w, uint64_t n) {
    static const char *const names[] = {"luaV_execute", "luaD_precall", "luaD_call", "luaD_rawrunprotected"};
    enum { MAXD = 998 };
    static tw_ev ev[MAXD + 2];
    int major = tw_major;
    tw_major = 2;
    tw_header(w, 1, "deep");
    tw_site(w, 1, 1, "main", "deep.c", "main");
    for (uint32_t i = 0; i < 4; i++) tw_site(w, 2 + i, 2 + i, names[i], "deep.c", names[i]);
    tw_site(w, 6, 6, "leaf", "deep.c", "leaf");
    tw_thread(w, 0, 1, "main");
    uint64_t t = 1, done = 0;
    for (uint32_t c = 0; done + 1 < n; c++) {
        uint32_t d = MAXD - 97 * (c % 8), k = 0; /* the leaf at depth d + 1 */
        for (uint32_t l = d + 1; l >= 1; l--) { /* close order: innermost first */
            uint32_t site = l == d + 1 ? 6 : 2 + (uint32_t)(l * 2654435761u >> 7) % 4;
            ev[k++] = (tw_ev){t + l, t + 2 * (uint64_t)(d + 2) - l, site, l};
        }
        tw_events(w, 0, ev, k);
        t += 2 * (uint64_t)(d + 2) + 2;
        done += k;
    }
    const tw_ev m = {0, t, 1, 0};
    tw_events(w, 0, &m, 1);
    tw_end(w, done + 1);
    tw_major = major;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: mktrace known OUT [PID] | nasty OUT | rich OUT [RANK] |\n"
                        "       rank OUT PID RANK SCALE | shaped OUT | deep OUT [N] | corpus DIR\n");
        return 2;
    }
    tw w = {0, 0, 0};
    int rc = 0;
    if (strcmp(argv[1], "known") == 0) {
        tw_known(&w, argc > 3 ? strtoull(argv[3], NULL, 10) : 7);
        rc = tw_save(&w, argv[2]) != 0;
    } else if (strcmp(argv[1], "nasty") == 0) {
        nasty(&w);
        rc = tw_save(&w, argv[2]) != 0;
    } else if (strcmp(argv[1], "rich") == 0) {
        tw_rich(&w, 100, argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 0xFFFFFFFFu);
        rc = tw_save(&w, argv[2]) != 0;
    } else if (strcmp(argv[1], "rank") == 0 && argc > 5) {
        tw_known_rank(&w, strtoull(argv[3], NULL, 10), (uint32_t)strtoul(argv[4], NULL, 10),
                      strtoull(argv[5], NULL, 10));
        rc = tw_save(&w, argv[2]) != 0;
    } else if (strcmp(argv[1], "shaped") == 0) {
        shaped(&w);
        rc = tw_save(&w, argv[2]) != 0;
    } else if (strcmp(argv[1], "deep") == 0) {
        deep(&w, argc > 3 ? strtoull(argv[3], NULL, 10) : 1000000);
        rc = tw_save(&w, argv[2]) != 0;
    } else if (strcmp(argv[1], "corpus") == 0) {
        rc = corpus(argv[2]);
    } else {
        fprintf(stderr, "mktrace: unknown kind '%s'\n", argv[1]);
        rc = 2;
    }
    free(w.b);
    return rc;
}
