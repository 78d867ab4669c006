/* cells.c -- see cells.h. */
#define SCOPEPROF_AGGREGATION /* scopeprof_more_rows: the exit table's line too */
#include "cells.h"

#include <string.h>

#include "scopeprof.h"

int sp_format_parse(const char *f, FILE *err) {
    static const char *const names[] = {"text", "csv", "json", "markdown"}; /* SP_FORMAT_* */
    if (!f) return SP_FORMAT_TEXT;
    for (int i = 0; i < 4; i++)
        if (strcmp(f, names[i]) == 0) return i;
    fprintf(err, "scopeprof: unknown --format '%s'; valid: text, csv, json, markdown\n", f);
    return -1;
}

int sp_more_rows(char *b, size_t n, uint32_t nrows, long limit) {
    b[0] = 0;
    return scopeprof_more_rows(b, n, nrows, limit, "--limit ", "--limit 0") != NULL;
}

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

void sp_md_cell(FILE *out, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7F) c = ' ';
        else if (strchr("\\`*_[]<>~&|", c)) fputc('\\', out);
        fputc(c, out);
    }
}
