/* buf.h -- the growable output buffer (sp_out): to a FILE, flushed as it
 * fills, or into memory that grows; and what is written through it: text,
 * integers, nanoseconds as microseconds, JSON strings. The writers that
 * format straight into its memory (the trace writer's per-slice path) take
 * room with sp_out_reserve and write digits with digits.h. */
#ifndef SP_BUF_H
#define SP_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a
 * comma, a quote or a line break. */
void sp_csv_field(FILE *out, const char *s);
/* Length of the valid UTF-8 sequence at s (2 to 4), or 0 for an ASCII or
 * invalid byte; shared with the HTML and SVG writers (html.c, flame.c). */
int sp_utf8_len(const unsigned char *s);
/* Write out what is buffered (file mode); returns -1 if any write failed. */
int sp_out_flush(sp_out *o);
void sp_out_free(sp_out *o);

/* ---- Writing straight into the buffer */
/* Room for n more bytes at the end of the buffer (written by the caller, who
 * then adds what it wrote to o->n), or NULL when memory ran out. The common
 * case inline: room in the buffer, under the flush mark; the rest (flush,
 * grow) in sp_out_reserve_slow. */
enum { SP_OUT_FLUSH_AT = 1 << 16 }; /* file mode: bytes buffered before a write */
char *sp_out_reserve_slow(sp_out *o, size_t n);
static inline char *sp_out_reserve(sp_out *o, size_t n) {
    if (o->cap - o->n < n || (o->f && o->n + n > SP_OUT_FLUSH_AT)) return sp_out_reserve_slow(o, n);
    return o->buf + o->n;
}

#endif
