/* gz.h -- gzip, both ways. Input (.json.gz as torch.profiler's
 * tensorboard_trace_handler writes it, or a gzipped .sprof) is told by its
 * magic bytes 1f 8b, not by the file name; output (-o OUT.gz) by the name. */
#ifndef SP_GZ_H
#define SP_GZ_H

#include <stddef.h>
#include <stdio.h>

#include "read.h"

/* ---- Input */
/* 1 if the input starts with the gzip magic. */
int sp_gz_magic(const void *head, size_t n);

/* Inflate everything from fd (its first n bytes already read into head) into
 * an unlinked temporary file, so that the readers see a regular file they
 * can read twice. Returns the temporary's descriptor at offset 0, or -1 with
 * res filled (SP_IOERR) when none could be made. A gzip stream that is cut
 * short or corrupt still returns what inflated before the bad spot, with
 * *bad set to SP_TRUNCATED or SP_CORRUPT and its reason in why. */
int sp_gz_inflate(int fd, const void *head, size_t n, sp_result *res, int *bad, char *why,
                  size_t whylen);

/* ---- Output */
/* Whether an output name asks for gzip: it ends in ".gz". */
int sp_output_is_gz(const char *name);
/* Create the output file `path`, gzip-compressed (zlib) if gz: a FILE whose
 * writes, fflush and fclose report zlib's errors. The name and the gzip
 * choice are apart so that a temporary file can stand in for the name. */
FILE *sp_output_open(const char *path, int gz);

#endif
