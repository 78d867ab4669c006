/* fuzz_read.c -- libFuzzer target: any bytes through the reader, every
 * grouping of the aggregation (with the header's table printer), the
 * flame graph of the folded stacks, and the trace writer with and without
 * filters. Built and run by `make fuzz` (long) and `make test` (short).
 * Finds crashes, leaks, undefined behaviour, hangs and big allocations
 * (-rss_limit_mb / -malloc_limit_mb). */
#define _GNU_SOURCE /* open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "chrome_write.h"
#include "cli.h"
#include "filter.h"
#include "flame.h"

/* The folded stacks ("stack VALUE" lines) as a flame graph. */
static void flame(const uint8_t *data, size_t size, FILE *null) {
    char *text = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&text, &n);
    if (!m) return;
    sp_report_mem(data, size, "folded", m);
    fclose(m);
    sp_flame *f = sp_flame_new("all");
    for (char *line = text, *nl; f && line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *sp = strrchr(line, ' ');
        if (!sp) continue;
        *sp = 0;
        sp_flame_add(f, line, strtoll(sp + 1, NULL, 10));
    }
    if (f) {
        sp_out o;
        sp_out_init(&o, null);
        sp_flame_svg(f, &o, 1200, 1, "fuzz");
        sp_out_flush(&o);
        sp_out_free(&o);
    }
    sp_flame_free(f);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static FILE *null;
    if (!null) null = fopen("/dev/null", "w");
    if (!null) return 0;
    static const char *const groups[] = {"name", "site", "stack:2", "folded"};
    for (int g = 0; g < 4; g++) sp_report_mem(data, size, groups[g], null);
    flame(data, size, null);
    sp_trace *t = sp_trace_open(null);
    if (t) {
        sp_result res;
        sp_filter flt = {.name = "*a*", .thread = "1", .has_window = 1, .from_ns = 100, .to_ns = 1u << 30,
                         .min_dur = 2};
        sp_trace_add_mem(t, data, size, &res);
        sp_trace_set_filter(t, sp_filter_keep, &flt);
        sp_trace_add_mem(t, data, size, &res); /* a second "file": merging, filtered */
        sp_trace_close(t);
    }
    return 0;
}
