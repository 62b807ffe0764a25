/*
 * Guest SDK of weft for C programs (a thin binding of guest-sdk/ABI.md).
 *
 * Build with `weft build prog.c`, which puts this header on the include path.
 * Outside weft (any other compiler target) the calls compile to no-ops, and
 * weft_assert falls back to assert().
 */
#ifndef WEFT_H
#define WEFT_H

#include <stddef.h>
#include <string.h>

#if defined(__wasm__)
#define WEFT_IMPORT(name) __attribute__((import_module("weft"), import_name(name)))
WEFT_IMPORT("event") void weft_abi_event(const char *name, size_t len);
WEFT_IMPORT("thread_name") void weft_abi_thread_name(const char *name, size_t len);
WEFT_IMPORT("assert") void weft_abi_assert(int cond, const char *msg, size_t len);
WEFT_IMPORT("choose") long long weft_abi_choose(long long bound);
WEFT_IMPORT("assume") void weft_abi_assume(int cond);
WEFT_IMPORT("atomic_begin") void weft_atomic_begin(void);
WEFT_IMPORT("atomic_end") void weft_atomic_end(void);
WEFT_IMPORT("atomic_set") void weft_abi_atomic_set(const char *name, size_t len, const void *ptr, size_t size);
WEFT_IMPORT("unit_begin") void weft_abi_unit_begin(const char *name, size_t len);
WEFT_IMPORT("unit_end") void weft_unit_end(void);
/* Actors (see guest-sdk/ABI.md): the raw imports. */
WEFT_IMPORT("actor_spawn") int weft_abi_actor_spawn(const char *type, size_t len);
WEFT_IMPORT("actor_send") void weft_abi_actor_send(int to, const char *kind, size_t kind_len, const void *body, size_t body_len);
WEFT_IMPORT("actor_receive") int weft_abi_actor_receive(void *buf, size_t cap, unsigned *header, int awaiting);
WEFT_IMPORT("actor_become") void weft_abi_actor_become(const char *name, size_t len);
WEFT_IMPORT("actor_unhandled") void weft_actor_unhandled(void);
/* weft gen: calls method number `method` of the class under test. */
WEFT_IMPORT("gen_call") long long weft_abi_gen_call(int method, long long a0, long long a1, long long a2, long long a3);

/* The `size` bytes at `ptr` form an atomic set named `name` (fields bound by
 * one consistency property), for `weft serializability`. */
static inline void weft_atomic_set(const char *name, const void *ptr, size_t size) {
    weft_abi_atomic_set(name, strlen(name), ptr, size);
}

/* Starts a unit of work of the calling thread (a region that should keep
 * atomic sets consistent); end it with weft_unit_end(). Units nest. */
static inline void weft_unit_begin(const char *name) { weft_abi_unit_begin(name, strlen(name)); }

/* A nondeterministic value in [0, bound) (any value when bound is 0),
 * chosen by weft and saved for replay. */
static inline unsigned long long weft_choose(unsigned long long bound) {
    return (unsigned long long)weft_abi_choose((long long)bound);
}

/* Discards the execution (not a bug) when `cond` is false. */
static inline void weft_assume(int cond) { weft_abi_assume(cond != 0); }

/* Marks a named event of the calling thread; a scheduling point. */
static inline void weft_event(const char *name) { weft_abi_event(name, strlen(name)); }

/* Names the calling thread in weft's reports. */
static inline void weft_thread_name(const char *name) { weft_abi_thread_name(name, strlen(name)); }

/* Checks a property of every execution: when `cond` is false the execution
 * fails with an `assertion` failure carrying `message`. */
static inline void weft_assert(int cond, const char *message) {
    weft_abi_assert(cond != 0, message, strlen(message));
}
#else
#include <assert.h>
#include <stdlib.h>
static inline unsigned long long weft_choose(unsigned long long bound) {
    return bound ? (unsigned long long)rand() % bound : (unsigned long long)rand();
}
static inline void weft_assume(int cond) { if (!cond) exit(0); }
static inline void weft_atomic_begin(void) {}
static inline void weft_atomic_end(void) {}
static inline void weft_atomic_set(const char *name, const void *ptr, size_t size) {
    (void)name; (void)ptr; (void)size;
}
static inline void weft_unit_begin(const char *name) { (void)name; }
static inline void weft_unit_end(void) {}
static inline void weft_event(const char *name) { (void)name; }
static inline void weft_thread_name(const char *name) { (void)name; }
static inline void weft_assert(int cond, const char *message) { (void)message; assert(cond); }
#endif

/* A unit test of a test module run by `weft test`: its name, its body and
 * the IMUnit schedules it runs under (a NULL-terminated list, or NULL). */
struct weft_test {
    const char *name;
    void (*run)(void);
    const char *const *schedules;
};

#include <stdio.h>
#include <stdlib.h>

/* The main of a test module. With `--weft-list` it prints one line per
 * test (`weft-test#`, the name and its schedules, tab-separated) for
 * `weft test`, which then runs the test of index N with `--weft-test N`;
 * with a test's name it runs that test; with no argument it runs them all.
 * A name must be one line without tabs. Returns the process exit code. */
static inline int weft_run_tests(int argc, char **argv, const struct weft_test *tests, size_t count) {
    if (argc > 1 && strcmp(argv[1], "--weft-list") == 0) {
        for (size_t i = 0; i < count; i++) {
            if (strpbrk(tests[i].name, "\t\r\n")) {
                printf("weft-test-refused\tthe name of test %zu (`%.*s...`) holds a tab or a "
                       "line break; test names are one line without tabs\n",
                       i, (int)strcspn(tests[i].name, "\t\r\n"), tests[i].name);
                return 2;
            }
        }
        for (size_t i = 0; i < count; i++) {
            printf("weft-test#\t%s", tests[i].name);
            for (const char *const *s = tests[i].schedules; s && *s; s++)
                printf("\t%s", *s);
            printf("\n");
        }
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "--weft-test") == 0) {
        char *end;
        unsigned long index = strtoul(argv[2], &end, 10);
        if (*argv[2] == '\0' || *end != '\0' || index >= count) {
            fprintf(stderr, "no test of index `%s`\n", argv[2]);
            return 2;
        }
        tests[index].run();
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        if (argc <= 1 || strcmp(argv[1], tests[i].name) == 0) {
            tests[i].run();
            if (argc > 1)
                return 0;
        }
    }
    if (argc > 1) {
        fprintf(stderr, "no test named `%s`\n", argv[1]);
        return 2;
    }
    return 0;
}

#endif /* WEFT_H */
