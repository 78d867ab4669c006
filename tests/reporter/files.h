/* files.h -- what the reporter's cmocka suites share: a scratch folder
 * (`dir`, made by each suite's setup) and the text a stream received. */
#ifndef FILES_H
#define FILES_H

#include <stdio.h>
#include <stdlib.h>

static char dir[64];

/* DIR/NAME, in one of 8 rotating buffers (a call may take several). */
static const char *path(const char *name) {
    static char p[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* The whole of a temporary stream, malloc'd; the stream is closed. */
static char *slurp(FILE *f) {
    fflush(f);
    long n = ftell(f);
    char *s = malloc((size_t)n + 1);
    rewind(f);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

#endif
