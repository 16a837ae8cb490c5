/*
 * cli.h — argument parsing shared by the command-line tools (xfonnx, xfergen,
 * xferverify, xfcost, rlflow-agent, xferdb): checked integers, checked finite
 * numbers, `--dim NAME=N` overrides of symbolic input dimensions, and the
 * memory limit on tensors (`--mem-limit SIZE`, else RLFLOW_MEM_LIMIT), and
 * the default worker count (the online CPUs). Nothing here prints; a failed
 * parse returns -1 and, where there is more than one reason, says which in
 * a message that names the bad argument, for the tool to print under its
 * own name.
 */
#ifndef XF_TOOLS_CLI_H
#define XF_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A decimal integer in [lo, hi] with nothing before or after it (no
 * whitespace, no sign other than '-', no overflow): 0 and *out set, else -1. */
int xf_cli_parse_i64(const char *text, int64_t lo, int64_t hi, int64_t *out);

/* A decimal unsigned integer that fits 64 bits, nothing before or after it
 * (no sign, no whitespace): 0 and *out set, else -1 (a seed). */
int xf_cli_parse_u64(const char *text, uint64_t *out);

/* The most threads a tool takes: 4 x the online CPUs (a thread count past
 * that only oversubscribes; 100000 made libgomp and ONNX Runtime crash). */
int xf_cli_max_threads(void);

/* The value of a thread-count option (`opt`, e.g. "--threads"): an integer
 * in [lo, xf_cli_max_threads()] (lo 0 where 0 means "the default"). 0 and
 * *out set; -1 with the reason in msg, naming the option, the value and
 * the cap. Every tool parses its thread counts with it. */
int xf_cli_parse_threads(const char *opt, const char *text, int lo, int *out, char *msg,
                         size_t msg_n);

/* The machine's online CPUs (sysconf), at least 1 and at most hi: the
 * default number of workers of the tools that run them (xfergen,
 * xferverify, rlflow-agent's target). */
int xf_cli_online_cpus(int hi);

/* A finite decimal number (strtod's syntax) in [lo, hi] with nothing after
 * it: 0 and *out set, else -1. inf, nan and values that overflow a double
 * are refused: a tolerance of inf would accept anything, and inf*0 is nan. */
int xf_cli_parse_f64(const char *text, double lo, double hi, double *out);

#define XF_CLI_MAX_DIMS 16
#define XF_CLI_DIM_NAME 128 /* bytes of a name, NUL included */

/* Symbolic dimension sizes given with --dim, in the form the ONNX importer
 * takes (xf_onnx_options.dim_names/dim_values/n_dim_overrides). names[i]
 * points into buf: do not copy the struct once filled. */
typedef struct xf_cli_dims {
    int n;
    const char *names[XF_CLI_MAX_DIMS];
    int64_t values[XF_CLI_MAX_DIMS];
    char buf[XF_CLI_MAX_DIMS][XF_CLI_DIM_NAME];
} xf_cli_dims;

/* Adds one "NAME=N" (arg may be NULL: the option had no value): NAME
 * non-empty and shorter than XF_CLI_DIM_NAME, N an integer >= 1 that fits
 * int64. 0 on success; -1 with the reason, quoting arg, in msg. */
int xf_cli_dims_add(xf_cli_dims *d, const char *arg, char *msg, size_t msg_n);

/* Sets the memory limit on tensors (xf_mem_limit_set) from `arg` (the
 * value of --mem-limit, NULL when not given), else from the environment
 * variable RLFLOW_MEM_LIMIT, else leaves the default (half of the physical
 * memory). A size is a whole number of bytes with an optional binary
 * suffix K, M, G or T (KiB...TiB; "512M", "8G"), at least 1 MiB and at most
 * 2^62 bytes. 0 on success; -1 with the reason, quoting the value and where
 * it came from, in msg. */
int xf_cli_mem_limit(const char *arg, char *msg, size_t msg_n);

/* ------------------------------------------------ a table of options
 *
 * A tool describes its options once, in a table: each one's names, what it
 * takes, where the value goes and its help text; xf_cli_parse walks the
 * command line with it and xf_cli_usage prints --help from it, so that the
 * parser, the defaults (the tool sets them before parsing) and the help
 * cannot drift apart. A bad value is said one way for every option:
 * "TOOL: OPT needs WHAT, got 'VALUE'" ("(nothing)" when missing). */
/* Each option's value goes to a field of one struct, the spec's `base`,
 * at the option's offset `off` (offsetof), so a table can be a static
 * constant; `dst` below is that field. */
typedef enum xf_cli_type {
    XF_CLI_FLAG,   /* no value: *(int *)dst = set */
    XF_CLI_STR,    /* *(const char **)dst = the value (non-empty unless allow_empty) */
    XF_CLI_INT,    /* *(int *)dst = an integer in [lo, hi] */
    XF_CLI_I64,    /* *(int64_t *)dst = an integer in [lo, hi] (hi 0: INT64_MAX) */
    XF_CLI_U64,    /* *(uint64_t *)dst = 0 to 2^64-1 (a seed; xf_cli_parse_u64) */
    XF_CLI_F64,    /* *(double *)dst = a finite number in [lo, hi] */
    XF_CLI_CHOICE, /* *(int *)dst = values[i] for the value choices[i] */
    XF_CLI_THREADS, /* *(int *)dst = a thread count from lo (xf_cli_parse_threads) */
    XF_CLI_DIM,    /* NAME=N added to *(xf_cli_dims *)dst (xf_cli_dims_add) */
    XF_CLI_CALL    /* call(base, name, value, msg, n): 0, or -1 with the whole message */
} xf_cli_type;

typedef struct xf_cli_opt {
    const char *name;  /* "--output" */
    const char *alias; /* "-o", or NULL */
    xf_cli_type type;
    size_t off;        /* offsetof the field in the spec's base struct (not for CALL) */
    const char *label; /* left column of the help ("-o, --output FILE"); NULL: hidden */
    const char *help;  /* right column, lines separated by '\n' */
    const char *what;  /* STR, INT, I64, U64, F64: what the value must be ("a file name"); NULL:
                          "an integer in range", "a finite number >= LO" */
    double lo, hi;     /* INT, F64 bounds (hi 0: none for F64) */
    int set;           /* FLAG: the value stored */
    int allow_empty;   /* STR: "" is a value */
    const char *const *choices; /* CHOICE: the values, NULL-terminated */
    const int *values;          /* CHOICE: what each stores */
    int takes_value;            /* CALL: 1 when the option takes a value */
    int (*call)(void *base, const char *name, const char *value, char *msg, size_t n);
} xf_cli_opt;

typedef struct xf_cli_spec {
    const char *tool;  /* program name in messages */
    const char *head;  /* --help before the options ("usage: ...\n\nwhat it does\n") */
    const char *tail;  /* --help after them ("exit status: ...\n") */
    const xf_cli_opt *opts;
    int n_opts;
    /* positional arguments: each goes to positional[i] in turn, at most n_positional */
    const char **positional;
    int n_positional;
    void *base; /* the struct the options' offsets are into; also the CALL options' user */
    /* NULL, or n_opts flags: seen[i] set to 1 when opts[i] was given (for a
     * tool whose subcommands take different options) */
    unsigned char *seen;
} xf_cli_spec;

/* Parses argv[1..] with the table: 0 parsed; -1 -h/--help printed on stdout
 * (the tool exits 0); 2 a bad option or value, an unknown option or one
 * argument too many: the message printed on stderr under s->tool. */
int xf_cli_parse(const xf_cli_spec *s, int argc, char **argv);
/* --help: head, one line per shown option (label, help), tail. */
void xf_cli_usage(const xf_cli_spec *s, FILE *f);
/* The standard message "OPT needs WHAT, got 'VALUE'" into msg; returns -1
 * (for CALL options). */
int xf_cli_needs(char *msg, size_t n, const char *opt, const char *what, const char *value);

#endif /* XF_TOOLS_CLI_H */
