/* gz.c -- see gz.h. zlib does the inflating and the deflating (Debian:
 * zlib1g-dev); built without it, gzip input and output are refused with a
 * message naming the package. */
#define _GNU_SOURCE /* fopencookie */
#include "gz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SP_NO_ZLIB /* reporter/rules.mk: zlib.h was not found */
#define SP_HAVE_ZLIB 1
#include <zlib.h>
#endif

/* ---- gzip input ----------------------------------------------------------------- */
int sp_gz_magic(const void *head, size_t n) {
    const unsigned char *p = head;
    return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

static int io_error(sp_result *res, const char *what) {
    memset(res, 0, sizeof *res);
    snprintf(res->msg, sizeof res->msg, "%s", what);
    res->status = SP_IOERR;
    return -1;
}

#ifndef SP_HAVE_ZLIB
int sp_gz_inflate(int fd, const void *head, size_t n, sp_result *res, int *bad, char *why,
                  size_t whylen) {
    (void)fd, (void)head, (void)n, (void)bad, (void)why, (void)whylen;
    return io_error(res, "gzip-compressed, and this scopeprof was built without zlib (Debian "
                         "package zlib1g-dev); gunzip the file first");
}
#else
static int write_all(int fd, const unsigned char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int sp_gz_inflate(int fd, const void *head, size_t n, sp_result *res, int *bad, char *why,
                  size_t whylen) {
    enum { IN = 1 << 16, OUT = 1 << 18 };
    *bad = SP_OK;
    FILE *tmp = tmpfile();
    int out = tmp ? dup(fileno(tmp)) : -1;
    if (tmp) fclose(tmp); /* the dup keeps the unlinked file */
    if (out < 0) return io_error(res, "gzip input: cannot create a temporary file to inflate into");
    unsigned char *in = malloc(IN), *ob = malloc(OUT);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!in || !ob || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        free(in);
        free(ob);
        close(out);
        return io_error(res, "out of memory");
    }
    const unsigned char *pending = head;
    size_t npending = n;
    uint64_t consumed = 0;
    int zr = Z_OK, eof = 0, member_done = 0, padded = 0;
    for (;;) {
        if (z.avail_in == 0) {
            if (npending) { /* the bytes the caller read to sniff the format */
                z.next_in = (unsigned char *)pending;
                z.avail_in = (uInt)npending;
                npending = 0;
            } else if (!eof) {
                ssize_t got = read(fd, in, IN);
                if (got < 0 && errno == EINTR) continue;
                if (got <= 0) eof = 1;
                else z.next_in = in, z.avail_in = (uInt)got;
            }
            if (z.avail_in == 0 && eof) break;
        }
        /* Concatenated members (gzip a >> f; gzip b >> f) are one stream;
         * zeros after the last member are padding (a tape block, dd),
         * skipped as gzip skips them, and anything after zeros is not. */
        if (member_done) {
            while (z.avail_in && *z.next_in == 0) z.next_in++, z.avail_in--, consumed++, padded = 1;
            if (z.avail_in == 0) continue; /* more input, or the end */
            if (padded) {
                zr = Z_DATA_ERROR;
                z.msg = (char *)"data after the zero padding";
                break;
            }
            if (inflateReset(&z) != Z_OK) break;
            member_done = 0;
        }
        uInt before = z.avail_in;
        z.next_out = ob;
        z.avail_out = OUT;
        zr = inflate(&z, Z_NO_FLUSH);
        consumed += before - z.avail_in;
        if (write_all(out, ob, OUT - z.avail_out) != 0) {
            inflateEnd(&z);
            free(in);
            free(ob);
            close(out);
            return io_error(res, "gzip input: cannot write the inflated data to a temporary file");
        }
        if (zr == Z_STREAM_END) member_done = 1;
        else if (zr != Z_OK && zr != Z_BUF_ERROR) break;
    }
    if (zr != Z_STREAM_END && zr != Z_OK && zr != Z_BUF_ERROR) {
        *bad = SP_CORRUPT;
        snprintf(why, whylen, "gzip data corrupt at compressed byte %llu (%s); what inflated before it was read",
                 (unsigned long long)consumed, z.msg ? z.msg : "bad data");
    } else if (!member_done) {
        *bad = SP_TRUNCATED;
        snprintf(why, whylen, "gzip data cut short after %llu compressed bytes; what inflated was read",
                 (unsigned long long)consumed);
    }
    inflateEnd(&z);
    free(in);
    free(ob);
    if (lseek(out, 0, SEEK_SET) != 0) {
        close(out);
        return io_error(res, "gzip input: cannot rewind the temporary file");
    }
    return out;
}
#endif

/* ---- gzip output ---------------------------------------------------------------- */
int sp_output_is_gz(const char *name) {
    size_t n = strlen(name);
    return n >= 3 && strcmp(name + n - 3, ".gz") == 0;
}

#ifndef SP_HAVE_ZLIB
FILE *sp_output_open(const char *path, int gz_wanted) {
    if (!gz_wanted) return fopen(path, "w");
    errno = ENOTSUP; /* the caller names the package (output.c) */
    return NULL;
}
#else
static ssize_t gz_write(void *c, const char *buf, size_t n) {
    size_t done = 0;
    while (done < n) { /* gzwrite takes an unsigned count */
        unsigned part = n - done > (1u << 30) ? 1u << 30 : (unsigned)(n - done);
        int w = gzwrite((gzFile)c, buf + done, part);
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

/* Only ftell: the uncompressed bytes written so far (progress). */
static int gz_seek(void *c, off64_t *off, int whence) {
    if (whence != SEEK_CUR || *off != 0) return -1;
    *off = gztell((gzFile)c);
    return *off < 0 ? -1 : 0;
}

static int gz_close(void *c) { return gzclose((gzFile)c) == Z_OK ? 0 : EOF; }

FILE *sp_output_open(const char *path, int gz_wanted) {
    if (!gz_wanted) return fopen(path, "w");
    /* Level 1: JSON compresses well even so, and a big trace would spend
     * most of its time in deflate at the default level. */
    gzFile gz = gzopen(path, "wb1");
    if (!gz) {
        if (!errno) errno = ENOMEM;
        return NULL;
    }
    gzbuffer(gz, 1u << 17);
    cookie_io_functions_t io = {NULL, gz_write, gz_seek, gz_close};
    FILE *f = fopencookie(gz, "w", io);
    if (!f) gzclose(gz);
    return f;
}
#endif
