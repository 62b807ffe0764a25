/*
 * An integer range in C for `weft gen --class range`: set_min and set_max
 * check the other bound and then set theirs, under two separate lock
 * acquisitions, so two threads can both succeed and invert the range
 * (check-then-act). crange_* hold the lock across check and set.
 */
#include <pthread.h>
#include "weft.h"
#include "weft_class.h"

#define EXPORT(name) __attribute__((export_name(name)))
#define MAX_RANGES 16

struct range {
    pthread_mutex_t lock;
    int min, max;
};

static struct range ranges[MAX_RANGES];
static int count;
static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;

static struct range *get(int h) { return h >= 0 && h < count ? &ranges[h] : 0; }

static int make(void) {
    pthread_mutex_lock(&registry);
    int h = count < MAX_RANGES ? count++ : -1;
    if (h >= 0) {
        pthread_mutex_init(&ranges[h].lock, 0);
        ranges[h].min = 0;
        ranges[h].max = 10;
    }
    pthread_mutex_unlock(&registry);
    return h;
}

static int bound(int h, int v, int lower, int atomic) {
    struct range *r = get(h);
    if (!r) return -1;
    pthread_mutex_lock(&r->lock);
    int ok = lower ? v <= r->max : v >= r->min;
    if (!atomic) {
        pthread_mutex_unlock(&r->lock);
        if (!ok) return 0;
        pthread_mutex_lock(&r->lock);
    }
    if (ok) {
        if (lower) r->min = v; else r->max = v;
    }
    pthread_mutex_unlock(&r->lock);
    return ok;
}

static int width(int h) {
    struct range *r = get(h);
    if (!r) return -1;
    pthread_mutex_lock(&r->lock);
    int w = r->max - r->min;
    pthread_mutex_unlock(&r->lock);
    weft_assert(w >= 0, "the range is inverted");
    return w;
}

EXPORT("range_new") int range_new(void) { return make(); }
EXPORT("range_set_min") int range_set_min(int h, int v) { return bound(h, v, 1, 0); }
EXPORT("range_set_max") int range_set_max(int h, int v) { return bound(h, v, 0, 0); }
EXPORT("range_width") int range_width(int h) { return width(h); }

EXPORT("crange_new") int crange_new(void) { return make(); }
EXPORT("crange_set_min") int crange_set_min(int h, int v) { return bound(h, v, 1, 1); }
EXPORT("crange_set_max") int crange_set_max(int h, int v) { return bound(h, v, 0, 1); }
EXPORT("crange_width") int crange_width(int h) { return width(h); }

int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
