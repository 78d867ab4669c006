/* gz.h -- gzip-compressed input (.json.gz as torch.profiler's
 * tensorboard_trace_handler writes it, or a gzipped .sprof), told by its
 * magic bytes 1f 8b, not by the file name. */
#ifndef SP_GZ_H
#define SP_GZ_H

#include <stddef.h>

#include "read.h"

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

#endif
