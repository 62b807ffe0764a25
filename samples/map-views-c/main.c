/*
 * A synchronized map wrapper for `weft gen`, with a view of its keys, the
 * way wrapper libraries build them: every map operation takes the map's
 * lock, and so does each step of the key view's iterator.
 *
 * vmap's key_sum walks the view as such code usually does, one iterator
 * step at a time: it asks how many keys there are, then takes each key,
 * each under the map's lock but not the walk as a whole. A remove between
 * two steps moves the last entry into the hole and clears the last slot,
 * so the walk reaches a cleared slot (or skips the moved key). cvmap's
 * key_sum holds the map's lock for the whole walk, as the wrapper's
 * documentation asks of its callers.
 *
 * Entries are kept in an array of at most MAX_ENTRIES (key, value) pairs;
 * a put on a full map returns -1.
 */
#include <pthread.h>
#include "weft.h"
#include "weft_class.h"

#define EXPORT(name) __attribute__((export_name(name)))
#define MAX_MAPS 16
#define MAX_ENTRIES 8
#define EMPTY (-1000000)

struct map {
    pthread_mutex_t lock;
    int keys[MAX_ENTRIES], values[MAX_ENTRIES];
    int count;
};

static struct map maps[MAX_MAPS];
static int map_count;
static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;

static struct map *map_at(int h) {
    pthread_mutex_lock(&registry);
    struct map *m = h >= 0 && h < map_count ? &maps[h] : 0;
    pthread_mutex_unlock(&registry);
    return m;
}

static int map_new(void) {
    pthread_mutex_lock(&registry);
    int h = map_count < MAX_MAPS ? map_count++ : -1;
    if (h >= 0) {
        struct map *m = &maps[h];
        pthread_mutex_init(&m->lock, 0);
        m->count = 0;
        for (int i = 0; i < MAX_ENTRIES; i++) m->keys[i] = EMPTY;
    }
    pthread_mutex_unlock(&registry);
    return h;
}

/* With the map's lock held: the slot of `key`, or -1. */
static int find(const struct map *m, int key) {
    for (int i = 0; i < m->count; i++)
        if (m->keys[i] == key) return i;
    return -1;
}

static int map_put(int h, int key, int value) {
    struct map *m = map_at(h);
    if (!m) return -1;
    pthread_mutex_lock(&m->lock);
    int slot = find(m, key);
    int old = slot >= 0 ? m->values[slot] : 0;
    if (slot < 0 && m->count < MAX_ENTRIES) slot = m->count++;
    if (slot >= 0) {
        m->keys[slot] = key;
        m->values[slot] = value;
    }
    pthread_mutex_unlock(&m->lock);
    return slot >= 0 ? old : -1;
}

static int map_get(int h, int key) {
    struct map *m = map_at(h);
    if (!m) return -1;
    pthread_mutex_lock(&m->lock);
    int slot = find(m, key);
    int value = slot >= 0 ? m->values[slot] : 0;
    pthread_mutex_unlock(&m->lock);
    return value;
}

static int map_remove(int h, int key) {
    struct map *m = map_at(h);
    if (!m) return -1;
    pthread_mutex_lock(&m->lock);
    int slot = find(m, key);
    int old = 0;
    if (slot >= 0) {
        old = m->values[slot];
        int last = --m->count;
        m->keys[slot] = m->keys[last];
        m->values[slot] = m->values[last];
        m->keys[last] = EMPTY;
    }
    pthread_mutex_unlock(&m->lock);
    return old;
}

/* One step of the key view's iterator: the key at `i`, under the lock. */
static int view_step(struct map *m, int i) {
    pthread_mutex_lock(&m->lock);
    int key = m->keys[i];
    pthread_mutex_unlock(&m->lock);
    return key;
}

static int view_size(struct map *m) {
    pthread_mutex_lock(&m->lock);
    int n = m->count;
    pthread_mutex_unlock(&m->lock);
    return n;
}

/* The sum of the keys, through the view; `whole` holds the lock across. */
static int view_key_sum(int h, int whole) {
    struct map *m = map_at(h);
    if (!m) return -1;
    if (whole) pthread_mutex_lock(&m->lock);
    int n = whole ? m->count : view_size(m);
    int sum = 0;
    for (int i = 0; i < n; i++) {
        int key = whole ? m->keys[i] : view_step(m, i);
        weft_assert(key != EMPTY, "the key view visited an entry that was removed");
        sum += key;
    }
    if (whole) pthread_mutex_unlock(&m->lock);
    return sum;
}

static int map_contains(int h, int key) {
    struct map *m = map_at(h);
    if (!m) return -1;
    pthread_mutex_lock(&m->lock);
    int found = find(m, key) >= 0;
    pthread_mutex_unlock(&m->lock);
    return found;
}

EXPORT("vmap_new") int vmap_new(void) { return map_new(); }
EXPORT("vmap_put") int vmap_put(int h, int k, int v) { return map_put(h, k, v); }
EXPORT("vmap_get") int vmap_get(int h, int k) { return map_get(h, k); }
EXPORT("vmap_remove") int vmap_remove(int h, int k) { return map_remove(h, k); }
EXPORT("vmap_key_sum") int vmap_key_sum(int h) { return view_key_sum(h, 0); }
EXPORT("vmap_contains_key") int vmap_contains_key(int h, int k) { return map_contains(h, k); }

EXPORT("cvmap_new") int cvmap_new(void) { return map_new(); }
EXPORT("cvmap_put") int cvmap_put(int h, int k, int v) { return map_put(h, k, v); }
EXPORT("cvmap_get") int cvmap_get(int h, int k) { return map_get(h, k); }
EXPORT("cvmap_remove") int cvmap_remove(int h, int k) { return map_remove(h, k); }
EXPORT("cvmap_key_sum") int cvmap_key_sum(int h) { return view_key_sum(h, 1); }
EXPORT("cvmap_contains_key") int cvmap_contains_key(int h, int k) { return map_contains(h, k); }

int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
