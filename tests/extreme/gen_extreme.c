/* gen_extreme.c -- trace files at the edges of what the reporter reads
 * (issue 6), written byte by byte with tests/reporter/tw.h:
 *
 *   gen_extreme huge N      N flat events (site "tick", 5 ns each, 10 ns
 *                           apart, one thread) streamed to stdout chunk by
 *                           chunk: N = 2^31 + 1 is a 51 GB file that never
 *                           touches the disk (`make test-huge`).
 *   gen_extreme repeats F   a name table defined again and again: site 1
 *                           "a" twice, then redefined as "z"; site 2 "b"
 *                           defined after events that use it.
 *   gen_extreme unordered F events of one thread not in close order: a
 *                           parent written before its child, and a later
 *                           chunk going back in time.
 *   gen_extreme one F       exactly one event.
 *
 * What each must give is in extreme.sh. */
#include "tw.h"

static void put_file(const tw *w, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(w->b, 1, w->n, f) != w->n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void huge(uint64_t n) {
    enum { PER = 4096 };
    static tw_ev ev[PER];
    tw w = {0, 0, 0};
    tw_header(&w, 1, "huge");
    tw_site(&w, 1, 1, "tick", "huge.c", "main");
    tw_thread(&w, 0, 1, "main");
    uint64_t t = 1000;
    for (uint64_t done = 0; done < n;) {
        uint32_t k = n - done < PER ? (uint32_t)(n - done) : PER;
        for (uint32_t i = 0; i < k; i++, t += 10) ev[i] = (tw_ev){t, t + 5, 1, 0};
        tw_events(&w, 0, ev, k);
        if (fwrite(w.b, 1, w.n, stdout) != w.n) exit(1); /* reader gone: stop */
        w.n = 0;
        done += k;
    }
    tw_end(&w, n);
    if (fwrite(w.b, 1, w.n, stdout) != w.n || fflush(stdout) != 0) exit(1);
    free(w.b);
}

static void repeats(const char *path) {
    tw w = {0, 0, 0};
    tw_header(&w, 1, "repeats");
    tw_site(&w, 1, 10, "a", "r.c", "f");
    tw_site(&w, 1, 10, "a", "r.c", "f"); /* the same again: harmless */
    tw_thread(&w, 0, 1, "main");
    tw_ev e1[] = {{100, 200, 1, 0}};
    tw_events(&w, 0, e1, 1);
    tw_site(&w, 1, 99, "z", "other.c", "g"); /* a conflicting redefinition */
    tw_ev e2[] = {{300, 450, 1, 0}, {500, 510, 2, 0}}; /* site 2 not defined yet */
    tw_events(&w, 0, e2, 2);
    tw_site(&w, 2, 20, "b", "r.c", "f");
    tw_end(&w, 3);
    put_file(&w, path);
    free(w.b);
}

static void unordered(const char *path) {
    tw w = {0, 0, 0};
    tw_header(&w, 1, "unordered");
    tw_site(&w, 1, 1, "parent", "u.c", "f");
    tw_site(&w, 2, 2, "child", "u.c", "f");
    tw_site(&w, 3, 3, "early", "u.c", "f");
    tw_thread(&w, 0, 1, "main");
    /* parent [1000, 2000) written before its child [1200, 1500) */
    tw_ev e1[] = {{1000, 2000, 1, 0}, {1200, 1500, 2, 1}};
    tw_events(&w, 0, e1, 2);
    /* a later chunk going back in time */
    tw_ev e2[] = {{100, 300, 3, 0}};
    tw_events(&w, 0, e2, 1);
    tw_end(&w, 3);
    put_file(&w, path);
    free(w.b);
}

static void one(const char *path) {
    tw w = {0, 0, 0};
    tw_header(&w, 1, "one");
    tw_site(&w, 1, 1, "only", "o.c", "f");
    tw_thread(&w, 0, 1, "main");
    tw_ev e[] = {{1000, 4000, 1, 0}};
    tw_events(&w, 0, e, 1);
    tw_end(&w, 1);
    put_file(&w, path);
    free(w.b);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "huge") == 0) huge(strtoull(argv[2], NULL, 10));
    else if (argc == 3 && strcmp(argv[1], "repeats") == 0) repeats(argv[2]);
    else if (argc == 3 && strcmp(argv[1], "unordered") == 0) unordered(argv[2]);
    else if (argc == 3 && strcmp(argv[1], "one") == 0) one(argv[2]);
    else {
        fprintf(stderr, "usage: %s huge N | repeats FILE | unordered FILE | one FILE\n", argv[0]);
        return 2;
    }
    return 0;
}
