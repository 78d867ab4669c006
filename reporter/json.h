/* json.h -- buffered output, JSON strings, and the Chrome trace writer. */
#ifndef SP_JSON_H
#define SP_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "read.h"

/* Output through a buffer: to `f`, or (f == NULL) into memory that grows. */
typedef struct sp_out {
    FILE *f;
    char *buf;
    size_t n, cap;
    int err; /* a write failed or memory ran out */
} sp_out;

void sp_out_init(sp_out *o, FILE *f);
void sp_out_write(sp_out *o, const void *p, size_t n);
void sp_out_str(sp_out *o, const char *s);
void sp_out_u64(sp_out *o, uint64_t v);
void sp_out_i64(sp_out *o, int64_t v);
/* Nanoseconds as microseconds with three decimals: 1234567 -> "1234.567". */
void sp_out_us(sp_out *o, uint64_t ns);
/* A JSON string: quotes, backslash and control characters escaped (control
 * characters as \u00XX), bytes that are not valid UTF-8 replaced by U+FFFD. */
void sp_out_json_str(sp_out *o, const char *s);
/* Length of the valid UTF-8 sequence at s (2 to 4), or 0 for an ASCII or
 * invalid byte; shared with the HTML and SVG writers (html.c, flame.c). */
int sp_utf8_len(const unsigned char *s);
/* Write out what is buffered (file mode); returns -1 if any write failed. */
int sp_out_flush(sp_out *o);
void sp_out_free(sp_out *o);

/* Chrome Trace Event Format writer (docs/REPORTER.md has the mapping). */
typedef struct sp_trace sp_trace;
sp_trace *sp_trace_open(FILE *out);
/* Read one trace file and append its events; returns sp_read_file's status
 * and fills *res. Files added in turn share one timeline, one pid each. */
int sp_trace_add_file(sp_trace *t, const char *path, sp_result *res);
int sp_trace_add_mem(sp_trace *t, const void *data, size_t n, sp_result *res);
/* The reader callbacks that append a file to the trace, for callers that
 * read files themselves (cli.c's single reading entry). */
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
/* Finish the JSON and free; returns -1 if writing failed. */
int sp_trace_close(sp_trace *t);

#endif
