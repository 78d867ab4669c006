/* picture.c -- see picture.h. */
#define SCOPEPROF_AGGREGATION
#include "picture.h"

#include <errno.h>
#include <string.h>

#include "exit.h"

sp_flame *sp_picture_flame(const scopeprof_agg *a) {
    sp_flame *f = sp_flame_new("all");
    for (uint32_t i = 0; f && i < a->nrows; i++)
        if (sp_flame_add(f, a->rows[i].key, a->rows[i].self_ns) != 0) {
            sp_flame_free(f);
            return NULL;
        }
    return f;
}

const char *sp_base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int sp_picture_write(const char *path, const char *name, const sp_out *m, FILE *out, FILE *err) {
    int to_stdout = !path || strcmp(path, "-") == 0;
    if (m->err) {
        fprintf(err, "scopeprof: out of memory\n");
        return SP_EXIT_OUTPUT;
    }
    FILE *f = to_stdout ? out : fopen(path, "w");
    if (!f) {
        fprintf(err, "scopeprof: cannot create '%s': %s\n", path, strerror(errno));
        return SP_EXIT_OUTPUT;
    }
    int bad = fwrite(m->buf, 1, m->n, f) != m->n;
    bad |= fflush(f) != 0 || ferror(f);
    if (!to_stdout) bad |= fclose(f) != 0;
    if (bad) {
        fprintf(err, "scopeprof: cannot write '%s'\n", to_stdout ? (name ? name : "standard output") : path);
        return SP_EXIT_OUTPUT;
    }
    return SP_EXIT_OK;
}
