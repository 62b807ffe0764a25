/*
 * A synchronized map wrapper for `weft gen`, with views of its keys and
 * values, the way wrapper libraries build them: every map operation (put,
 * put_if_absent, get, remove, contains_key, contains_value, size, is_empty,
 * clear) takes the map's lock, and so does each step of a view's iterator.
 *
 * vmap's key_sum and value_sum walk their view as such code usually does,
 * one iterator step at a time: they ask how many entries there are, then
 * take each entry, each under the map's lock but not the walk as a whole.
 * A remove between two steps moves the last entry into the hole and clears
 * the last slot (a clear, every slot), so the walk reaches a cleared slot
 * (or skips the moved entry). cvmap's sums hold the map's lock for the
 * whole walk, as the wrapper's documentation asks of its callers.
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

/* What a view walks: the keys or the values. */
enum view { KEYS, VALUES };

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

/* Maps key to value (with `if_absent`, only a key not yet there); the old
 * value (0 if none), or -1 when the map is full. */
static int map_put(int h, int key, int value, int if_absent) {
    struct map *m = map_at(h);
    if (!m) return -1;
    pthread_mutex_lock(&m->lock);
    int slot = find(m, key);
    int old = slot >= 0 ? m->values[slot] : 0;
    int write = slot < 0 || !if_absent;
    if (slot < 0 && m->count < MAX_ENTRIES) slot = m->count++;
    if (slot >= 0 && write) {
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

/* With the lock held: the key or value at `i`, or EMPTY for a slot that
 * holds no entry. */
static int entry(const struct map *m, enum view view, int i) {
    if (m->keys[i] == EMPTY) return EMPTY;
    return view == KEYS ? m->keys[i] : m->values[i];
}

/* One step of a view's iterator: the entry at `i`, under the lock. */
static int view_step(struct map *m, enum view view, int i) {
    pthread_mutex_lock(&m->lock);
    int e = entry(m, view, i);
    pthread_mutex_unlock(&m->lock);
    return e;
}

static int view_size(struct map *m) {
    pthread_mutex_lock(&m->lock);
    int n = m->count;
    pthread_mutex_unlock(&m->lock);
    return n;
}

/* The sum of the keys or values, through their view; `whole` holds the
 * lock across. */
static int view_sum(int h, enum view view, int whole) {
    struct map *m = map_at(h);
    if (!m) return -1;
    if (whole) pthread_mutex_lock(&m->lock);
    int n = whole ? m->count : view_size(m);
    int sum = 0;
    for (int i = 0; i < n; i++) {
        int e = whole ? entry(m, view, i) : view_step(m, view, i);
        weft_assert(e != EMPTY, "a view of the map visited an entry that was removed");
        sum = (int)((unsigned)sum + (unsigned)e); /* wraps, as Java ints do */
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

static int map_contains_value(int h, int value) {
    struct map *m = map_at(h);
    if (!m) return -1;
    pthread_mutex_lock(&m->lock);
    int found = 0;
    for (int i = 0; i < m->count; i++) found |= m->values[i] == value;
    pthread_mutex_unlock(&m->lock);
    return found;
}

static int map_size(int h) {
    struct map *m = map_at(h);
    return m ? view_size(m) : -1;
}

/* Removes every entry; how many there were. */
static int map_clear(int h) {
    struct map *m = map_at(h);
    if (!m) return -1;
    pthread_mutex_lock(&m->lock);
    int n = m->count;
    for (int i = 0; i < MAX_ENTRIES; i++) m->keys[i] = EMPTY;
    m->count = 0;
    pthread_mutex_unlock(&m->lock);
    return n;
}

#define MAP_METHODS(P, WHOLE)                                                                     \
    EXPORT(#P "_new") int P##_new(void) { return map_new(); }                                     \
    EXPORT(#P "_put") int P##_put(int h, int k, int v) { return map_put(h, k, v, 0); }            \
    EXPORT(#P "_put_if_absent") int P##_put_if_absent(int h, int k, int v) { return map_put(h, k, v, 1); } \
    EXPORT(#P "_get") int P##_get(int h, int k) { return map_get(h, k); }                         \
    EXPORT(#P "_remove") int P##_remove(int h, int k) { return map_remove(h, k); }                \
    EXPORT(#P "_contains_key") int P##_contains_key(int h, int k) { return map_contains(h, k); }  \
    EXPORT(#P "_contains_value") int P##_contains_value(int h, int v) { return map_contains_value(h, v); } \
    EXPORT(#P "_size") int P##_size(int h) { return map_size(h); }                                \
    EXPORT(#P "_is_empty") int P##_is_empty(int h) { int n = map_size(h); return n < 0 ? -1 : n == 0; } \
    EXPORT(#P "_clear") int P##_clear(int h) { return map_clear(h); }                             \
    EXPORT(#P "_key_sum") int P##_key_sum(int h) { return view_sum(h, KEYS, WHOLE); }             \
    EXPORT(#P "_value_sum") int P##_value_sum(int h) { return view_sum(h, VALUES, WHOLE); }

MAP_METHODS(vmap, 0)
MAP_METHODS(cvmap, 1)

int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
