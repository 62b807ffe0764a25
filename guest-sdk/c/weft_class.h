/*
 * The driver of tests that `weft gen` generates for a thread-safe class (see
 * "Class modules" in guest-sdk/ABI.md). A class module's main calls
 *
 *     int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
 *
 * It runs the plan weft passes as `--weft-gen PLAN`: the prefix on the main
 * thread, then the two suffixes on two threads that start together, each
 * call through weft.gen_call, reported on stdout.
 */
#ifndef WEFT_CLASS_H
#define WEFT_CLASS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "weft.h"

#define WEFT_CLASS_MAX_CALLS 64

struct weft_class_call {
    int method;
    int nargs;
    long long value[4];
    int is_result[4];
};

struct weft_class_phase {
    int phase;
    int first, count;
};

static struct weft_class_call weft_class_calls[WEFT_CLASS_MAX_CALLS];
static long long weft_class_results[WEFT_CLASS_MAX_CALLS];
static pthread_mutex_t weft_class_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t weft_class_gate;

static void weft_class_run(const struct weft_class_phase *p) {
    for (int k = p->first; k < p->first + p->count; k++) {
        const struct weft_class_call *c = &weft_class_calls[k];
        long long a[4] = {0, 0, 0, 0};
        pthread_mutex_lock(&weft_class_lock);
        for (int i = 0; i < c->nargs; i++) {
            a[i] = c->is_result[i] ? weft_class_results[c->value[i]] : c->value[i];
        }
        pthread_mutex_unlock(&weft_class_lock);
        printf("weft-gen\tenter\t%d\t%d\n", p->phase, k);
        fflush(stdout);
        long long v = weft_abi_gen_call(c->method, a[0], a[1], a[2], a[3]);
        pthread_mutex_lock(&weft_class_lock);
        weft_class_results[k] = v;
        pthread_mutex_unlock(&weft_class_lock);
        printf("weft-gen\texit\t%d\t%d\t%lld\n", p->phase, k, v);
        fflush(stdout);
    }
}

static void *weft_class_suffix(void *arg) {
    pthread_barrier_wait(&weft_class_gate);
    weft_class_run((const struct weft_class_phase *)arg);
    return 0;
}

/* Parses the plan into weft_class_calls; fills the three phases. */
static void weft_class_parse(const char *plan, struct weft_class_phase phases[3]) {
    int n = 0, phase = 0;
    const char *s = plan;
    phases[0].phase = 0;
    phases[0].first = 0;
    while (*s && phase < 3) {
        while (*s == ' ') s++;
        if (*s == '|' || *s == ';' || *s == 0) {
            if (*s == '|') {
                phases[phase].count = n - phases[phase].first;
                phase++;
                if (phase < 3) {
                    phases[phase].phase = phase;
                    phases[phase].first = n;
                }
            }
            if (*s) s++;
            continue;
        }
        if (n >= WEFT_CLASS_MAX_CALLS) break;
        struct weft_class_call *c = &weft_class_calls[n++];
        c->method = (int)strtol(s, (char **)&s, 10);
        c->nargs = 0;
        while (*s == ' ') {
            while (*s == ' ') s++;
            if (*s == ';' || *s == '|' || *s == 0 || c->nargs == 4) break;
            c->is_result[c->nargs] = *s == 'r';
            if (*s == 'r') s++;
            c->value[c->nargs++] = strtoll(s, (char **)&s, 10);
        }
    }
    if (phase < 3) phases[phase].count = n - phases[phase].first;
    for (int p = phase + 1; p < 3; p++) {
        phases[p].phase = p;
        phases[p].first = n;
        phases[p].count = 0;
    }
}

/* Runs the plan of `--weft-gen PLAN`; returns 0 (also without a plan). */
static int weft_class_serve(int argc, char **argv) {
    if (argc < 3 || strcmp(argv[1], "--weft-gen") != 0) return 0;
    struct weft_class_phase phases[3];
    weft_class_parse(argv[2], phases);
    weft_class_run(&phases[0]);
    pthread_barrier_init(&weft_class_gate, 0, 2);
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], 0, weft_class_suffix, &phases[i + 1]);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], 0);
    return 0;
}

#endif
