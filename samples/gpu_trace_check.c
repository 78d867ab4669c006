/* gpu_trace_check.c -- used by samples/gpu_check.sh: reads a trace file and
 * checks the GPU records of one scope name against an expected length.
 *   gpu_trace_check TRACE NAME EXPECTED_MS TOLERANCE
 * For each record: duration within TOLERANCE (a fraction, 0.05 = 5%) of
 * EXPECTED_MS, and the GPU interval starting after its CPU launch. Then
 * every GPU record of the file, of any name, must be timed (status 0): the
 * program never flushes, so its last scopes are still pending at exit, when
 * nvcc's static runtime is unloading. Prints every record of NAME; exits 1
 * if any check fails or there is no record. */
#include "../tests/common/trace.h"

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s TRACE NAME EXPECTED_MS TOLERANCE\n", argv[0]);
        return 2;
    }
    tr_trace t;
    if (!tr_read(argv[1], &t) && t.ngpu == 0) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    double want = atof(argv[3]) * 1e6, tol = atof(argv[4]);
    int n = 0, bad = 0;
    for (size_t i = 0; i < t.ngpu; i++) {
        const tr_gpu *g = &t.gpu[i];
        if (strcmp(tr_name(&t, g->site), argv[2]) != 0) continue;
        n++;
        double d = (double)(g->end - g->start);
        int ok_len = g->status == 0 && d >= want * (1 - tol) && d <= want * (1 + tol);
        int ok_order = g->start >= g->launch;
        printf("%s #%d: %.3f ms (expected %.3f), starts %.3f ms after its CPU launch%s%s\n",
               argv[2], n, d / 1e6, want / 1e6, ((double)g->start - (double)g->launch) / 1e6,
               ok_len ? "" : "  <-- LENGTH", ok_order ? "" : "  <-- BEFORE LAUNCH");
        bad += !ok_len || !ok_order;
    }
    size_t untimed = 0;
    for (size_t i = 0; i < t.ngpu; i++) untimed += t.gpu[i].status != 0;
    printf("%zu GPU records, %zu untimed%s\n", t.ngpu, untimed, untimed ? "  <-- LOST" : "");
    bad += untimed != 0;
    for (int d = 0; d < 16; d++)
        if (t.devices_seen >> d & 1) printf("device %d: %s\n", d, t.devices[d]);
    tr_free(&t);
    if (n == 0) fprintf(stderr, "no GPU record named %s\n", argv[2]);
    return n == 0 || bad ? 1 : 0;
}
