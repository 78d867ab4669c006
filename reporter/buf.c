/* buf.c -- see buf.h. */
#include "buf.h"

#include <stdlib.h>
#include <string.h>

#include "digits.h"

void sp_out_init(sp_out *o, FILE *f) {
    memset(o, 0, sizeof *o);
    o->f = f;
}

static void out_drain(sp_out *o) {
    if (o->f && o->n) {
        if (fwrite(o->buf, 1, o->n, o->f) != o->n) o->err = 1;
        o->n = 0;
    }
}

void sp_out_write(sp_out *o, const void *p, size_t n) {
    if (!n) return;
    if (o->f && o->n + n > SP_OUT_FLUSH_AT) out_drain(o);
    if (o->n + n > o->cap) {
        size_t c = o->cap ? o->cap : 256;
        while (c < o->n + n) c *= 2;
        if (o->f && c < SP_OUT_FLUSH_AT) c = SP_OUT_FLUSH_AT;
        char *b = realloc(o->buf, c);
        if (!b) {
            o->err = 1;
            return;
        }
        o->buf = b;
        o->cap = c;
    }
    memcpy(o->buf + o->n, p, n);
    o->n += n;
}

void sp_out_str(sp_out *o, const char *s) { sp_out_write(o, s, strlen(s)); }

char *sp_out_reserve_slow(sp_out *o, size_t n) {
    if (o->f && o->n + n > SP_OUT_FLUSH_AT) out_drain(o);
    if (o->cap - o->n < n) {
        size_t c = o->cap ? o->cap : 256;
        while (c - o->n < n) c *= 2;
        if (o->f && c < SP_OUT_FLUSH_AT) c = SP_OUT_FLUSH_AT;
        char *b = realloc(o->buf, c);
        if (!b) return o->err = 1, NULL;
        o->buf = b;
        o->cap = c;
    }
    return o->buf + o->n;
}

void sp_out_u64(sp_out *o, uint64_t v) {
    char *p = sp_out_reserve(o, 20);
    if (p) o->n += (size_t)(put_u64(p, v) - p);
}

void sp_out_i64(sp_out *o, int64_t v) {
    if (v < 0) {
        sp_out_write(o, "-", 1);
        sp_out_u64(o, 0 - (uint64_t)v);
    } else {
        sp_out_u64(o, (uint64_t)v);
    }
}

void sp_out_us(sp_out *o, uint64_t ns) {
    char *p = sp_out_reserve(o, 24);
    if (p) o->n += (size_t)(put_us(p, ns) - p);
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s) {
    unsigned c = s[0];
    unsigned lo = 0x80, hi = 0xBF;
    int n;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* nothing past U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xBF) return 0; /* a NUL stops here too */
    return n;
}

int sp_utf8_len(const unsigned char *s) { return utf8_len(s); }

void sp_csv_field(FILE *out, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void sp_out_json_str(sp_out *o, const char *str) {
    const unsigned char *s = (const unsigned char *)str, *run = s;
    sp_out_write(o, "\"", 1);
    while (*s) {
        unsigned c = *s;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            s++;
            continue;
        }
        int n = c >= 0x80 ? utf8_len(s) : 0;
        if (n) { /* valid multi-byte character: copied as is */
            s += n;
            continue;
        }
        sp_out_write(o, run, (size_t)(s - run));
        if (c == '"') sp_out_write(o, "\\\"", 2);
        else if (c == '\\') sp_out_write(o, "\\\\", 2);
        else if (c < 0x20) {
            char b[7];
            snprintf(b, sizeof b, "\\u%04x", c);
            sp_out_write(o, b, 6);
        } else
            sp_out_write(o, "\\ufffd", 6);
        run = ++s;
    }
    sp_out_write(o, run, (size_t)(s - run));
    sp_out_write(o, "\"", 1);
}

int sp_out_flush(sp_out *o) {
    out_drain(o);
    if (o->f && fflush(o->f) != 0) o->err = 1;
    return o->err ? -1 : 0;
}

void sp_out_free(sp_out *o) {
    free(o->buf);
    o->buf = NULL;
    o->n = o->cap = 0;
}

