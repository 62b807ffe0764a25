/*
 * A synchronized vector for `weft gen`, in the style of a JDK collection:
 * seventeen methods, every one taking the vector's lock, so that tests of
 * random calls rarely hold the one pair of methods that goes wrong.
 *
 * svec's last_index_of does what an old JDK Vector did: it reads the
 * element count before it takes the lock, then searches backwards from
 * that count under the lock, and a start past the end is an error (-2,
 * where the JDK threw an IndexOutOfBoundsException). A call that shrinks
 * the vector in between (remove_at, remove, remove_all, clear) makes the
 * search start past the end: an error no order of the two calls gives.
 * csvec reads the count under the lock.
 *
 * Elements live in an array of at most MAX_ELEMENTS ints; an add to a full
 * vector returns -1. add_all holds both vectors' locks, taken in the order
 * of their handles.
 */
#include <pthread.h>
#include "weft.h"
#include "weft_class.h"

#define EXPORT(name) __attribute__((export_name(name)))
#define MAX_VECTORS 16
#define MAX_ELEMENTS 12

struct vector {
    pthread_mutex_t lock;
    int elements[MAX_ELEMENTS];
    int count;
};

static struct vector vectors[MAX_VECTORS];
static int vector_count;
static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;

static struct vector *vector_at(int h) {
    pthread_mutex_lock(&registry);
    struct vector *v = h >= 0 && h < vector_count ? &vectors[h] : 0;
    pthread_mutex_unlock(&registry);
    return v;
}

static int vector_new(void) {
    pthread_mutex_lock(&registry);
    int h = vector_count < MAX_VECTORS ? vector_count++ : -1;
    if (h >= 0) {
        pthread_mutex_init(&vectors[h].lock, 0);
        vectors[h].count = 0;
        for (int i = 0; i < MAX_ELEMENTS; i++) vectors[h].elements[i] = 0;
    }
    pthread_mutex_unlock(&registry);
    return h;
}

/* Opens a method on vector `h`: its vector, locked, or 0. */
static struct vector *enter(int h) {
    struct vector *v = vector_at(h);
    if (v) pthread_mutex_lock(&v->lock);
    return v;
}

static int leave(struct vector *v, int result) {
    pthread_mutex_unlock(&v->lock);
    return result;
}

static int add(int h, int x) {
    struct vector *v = enter(h);
    if (!v) return -1;
    if (v->count == MAX_ELEMENTS) return leave(v, -1);
    v->elements[v->count++] = x;
    return leave(v, v->count);
}

static int insert(int h, int i, int x) {
    struct vector *v = enter(h);
    if (!v) return -1;
    if (i < 0 || i > v->count || v->count == MAX_ELEMENTS) return leave(v, -1);
    for (int j = v->count; j > i; j--) v->elements[j] = v->elements[j - 1];
    v->elements[i] = x;
    v->count++;
    return leave(v, 0);
}

static int get(int h, int i) {
    struct vector *v = enter(h);
    if (!v) return -1;
    return leave(v, i >= 0 && i < v->count ? v->elements[i] : -1);
}

static int set(int h, int i, int x) {
    struct vector *v = enter(h);
    if (!v) return -1;
    if (i < 0 || i >= v->count) return leave(v, -1);
    int old = v->elements[i];
    v->elements[i] = x;
    return leave(v, old);
}

/* With the lock held: removes the element at `i` (which exists), shifting
 * the rest down and clearing the slot past the new end. */
static int remove_slot(struct vector *v, int i) {
    int old = v->elements[i];
    for (int j = i; j + 1 < v->count; j++) v->elements[j] = v->elements[j + 1];
    v->elements[--v->count] = 0;
    return old;
}

static int remove_at(int h, int i) {
    struct vector *v = enter(h);
    if (!v) return -1;
    return leave(v, i >= 0 && i < v->count ? remove_slot(v, i) : -1);
}

static int remove_value(int h, int x) {
    struct vector *v = enter(h);
    if (!v) return -1;
    for (int i = 0; i < v->count; i++)
        if (v->elements[i] == x) {
            remove_slot(v, i);
            return leave(v, 1);
        }
    return leave(v, 0);
}

static int size(int h) {
    struct vector *v = enter(h);
    return v ? leave(v, v->count) : -1;
}

static int is_empty(int h) {
    struct vector *v = enter(h);
    return v ? leave(v, v->count == 0) : -1;
}

static int index_of(int h, int x) {
    struct vector *v = enter(h);
    if (!v) return -1;
    for (int i = 0; i < v->count; i++)
        if (v->elements[i] == x) return leave(v, i);
    return leave(v, -1);
}

static int contains(int h, int x) {
    return index_of(h, x) >= 0;
}

/* The last index of `x` searching back from `from` (under the lock), or
 * -2 if `from` is past the end: the JDK's lastIndexOf(o, index) throws an
 * IndexOutOfBoundsException then. */
static int last_index_from(struct vector *v, int x, int from) {
    if (from >= v->count) return -2;
    for (int i = from; i >= 0; i--)
        if (v->elements[i] == x) return i;
    return -1;
}

static int last_index_of(int h, int x, int count_unlocked) {
    struct vector *v = vector_at(h);
    if (!v) return -1;
    if (count_unlocked) {
        /* Reads the count outside the lock, as the old JDK did. */
        int from = *(volatile int *)&v->count - 1;
        pthread_mutex_lock(&v->lock);
        return leave(v, last_index_from(v, x, from));
    }
    pthread_mutex_lock(&v->lock);
    return leave(v, last_index_from(v, x, v->count - 1));
}

static int first(int h) {
    struct vector *v = enter(h);
    if (!v) return -1;
    return leave(v, v->count > 0 ? v->elements[0] : -1);
}

static int last(int h) {
    struct vector *v = enter(h);
    if (!v) return -1;
    return leave(v, v->count > 0 ? v->elements[v->count - 1] : -1);
}

static int clear(int h) {
    struct vector *v = enter(h);
    if (!v) return -1;
    int old = v->count;
    for (int i = 0; i < v->count; i++) v->elements[i] = 0;
    v->count = 0;
    return leave(v, old);
}

static int sum(int h) {
    struct vector *v = enter(h);
    if (!v) return -1;
    int total = 0;
    for (int i = 0; i < v->count; i++) total += v->elements[i];
    return leave(v, total);
}

/* Appends the elements of vector `other` (which may be `h` itself) and
 * returns the new size, or -1 if they do not all fit. Both locks are held
 * throughout, taken in the order of the vectors' handles. */
static int add_all(int h, int other) {
    struct vector *v = vector_at(h), *from = vector_at(other);
    if (!v || !from) return -1;
    struct vector *outer = h <= other ? v : from, *inner = h <= other ? from : v;
    pthread_mutex_lock(&outer->lock);
    if (inner != outer) pthread_mutex_lock(&inner->lock);
    int n = from->count, result = -1;
    if (v->count + n <= MAX_ELEMENTS) {
        for (int i = 0; i < n; i++) v->elements[v->count + i] = from->elements[i];
        v->count += n;
        result = v->count;
    }
    if (inner != outer) pthread_mutex_unlock(&inner->lock);
    pthread_mutex_unlock(&outer->lock);
    return result;
}

/* Removes every element equal to `x`; how many it removed. */
static int remove_all(int h, int x) {
    struct vector *v = enter(h);
    if (!v) return -1;
    int kept = 0, removed = 0;
    for (int i = 0; i < v->count; i++) {
        if (v->elements[i] == x) {
            removed++;
        } else {
            v->elements[kept++] = v->elements[i];
        }
    }
    for (int i = kept; i < v->count; i++) v->elements[i] = 0;
    v->count = kept;
    return leave(v, removed);
}

#define VECTOR_CLASS(prefix, unlocked)                                              \
    EXPORT(#prefix "_new") int prefix##_new(void) { return vector_new(); }          \
    EXPORT(#prefix "_add") int prefix##_add(int h, int x) { return add(h, x); }     \
    EXPORT(#prefix "_insert") int prefix##_insert(int h, int i, int x) {            \
        return insert(h, i, x);                                                     \
    }                                                                               \
    EXPORT(#prefix "_get") int prefix##_get(int h, int i) { return get(h, i); }     \
    EXPORT(#prefix "_set") int prefix##_set(int h, int i, int x) {                  \
        return set(h, i, x);                                                        \
    }                                                                               \
    EXPORT(#prefix "_remove_at") int prefix##_remove_at(int h, int i) {             \
        return remove_at(h, i);                                                     \
    }                                                                               \
    EXPORT(#prefix "_remove") int prefix##_remove(int h, int x) {                   \
        return remove_value(h, x);                                                  \
    }                                                                               \
    EXPORT(#prefix "_remove_all") int prefix##_remove_all(int h, int x) {           \
        return remove_all(h, x);                                                    \
    }                                                                               \
    EXPORT(#prefix "_size") int prefix##_size(int h) { return size(h); }            \
    EXPORT(#prefix "_is_empty") int prefix##_is_empty(int h) { return is_empty(h); } \
    EXPORT(#prefix "_contains") int prefix##_contains(int h, int x) {               \
        return contains(h, x);                                                      \
    }                                                                               \
    EXPORT(#prefix "_index_of") int prefix##_index_of(int h, int x) {               \
        return index_of(h, x);                                                      \
    }                                                                               \
    EXPORT(#prefix "_last_index_of") int prefix##_last_index_of(int h, int x) {     \
        return last_index_of(h, x, unlocked);                                       \
    }                                                                               \
    EXPORT(#prefix "_first") int prefix##_first(int h) { return first(h); }         \
    EXPORT(#prefix "_last") int prefix##_last(int h) { return last(h); }            \
    EXPORT(#prefix "_clear") int prefix##_clear(int h) { return clear(h); }         \
    EXPORT(#prefix "_sum") int prefix##_sum(int h) { return sum(h); }               \
    EXPORT(#prefix "_add_all") int prefix##_add_all(int h, int other) {             \
        return add_all(h, other);                                                   \
    }

VECTOR_CLASS(svec, 1)
VECTOR_CLASS(csvec, 0)

int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
