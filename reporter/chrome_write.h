/* chrome_write.h -- the Chrome trace writer: trace files as Chrome Trace
 * Event Format JSON, for Perfetto UI and chrome://tracing (`scopeprof trace`;
 * docs/REPORTER.md has the mapping). */
#ifndef SP_CHROME_WRITE_H
#define SP_CHROME_WRITE_H

#include <stdint.h>
#include <stdio.h>

#include "read.h"

typedef struct sp_trace sp_trace;
sp_trace *sp_trace_open(FILE *out);
/* Read one trace file and append its events; returns sp_read_file's status
 * and fills *res. Files added in turn share one timeline, one pid each. */
int sp_trace_add_file(sp_trace *t, const char *path, sp_result *res);
int sp_trace_add_mem(sp_trace *t, const void *data, size_t n, sp_result *res);
/* The reader callbacks that append a file to the trace, for callers that
 * read files themselves (input.h's sp_read_any). */
sp_callbacks sp_trace_callbacks(sp_trace *t);
/* Keep only scopes that lie inside [lo, hi] (ns), memory records and steps
 * too, in the files added from now on (--steps); 0, UINT64_MAX: everything. */
void sp_trace_set_window(sp_trace *t, uint64_t lo, uint64_t hi);
/* Keep only what keep() accepts (scopes, GPU intervals, memory records;
 * slot: the thread slot in the file), in the files added from now on
 * (`trace` filters, filter.h); NULL: everything. */
#define SP_STEPS_SLOT UINT32_MAX /* the slot keep() sees for ProfilerStep#N ranges */
typedef int (*sp_keep_fn)(void *ctx, const sp_reader *r, uint32_t slot, const sp_event *e);
void sp_trace_set_filter(sp_trace *t, sp_keep_fn keep, void *ctx);
/* Bytes of JSON written so far (before any gzip): for the size warning. */
uint64_t sp_trace_bytes(void *t);
/* Finish the JSON and free; returns -1 if writing failed. */
int sp_trace_close(sp_trace *t);

#endif
