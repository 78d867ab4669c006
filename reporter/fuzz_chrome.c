/* fuzz_chrome.c -- libFuzzer target: any bytes through the Chrome trace reader
 * into the header's aggregation and table printer (name and shape grouping).
 * Built and run shortly by `make test` (tests/chrome/rules.mk). Finds crashes,
 * leaks, undefined behaviour, hangs and big allocations. */
#define SCOPEPROF_AGGREGATION
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "chrome.h"
#include "scopeprof.h"

typedef struct fctx {
    scopeprof_agg agg;
    int shape;
} fctx;

static int on_events(void *p, const sp_reader *r, const sp_thread *t, const sp_event *ev, uint32_t n) {
    fctx *c = p;
    char key[512];
    for (uint32_t i = 0; i < n; i++) {
        if (ev[i].kind == SP_MEM) {
            scopeprof_agg_mem(&c->agg, t->slot, ev[i].depth, ev[i].device, ev[i].bytes);
            continue;
        }
        const sp_site *s = sp_chrome_site(r, ev[i].site);
        const char *name = s ? s->name : "?", *shape = sp_chrome_shape(r, ev[i].site);
        snprintf(key, sizeof key, "%s\x1f%s", name, c->shape && shape ? shape : "");
        uint32_t row = scopeprof_agg_row(&c->agg, key, name, c->shape ? shape : NULL);
        if (row == UINT32_MAX) return -1;
        scopeprof_agg_event_gpu(&c->agg, t->slot, row, ev[i].start, ev[i].end, ev[i].depth, ev[i].gpu_ns);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static FILE *null;
    if (!null) null = fopen("/dev/null", "w");
    if (!null) return 0;
    for (int g = 0; g < 2; g++) {
        fctx c;
        memset(&c, 0, sizeof c);
        scopeprof_agg_init(&c.agg);
        c.shape = g;
        sp_callbacks cb = {&c, NULL, on_events, NULL};
        sp_result res;
        sp_read_chrome_mem(data, size, &cb, &res);
        char msg[512];
        sp_result_message(&res, "fuzz", msg, sizeof msg);
        scopeprof_agg_flush(&c.agg);
        scopeprof_table_print(null, &c.agg, SCOPEPROF_SORT_SELF_GPU_TIME_TOTAL, 0);
        scopeprof_agg_free(&c.agg);
    }
    return 0;
}
