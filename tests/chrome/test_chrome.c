/* test_chrome.c -- the Chrome reader on hand-written traces: GPU attribution
 * as PyTorch computes it (through the launch's correlation), B/E matching,
 * out-of-order threads (Kineto's layout, from a file and from a pipe), string
 * ids, device categories, distributedInfo's rank, raw control characters,
 * memory records, pass 1's skim and what it leaves to the full parser, and
 * every malformed-input class (status + byte offset). */
#define SCOPEPROF_AGGREGATION
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrome.h"
#include "input.h"
#include "scopeprof.h"

static int failures;
#define CHECK(c) ((c) ? (void)0 : (void)(failures++, fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #c)))

typedef struct ctx { scopeprof_agg agg; } ctx;

static int on_events(void *p, const sp_reader *r, const sp_thread *t, const sp_event *ev, uint32_t n) {
    ctx *c = p;
    for (uint32_t i = 0; i < n; i++) {
        if (ev[i].kind == SP_MEM) {
            scopeprof_agg_mem(&c->agg, t->slot, ev[i].depth, ev[i].device, ev[i].bytes);
            continue;
        }
        const sp_site *s = sp_chrome_site(r, ev[i].site);
        uint32_t row = scopeprof_agg_row(&c->agg, s->name, s->name, NULL);
        scopeprof_agg_event_gpu(&c->agg, t->slot, row, ev[i].start, ev[i].end, ev[i].depth, ev[i].gpu_ns);
    }
    return 0;
}

/* Flow ids delivered (sp_chrome_flow), and the ambiguous correlations. */
static uint32_t nflows;
static uint64_t nambiguous;
static int on_flows(void *p, const sp_reader *r, const sp_thread *t, const sp_event *ev, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) nflows += sp_chrome_flow(r, i) != 0;
    nambiguous = sp_chrome_get_stats(r)->ambiguous;
    return on_events(p, r, t, ev, n);
}

static uint32_t header_rank;
static int on_header(void *p, const sp_reader *r, const sp_header *h) {
    (void)p, (void)r;
    header_rank = h->rank;
    return 0;
}

/* A pipe holding json, for the one-pass reader. */
static int pipe_of(const char *json) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    ssize_t n = write(fds[1], json, strlen(json));
    close(fds[1]);
    return n == (ssize_t)strlen(json) ? fds[0] : (close(fds[0]), -1);
}

static const scopeprof_row *row(ctx *c, const char *name) {
    scopeprof_agg_flush(&c->agg);
    for (uint32_t i = 0; i < c->agg.nrows; i++)
        if (strcmp(c->agg.rows[i].name, name) == 0) return &c->agg.rows[i];
    return NULL;
}

static int run(ctx *c, const char *json, sp_result *res) {
    scopeprof_agg_free(&c->agg);
    scopeprof_agg_init(&c->agg);
    sp_callbacks cb = {c, NULL, on_events, NULL};
    return sp_read_chrome_mem(json, strlen(json), &cb, res);
}

/* Op "inner" around a launch (correlation 9), then `mid`, then the kernel
 * (30.5 us): inner's self GPU time, -1 without its row. With `pad`, mid is
 * an event padded so that the kernel lies across the end of the reader's
 * first 1 MiB of a file. */
static int64_t inner_gpu(ctx *c, const char *launch, const char *mid, int pad, sp_result *res) {
    static const char fmt[] =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":20},\n"
        "%s,\n%s%.*s%s"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":120,\"dur\":30.5,"
        "\"args\":{\"correlation\":9}}\n]}";
    const char *pre = pad ? "{\"ph\":\"X\",\"name\":\"pad\",\"pid\":2,\"tid\":2,\"ts\":1,\"args\":{\"a\":\"" : mid;
    const char *post = pad ? "\"}},\n" : "";
    size_t size = sizeof fmt + strlen(launch) + strlen(pre) + strlen(post) + (1u << 20);
    char *x = malloc(1u << 20), *json = malloc(size);
    memset(x, 'x', 1u << 20);
    int fill = 0;
    snprintf(json, size, fmt, launch, pre, fill, x, post);
    if (pad) fill = (1 << 20) - 20 - (int)(strstr(json, "\"k1\"") - json); /* the kernel's name 20 bytes before */
    snprintf(json, size, fmt, launch, pre, fill, x, post);
    scopeprof_agg_free(&c->agg);
    scopeprof_agg_init(&c->agg);
    sp_callbacks cb = {c, NULL, on_events, NULL};
    char path[] = "/tmp/sp_chrome_XXXXXX";
    int fd = pad ? mkstemp(path) : -1;
    if (fd >= 0 && write(fd, json, strlen(json)) == (ssize_t)strlen(json)) sp_read_chrome_file(path, &cb, res);
    else if (!pad) sp_read_chrome_mem(json, strlen(json), &cb, res);
    if (fd >= 0) close(fd), unlink(path);
    free(x);
    free(json);
    const scopeprof_row *in = row(c, "inner");
    return in ? in->gpu_self_ns : -1;
}

int main(void) {
    ctx c;
    sp_result res;
    scopeprof_agg_init(&c.agg);

    /* PyTorch's GPU rule: an op's self GPU is its own kernels (matched by
     * External id), its GPU total adds its children's; kernels come after
     * the ops in the file, as Kineto writes them; the runtime call is a CPU
     * row nested in the op. */
    const char *gpu =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":50,\"args\":{\"External id\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":110,\"dur\":20,\"args\":{\"External id\":2,\"Input Dims\":[[2,3],[]]}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":112,\"dur\":5,\"args\":{\"External id\":2,\"correlation\":9}},\n"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":9,\"pid\":1,\"tid\":1,\"ts\":112},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":120,\"dur\":30.5,\"args\":{\"External id\":2,\"correlation\":9}},\n"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":9,\"pid\":0,\"tid\":7,\"ts\":120,\"bp\":\"e\"},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":160,\"dur\":4,\"args\":{\"External id\":1}}\n"
        "]}";
    CHECK(run(&c, gpu, &res) == SP_OK);
    const scopeprof_row *o = row(&c, "outer"), *in = row(&c, "inner"), *k1 = row(&c, "k1"), *rt = row(&c, "cudaLaunchKernel");
    CHECK(o && in && k1 && rt);
    if (o && in && k1 && rt) {
        CHECK(in->gpu_self_ns == 30500 && in->gpu_total_ns == 30500);
        CHECK(o->gpu_self_ns == 4000 && o->gpu_total_ns == 34500);
        CHECK(k1->gpu_self_ns == 30500 && k1->total_ns == 0 && k1->count == 1);
        CHECK(rt->gpu_total_ns == 0 && rt->self_ns == 5000);
        CHECK(in->self_ns == 15000 && o->self_ns == 30000 && o->total_ns == 50000);
    }

    /* B/E per thread (E names nothing), string pid/tid, an out-of-order
     * thread sorted at the end, fractional microseconds, [memory]. */
    const char *be =
        "[{\"ph\":\"B\",\"name\":\"a\",\"pid\":\"p\",\"tid\":\"main\",\"ts\":1.5},"
        "{\"ph\":\"B\",\"name\":\"b\",\"pid\":\"p\",\"tid\":\"main\",\"ts\":2},"
        "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":\"p\",\"tid\":\"main\",\"ts\":2.5,\"args\":{\"Bytes\":100,\"Device Type\":0}},"
        "{\"ph\":\"E\",\"pid\":\"p\",\"tid\":\"main\",\"ts\":3},"
        "{\"ph\":\"E\",\"pid\":\"p\",\"tid\":\"main\",\"ts\":10.25},"
        "{\"ph\":\"X\",\"name\":\"late\",\"pid\":2,\"tid\":2,\"ts\":50,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"early\",\"pid\":2,\"tid\":2,\"ts\":20,\"dur\":40},"
        "{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":2,\"ts\":1,\"args\":{\"v\":1}},"
        "{\"ph\":\"Q\",\"name\":\"weird\",\"pid\":2,\"tid\":2,\"ts\":1,\"zz\":[1,{\"a\":null}]},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":2,\"args\":{\"name\":\"worker\"}}]";
    CHECK(run(&c, be, &res) == SP_OK);
    const scopeprof_row *a = row(&c, "a"), *b = row(&c, "b"), *late = row(&c, "late"), *early = row(&c, "early");
    CHECK(a && b && late && early);
    if (a && b && late && early) {
        CHECK(a->total_ns == 8750 && a->self_ns == 7750 && b->total_ns == 1000);
        CHECK(b->cpu_mem == 100 && b->self_cpu_mem == 100 && a->cpu_mem == 100 && a->self_cpu_mem == 0);
        CHECK(early->self_ns == 39000 && late->self_ns == 1000); /* nested after sorting */
    }
    CHECK(row(&c, "ctr") == NULL && row(&c, "weird") == NULL);

    /* Kineto's layout: each thread's ops first, then its runtime calls, then
     * its [memory] records, so a thread goes back in time after its ops have
     * closed. Pass 1 sees it and pass 2 sorts the thread from its first
     * event: the launches are the ops' children (PyTorch's self time) and the
     * records count to the ops around them. */
    const char *kineto =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"External id\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":80,\"args\":{\"External id\":2}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":100,\"args\":{\"External id\":3}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":30,\"args\":{\"External id\":2,\"correlation\":7}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":210,\"dur\":20,\"args\":{\"External id\":3,\"correlation\":8}},\n"
        "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":55,\"args\":{\"Bytes\":64,\"Device Type\":0}},\n"
        "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":250,\"args\":{\"Bytes\":-64,\"Device Type\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_mm\",\"pid\":0,\"tid\":7,\"ts\":60,\"dur\":40,\"args\":{\"External id\":2,\"correlation\":7}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_add\",\"pid\":0,\"tid\":7,\"ts\":240,\"dur\":10,\"args\":{\"External id\":3,\"correlation\":8}}\n"
        "]}";
    CHECK(run(&c, kineto, &res) == SP_OK && res.notes == 0);
    const scopeprof_row *lin = row(&c, "aten::linear"), *mm = row(&c, "aten::mm"), *add = row(&c, "aten::add"),
                        *lk = row(&c, "cudaLaunchKernel");
    CHECK(lin && mm && add && lk);
    if (lin && mm && add && lk) {
        CHECK(lin->self_ns == 20000 && mm->self_ns == 50000 && add->self_ns == 80000);
        CHECK(lk->count == 2 && lk->self_ns == 50000 && lk->total_ns == 50000);
        CHECK(mm->cpu_mem == 64 && mm->self_cpu_mem == 64 && lin->cpu_mem == 64 && lin->self_cpu_mem == 0);
        CHECK(add->cpu_mem == -64 && add->self_cpu_mem == -64);
        CHECK(mm->gpu_self_ns == 40000 && lin->gpu_total_ns == 40000 && add->gpu_self_ns == 10000);
    }
    /* Read once (a pipe), the thread can only be sorted from its first late
     * event: the ops delivered before keep their times, and the caller is
     * told (SP_NOTE_LATE, a warning line); its kernels are rows credited to
     * no op, which it is told too (SP_NOTE_PIPE_GPU). */
    {
        int fd = pipe_of(kineto);
        scopeprof_agg_free(&c.agg);
        scopeprof_agg_init(&c.agg);
        sp_callbacks cb = {&c, NULL, on_events, NULL};
        CHECK(fd >= 0 && sp_read_chrome_fd(fd, NULL, 0, &cb, &res) == SP_OK && (res.notes & SP_NOTE_LATE) &&
              (res.notes & SP_NOTE_PIPE_GPU));
        if (fd >= 0) close(fd);
        mm = row(&c, "aten::mm");
        CHECK(mm && mm->self_ns == 80000);
    }

    /* Device events go to the op around the runtime call with their
     * correlation. PyTorch ~1.12-2.1 wrote a kernel's and a launch's
     * correlation as their "External id", apart from the ops' numbering:
     * k_mm's 9 is also aten::relu's id, which must not get it. The op with
     * the device event's External id wins when it is around the launch
     * (record_param_comms, not the annotation inside it, as PyTorch links
     * them); a device event without a launch goes by External id unless it
     * is its own correlation; PyTorch 1.8/1.9 spell it "external id". */
    const char *corr =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"External id\":7}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":80,\"args\":{\"External id\":8}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":100,\"args\":{\"External id\":9}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,\"tid\":1,\"ts\":400,\"dur\":100,\"args\":{\"External id\":20}},\n"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"nccl:all_reduce\",\"pid\":1,\"tid\":1,\"ts\":410,\"dur\":50,\"args\":{\"External id\":21}},\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"old_op\",\"pid\":1,\"tid\":1,\"ts\":600,\"dur\":10,\"args\":{\"external id\":30}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":10,\"args\":{\"External id\":9,\"correlation\":9}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":210,\"dur\":10,\"args\":{\"External id\":50,\"correlation\":50}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernelExC\",\"pid\":1,\"tid\":1,\"ts\":420,\"dur\":10,\"args\":{\"External id\":20,\"correlation\":60}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_mm\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":30,\"args\":{\"External id\":9,\"correlation\":9}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_relu\",\"pid\":0,\"tid\":7,\"ts\":230,\"dur\":5,\"args\":{\"External id\":50,\"correlation\":50}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"nccl_k\",\"pid\":0,\"tid\":8,\"ts\":430,\"dur\":20,\"args\":{\"External id\":20,\"correlation\":60}},\n"
        "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"old_k\",\"pid\":0,\"tid\":7,\"ts\":605,\"dur\":3,\"args\":{\"external id\":30,\"correlation\":70}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"lost_k\",\"pid\":0,\"tid\":7,\"ts\":700,\"dur\":2,\"args\":{\"External id\":7,\"correlation\":7}}\n"
        "]}";
    CHECK(run(&c, corr, &res) == SP_OK);
    const scopeprof_row *rl = row(&c, "aten::relu"), *rpc = row(&c, "record_param_comms"),
                        *ann = row(&c, "nccl:all_reduce"), *old = row(&c, "old_op");
    lin = row(&c, "aten::linear"), mm = row(&c, "aten::mm");
    CHECK(lin && mm && rl && rpc && ann && old);
    if (lin && mm && rl && rpc && ann && old) {
        CHECK(mm->gpu_self_ns == 30000 && lin->gpu_self_ns == 0 && lin->gpu_total_ns == 30000);
        CHECK(rl->gpu_self_ns == 5000 && rl->gpu_total_ns == 5000);
        CHECK(rpc->gpu_self_ns == 20000 && ann->gpu_total_ns == 0);
        CHECK(old->gpu_self_ns == 3000);
    }

    /* CUPTI numbers correlations per process: in a merged trace of two
     * processes (pids 100 and 200, devices 0 and 1) that both launch with
     * correlation 1, which launch enqueued which kernel cannot be told.
     * Their device time goes to no op (not 70 us to opP1) and no arrow joins
     * them; the External id fallback does not pool them either (id 1 is
     * both processes' op). Correlation 2, launched by pid 100 only, still
     * credits its op. */
    {
        const char *mp =
            "{\"traceEvents\":[\n"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"opP1\",\"pid\":100,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"External id\":1}},\n"
            "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":100,\"tid\":1,\"ts\":10,\"dur\":5,\"args\":{\"External id\":1,\"correlation\":1}},\n"
            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kP1\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":40,\"args\":{\"External id\":1,\"correlation\":1}},\n"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"opQ1\",\"pid\":100,\"tid\":1,\"ts\":200,\"dur\":100,\"args\":{\"External id\":5}},\n"
            "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":100,\"tid\":1,\"ts\":210,\"dur\":5,\"args\":{\"External id\":5,\"correlation\":2}},\n"
            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kQ1\",\"pid\":0,\"tid\":7,\"ts\":220,\"dur\":7,\"args\":{\"External id\":5,\"correlation\":2}},\n"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"opP2\",\"pid\":200,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"External id\":1}},\n"
            "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":200,\"tid\":1,\"ts\":10,\"dur\":5,\"args\":{\"External id\":1,\"correlation\":1}},\n"
            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kP2\",\"pid\":1,\"tid\":7,\"ts\":20,\"dur\":30,\"args\":{\"External id\":1,\"correlation\":1}}\n"
            "]}";
        sp_callbacks fcb = {&c, NULL, on_flows, NULL};
        scopeprof_agg_free(&c.agg);
        scopeprof_agg_init(&c.agg);
        nflows = 0;
        CHECK(sp_read_chrome_mem(mp, strlen(mp), &fcb, &res) == SP_OK);
        const scopeprof_row *p1 = row(&c, "opP1"), *p2 = row(&c, "opP2"), *q1 = row(&c, "opQ1");
        CHECK(p1 && p2 && q1);
        if (p1 && p2 && q1) CHECK(p1->gpu_total_ns == 0 && p2->gpu_total_ns == 0 && q1->gpu_self_ns == 7000);
        CHECK(nflows == 2 && nambiguous == 1); /* correlation 2's launch and kernel */
        /* Device events without correlation go by External id, but not to
         * an id that ops of two processes carry (opP1 got 70 us). */
        char *mp2 = strdup(mp), *at = mp2;
        while ((at = strstr(at, ",\"correlation\":1}")) != NULL) memmove(at, at + 16, strlen(at + 16) + 1);
        scopeprof_agg_free(&c.agg);
        scopeprof_agg_init(&c.agg);
        CHECK(sp_read_chrome_mem(mp2, strlen(mp2), &fcb, &res) == SP_OK);
        p1 = row(&c, "opP1"), p2 = row(&c, "opP2"), q1 = row(&c, "opQ1");
        CHECK(p1 && p2 && q1);
        if (p1 && p2 && q1) CHECK(p1->gpu_total_ns == 0 && p2->gpu_total_ns == 0 && q1->gpu_self_ns == 7000);
        /* One process's External id still links them. */
        at = strstr(mp2, "\"name\":\"opP2\"");
        if (at && (at = strstr(at, "\"External id\":1"))) at[14] = '9';
        scopeprof_agg_free(&c.agg);
        scopeprof_agg_init(&c.agg);
        CHECK(sp_read_chrome_mem(mp2, strlen(mp2), &fcb, &res) == SP_OK);
        p1 = row(&c, "opP1"), p2 = row(&c, "opP2");
        CHECK(p1 && p2);
        if (p1 && p2) CHECK(p1->gpu_self_ns == 70000 && p2->gpu_total_ns == 0);
        free(mp2);
    }

    /* The other categories PyTorch gives a device (deviceTypeFromActivity):
     * cuda_sync (on a stream, or Kineto's tid -1 "Device" lane),
     * cuda_profiler_range, mtia_ccp_events are device rows (no CPU time, Self
     * GPU their duration), not ops of a CPU thread; a sync goes to the op
     * around its runtime call as a kernel would. */
    const char *sync =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::item\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"External id\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaStreamSynchronize\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":80,\"args\":{\"External id\":1,\"correlation\":5}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Sync\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":60,\"args\":{\"External id\":1,\"correlation\":5}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Event Sync\",\"pid\":0,\"tid\":-1,\"ts\":200,\"dur\":6,\"args\":{\"correlation\":6}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_profiler_range\",\"name\":\"profiled\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":40},\n"
        "{\"ph\":\"X\",\"cat\":\"mtia_ccp_events\",\"name\":\"dma_request\",\"pid\":9,\"tid\":801,\"ts\":400,\"dur\":8}\n"
        "]}";
    CHECK(run(&c, sync, &res) == SP_OK);
    const scopeprof_row *item = row(&c, "aten::item"), *ss = row(&c, "Stream Sync"), *es = row(&c, "Event Sync"),
                        *pr = row(&c, "profiled"), *dma = row(&c, "dma_request");
    CHECK(item && ss && es && pr && dma);
    if (item && ss && es && pr && dma) {
        CHECK(ss->total_ns == 0 && ss->self_ns == 0 && ss->gpu_self_ns == 60000 && item->gpu_self_ns == 60000);
        CHECK(es->total_ns == 0 && es->gpu_self_ns == 6000 && pr->total_ns == 0 && pr->gpu_self_ns == 40000);
        CHECK(dma->total_ns == 0 && dma->gpu_self_ns == 8000);
        CHECK(item->self_ns == 20000 && scopeprof_agg_self_total(&c.agg) == 100000);
    }

    /* PyTorch 1.8/1.9 wrote the ops' tid as a string and their [memory]
     * records' as a number: one thread. A string that is not an integer as
     * JSON writes one ("007", "main") stays a name of its own. */
    const char *tids =
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"aten::empty\",\"pid\":25738,\"tid\":\"25738\",\"ts\":0,\"dur\":10},\n"
        "{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"aten::zeros\",\"pid\":\"7\",\"tid\":\"007\",\"ts\":0,\"dur\":10},\n"
        "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":25738,\"tid\":25738,\"ts\":5,\"args\":{\"Device Type\":0,\"Bytes\":4}},\n"
        "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":7,\"tid\":7,\"ts\":5,\"args\":{\"Device Type\":0,\"Bytes\":8}}\n"
        "]}";
    CHECK(run(&c, tids, &res) == SP_OK);
    const scopeprof_row *emp = row(&c, "aten::empty"), *zer = row(&c, "aten::zeros"), *memrow = row(&c, "[memory]");
    CHECK(emp && zer && memrow);
    if (emp && zer && memrow)
        CHECK(emp->cpu_mem == 4 && emp->self_cpu_mem == 4 && zer->cpu_mem == 0 && memrow->cpu_mem == 8);

    /* Kineto's "distributedInfo" rank is the header's (--per-rank, --group-by
     * rank), before "traceEvents" as Kineto writes it, also from a pipe (the
     * header callback waits for the event list), or after it in a file. */
    {
        const char *before = "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":8,"
                             "\"pg_config\":[{\"ranks\":[0]}]},\"traceEvents\":[]}";
        const char *after = "{\"traceEvents\":[],\"distributedInfo\":{\"rank\":5}}";
        sp_callbacks hcb = {&c, on_header, on_events, NULL};
        header_rank = 0;
        CHECK(sp_read_chrome_mem(before, strlen(before), &hcb, &res) == SP_OK && header_rank == 3);
        header_rank = 0;
        CHECK(sp_read_chrome_mem(after, strlen(after), &hcb, &res) == SP_OK && header_rank == 5);
        int fd = pipe_of(before);
        header_rank = 0;
        CHECK(fd >= 0 && sp_read_chrome_fd(fd, NULL, 0, &hcb, &res) == SP_OK && header_rank == 3);
        if (fd >= 0) close(fd);
        header_rank = 0;
        CHECK(run(&c, "{\"traceEvents\":[]}", &res) == SP_OK &&
              sp_read_chrome_mem("[]", 2, &hcb, &res) == SP_OK && header_rank == 0xFFFFFFFFu);
    }

    /* A raw newline inside a string (PyTorch 2.0.1's python_function names)
     * is taken as it is, as Python's json.loads(strict=False), and noted. */
    const char *rawnl = "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"fn\n\t(x)\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]";
    CHECK(run(&c, rawnl, &res) == SP_OK && (res.notes & SP_NOTE_CTRL) && row(&c, "fn\n\t(x)"));
    CHECK(run(&c, "[{\"ph\":\"X\",\"name\":\"fn\\n\",\"ts\":1}]", &res) == SP_OK && res.notes == 0);
    /* A raw NUL is U+FFFD, as \u0000 is: "a<NUL>b" and "a<NUL>c" stay two
     * rows, and two pids "1<NUL>x", "1<NUL>y" two threads. */
    {
        static const char nul[] =
            "[{\"ph\":\"X\",\"name\":\"a\0b\",\"pid\":\"1\0x\",\"tid\":1,\"ts\":1,\"dur\":2},"
            "{\"ph\":\"X\",\"name\":\"a\0c\",\"pid\":\"1\0y\",\"tid\":1,\"ts\":1,\"dur\":2},"
            "{\"ph\":\"X\",\"name\":\"a\\u0000b\",\"pid\":\"1\0x\",\"tid\":1,\"ts\":5,\"dur\":2}]";
        scopeprof_agg_free(&c.agg);
        scopeprof_agg_init(&c.agg);
        sp_callbacks ncb = {&c, NULL, on_events, NULL};
        CHECK(sp_read_chrome_mem(nul, sizeof nul - 1, &ncb, &res) == SP_OK && (res.notes & SP_NOTE_CTRL));
        const scopeprof_row *ab = row(&c, "a\xEF\xBF\xBD" "b"), *ac = row(&c, "a\xEF\xBF\xBD" "c");
        CHECK(ab && ac && row(&c, "a") == NULL && c.agg.nrows == 2);
        if (ab && ac) CHECK(ab->count == 2 && ac->count == 1 && ab->total_ns == 4000);
        CHECK(c.agg.nthreads == 2);
    }

    /* Pass 1 skims events for its few fields, and leaves to the full parser
     * what it cannot skim where it lies: escapes in a key or a kept string,
     * nesting past its 64 levels, an event across the read buffer's end. The
     * launch still credits its kernel to the op around it. An error stops
     * pass 1 where pass 2 stops, so a kernel past it credits nobody. */
    {
        const char *plain = "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch\",\"pid\":1,\"tid\":1,"
                            "\"ts\":112,\"dur\":5,\"args\":{\"correlation\":9}}";
        static const char *const same[] = {
            "{\"ph\":\"X\",\"c\\u0061t\":\"cuda_runtime\",\"name\":\"l\",\"pid\":1,\"tid\":1,\"ts\":112,\"dur\":5,"
            "\"args\":{\"correlation\":9}}",
            "{\"ph\":\"X\",\"cat\":\"cuda_\\u0072untime\",\"name\":\"l\",\"pid\":1,\"tid\":1,\"ts\":112,\"dur\":5,"
            "\"args\":{\"correlation\":9}}",
            "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"l\",\"pid\":\"\\u0031\",\"tid\":1,\"ts\":112,\"dur\":5,"
            "\"args\":{\"correlation\":9}}",
            "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"l\",\"pid\":1,\"tid\":1,\"ts\":112,\"dur\":5,"
            "\"args\":{\"d\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],\"correlation\":9}}",
        };
        CHECK(inner_gpu(&c, plain, "", 0, &res) == 30500 && res.status == SP_OK);
        CHECK(inner_gpu(&c, plain, "", 1, &res) == 30500 && res.status == SP_OK);
        for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
            int64_t g = inner_gpu(&c, same[i], "", 0, &res);
            if (g != 30500 || res.status != SP_OK) fprintf(stderr, "skim case %zu: gpu %lld status %d\n", i, (long long)g, res.status);
            CHECK(g == 30500 && res.status == SP_OK);
        }
        static const char *const stop[] = {
            "{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"a\":\"\\q\"}},\n",
            "{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"a\":01}},\n",
            "{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"a\":[1,]}},\n",
        };
        for (size_t i = 0; i < sizeof stop / sizeof *stop; i++)
            CHECK(inner_gpu(&c, plain, stop[i], 0, &res) == 0 && res.status == SP_CORRUPT);
        char *big = malloc(SP_CJ_MAX_STRING + 128); /* a skipped string past the limit */
        int k = sprintf(big, "{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"a\":\"");
        memset(big + k, 'x', SP_CJ_MAX_STRING + 1);
        strcpy(big + k + SP_CJ_MAX_STRING + 1, "\"}},\n");
        CHECK(inner_gpu(&c, plain, big, 0, &res) == 0 && res.status == SP_CORRUPT && strstr(res.msg, "longer"));
        free(big);
        /* pid "x\/y" is pid "x/y": one thread, which goes back in time */
        const char *pids = "[{\"ph\":\"X\",\"name\":\"a1\",\"pid\":\"x/y\",\"tid\":1,\"ts\":100,\"dur\":10},"
                           "{\"ph\":\"X\",\"name\":\"a2\",\"pid\":\"x/y\",\"tid\":1,\"ts\":120,\"dur\":10},"
                           "{\"ph\":\"X\",\"name\":\"b\",\"pid\":\"x\\/y\",\"tid\":1,\"ts\":0,\"dur\":200}]";
        const scopeprof_row *pb = run(&c, pids, &res) == SP_OK ? row(&c, "b") : NULL;
        CHECK(pb && pb->self_ns == 180000 && !(res.notes & SP_NOTE_LATE) && c.agg.nthreads == 1);
    }

    /* Malformed input: status, offset and message. */
    static const struct { const char *json; int status; long off; const char *msg; } bad[] = {
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1 \"dur\":2}]", SP_CORRUPT, 29, "expected ',' or '}'"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"du", SP_TRUNCATED, 32, "cut short"},
        {"{\"traceEvents\":[{\"ph\":\"X\",\"name\":5}]}", SP_CORRUPT, 33, "\"name\" must be a string"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"1\"}]", SP_CORRUPT, 27, "\"ts\" must be a number"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1e999}]", SP_CORRUPT, 27, "\"ts\" out of range"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":123456789012345678901234567890}]", SP_CORRUPT, 35, "\"dur\" out of range"},
        {"[{\"ts\":1234567890123456789012345678901234567890123456789}]", SP_CORRUPT, 0, "number longer"},
        {"[{\"ph\":\"X\",\"name\":\"a\\q\",\"ts\":1}]", SP_CORRUPT, 0, "invalid escape"},
        {"[{\"ph\":\"X\",\"name\":\"\\ud800x\",\"ts\":1}]", SP_CORRUPT, 0, "surrogate"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":-1}]", SP_CORRUPT, 0, "out of range"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":01}]", SP_CORRUPT, 0, "leading zero"},
        {"", SP_CORRUPT, 0, "empty input"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1}] x", SP_CORRUPT, 31, "after the JSON value"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1},", SP_TRUNCATED, 0, "no ']'"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1}", SP_TRUNCATED, 0, "no ']'"},
        {"[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1},7]", SP_CORRUPT, 30, "expected an event object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int st = run(&c, bad[i].json, &res);
        int ok = st == bad[i].status && strstr(res.msg, bad[i].msg) &&
                 (bad[i].off == 0 || res.offset == (uint64_t)bad[i].off);
        if (!ok) fprintf(stderr, "case %zu: status %d offset %llu msg '%s'\n", i, st, (unsigned long long)res.offset, res.msg);
        CHECK(ok);
    }
    /* Deep nesting: an error, not a stack overflow; a long string: bounded. */
    size_t n = 200000;
    char *deep = malloc(n + 64);
    strcpy(deep, "[{\"ph\":\"X\",\"zz\":");
    size_t l = strlen(deep);
    memset(deep + l, '[', n);
    deep[l + n] = 0;
    CHECK(run(&c, deep, &res) == SP_CORRUPT && strstr(res.msg, "nested deeper"));
    memcpy(deep, "[{\"name\":\"", 10);
    memset(deep + 10, 'x', n);
    strcpy(deep + 10 + n, "\",\"ph\":\"X\",\"ts\":1}]");
    CHECK(run(&c, deep, &res) == SP_OK && row(&c, "") == NULL && c.agg.nrows == 1);
    /* Past SP_CJ_MAX_STRING on every path: plain bytes, raw control
     * characters, one-byte escapes, \u escapes (bytes as decoded). */
    {
        static const char *const unit[] = {"x", "\t", "\\t", "\\u00e9"};
        static const size_t per[] = {1, 1, 1, 2};
        for (size_t u = 0; u < 4; u++) {
            size_t k = SP_CJ_MAX_STRING / per[u] + 1, ul = strlen(unit[u]);
            char *big = malloc(k * ul + 64);
            strcpy(big, "[{\"name\":\"");
            size_t o = strlen(big);
            for (size_t j = 0; j < k; j++, o += ul) memcpy(big + o, unit[u], ul);
            strcpy(big + o, "\",\"ph\":\"X\",\"ts\":1}]");
            int st = run(&c, big, &res);
            if (st != SP_CORRUPT || !strstr(res.msg, "string longer than 1048576 bytes"))
                fprintf(stderr, "long string %zu: status %d msg '%s'\n", u, st, res.msg);
            CHECK(st == SP_CORRUPT && strstr(res.msg, "string longer than 1048576 bytes") && res.offset == 9);
            strcpy(big + o - ul, "\",\"ph\":\"X\",\"ts\":1}]"); /* one less: at the limit */
            CHECK(run(&c, big, &res) == SP_OK);
            free(big);
        }
    }
    free(deep);

    /* Content detection. */
    CHECK(sp_is_chrome(" \n[", 3) == 1 && sp_is_chrome("{", 1) == 1);
    CHECK(sp_is_chrome("SCOPEPRF", 8) == 0 && sp_is_chrome("   ", 3) == 0);

    scopeprof_agg_free(&c.agg);
    printf("test_chrome: %s\n", failures ? "FAILED" : "all checks passed");
    return failures != 0;
}
