/* fuzz_read.c -- libFuzzer target: any bytes through the reader, every
 * grouping of the aggregation (with the header's table printer) and the
 * trace writer. Built and run by `make fuzz` (long) and `make test` (short).
 * Finds crashes, leaks, undefined behaviour, hangs and big allocations
 * (-rss_limit_mb / -malloc_limit_mb). */
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static FILE *null;
    if (!null) null = fopen("/dev/null", "w");
    if (!null) return 0;
    static const char *const groups[] = {"name", "site", "stack:2", "folded"};
    for (int g = 0; g < 4; g++) sp_report_mem(data, size, groups[g], null);
    sp_trace *t = sp_trace_open(null);
    if (t) {
        sp_result res;
        sp_trace_add_mem(t, data, size, &res);
        sp_trace_add_mem(t, data, size, &res); /* a second "file": merging */
        sp_trace_close(t);
    }
    return 0;
}
