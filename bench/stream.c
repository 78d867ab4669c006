/* stream.c -- a long run with a small buffer budget: scopeprof has to write
 * full chunks to the trace file while the program records.
 *
 *   SCOPEPROF_BUFFER_MB=8 SCOPEPROF_OUTPUT=/tmp/x.sprof stream [N]   (N: 100M)
 *
 * The recording runs in a child process so that the parent can report what
 * the child cost as a whole, exit included (the exit hook writes the last
 * chunks and the summary's aggregation finishes there): wall time, peak RSS
 * from wait4()'s rusage, and the size of the finished trace file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include "bench.h"

/* Two nested scopes per iteration, so the file carries real depths. */
static void record(uint64_t n) {
    for (uint64_t i = 0; i < n; i += 2) {
        PROFILE_SCOPE("stream_outer");
        BENCH_BODY(i);
        {
            PROFILE_SCOPE("stream_inner");
            BENCH_BODY(i);
        }
    }
}

int main(int argc, char **argv) {
    uint64_t n = 100000000;
    if (argc > 2 || (argc == 2 && (n = bench_parse_count(argv[1])) == 0)) {
        fprintf(stderr, "usage: stream [SCOPES]   (default 100M; 10M, 1e6 style: 10M)\n");
        return 2;
    }
    n &= ~(uint64_t)1; /* two scopes per iteration */
    /* Defaults for a bare run; the Makefile sets them explicitly. */
    char path[256];
    snprintf(path, sizeof path, "/tmp/scopeprof_stream.%d.sprof", (int)getpid());
    setenv("SCOPEPROF_OUTPUT", path, 0);
    setenv("SCOPEPROF_BUFFER_MB", "8", 0);
    setenv("SCOPEPROF_SUMMARY", "0", 0);
    const char *out = getenv("SCOPEPROF_OUTPUT");

    printf("stream: %llu scopes, SCOPEPROF_BUFFER_MB=%s, SCOPEPROF_OUTPUT=%s\n",
           (unsigned long long)n, getenv("SCOPEPROF_BUFFER_MB"), out);
    fflush(stdout);

    uint64_t t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("stream: fork");
        return 1;
    }
    if (pid == 0) {
        uint64_t c0 = bench_now_ns();
        record(n);
        uint64_t c1 = bench_now_ns();
        double s = (double)(c1 - c0) / 1e9;
        printf("  recording loop:      %8.3f s  %8.1f M scopes/s  %6.2f ns/scope "
               "(chunks written as the budget fills)\n",
               s, (double)n / s / 1e6, (double)(c1 - c0) / (double)n);
        fflush(stdout);
        exit(0); /* the exit hook writes what is left */
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("stream: wait4");
            return 1;
        }
    }
    uint64_t t1 = bench_now_ns();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "stream: the recording child failed (status 0x%x)\n", status);
        return 1;
    }
    double total = (double)(t1 - t0) / 1e9;
    printf("  whole child (w/ exit): %6.3f s  %8.1f M scopes/s  (user %.2f s, sys %.2f s)\n",
           total, (double)n / total / 1e6,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    printf("  peak RSS (ru_maxrss): %7.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    struct stat st;
    if (out && out[0] && strcmp(out, "none") != 0 && stat(out, &st) == 0) {
        printf("  trace file:          %8.1f MiB, %.2f bytes/scope\n",
               (double)st.st_size / 1048576.0, (double)st.st_size / (double)n);
    } else {
        printf("  trace file:          none written\n");
    }
    return 0;
}
