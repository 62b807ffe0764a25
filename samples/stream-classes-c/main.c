/*
 * Two thread-safe classes in C for `weft gen`, each next to a correct twin.
 *
 * bstream: a buffered input stream over a source whose byte at offset k is
 * k % 256, with the methods of a JDK-style buffered stream: read() takes
 * one byte and read_block(n) up to n, filling the buffer from the source
 * when it is empty; skip(n) drops up to n bytes; available(), offset();
 * mark(limit) and reset() return to a marked offset while at most `limit`
 * bytes were read past it; mark_supported(); close(), after which reading
 * returns -1. Its skip asks how many bytes are buffered and then moves past
 * them in a second critical section, so a read (or a reset) in between
 * leaves the position past the buffered bytes: the stream's offset runs
 * ahead of the source and fewer than none are available. cbstream_* do
 * both in one critical section.
 *
 * series: a time series with listeners, in the manner of a charting
 * library's: add(v) appends a value under the series' lock, then tells
 * every listener under the listeners' lock; a new listener starts from the
 * series' total (series lock) and is registered afterwards (listeners
 * lock), so a value added in between is counted twice or not at all: the
 * listener's total and the series' disagree. The rest hold the locks they
 * need throughout: count(), value_at(i), min(), max(), delete_last() and
 * clear() (which tell the listeners what was removed), unlisten(id),
 * heard(id) and check(). cseries_* take both locks, series first, for add
 * and listen too.
 */
#include <pthread.h>
#include "weft.h"
#include "weft_class.h"

#define EXPORT(name) __attribute__((export_name(name)))
#define MAX_OBJECTS 16
#define BUFFER 4
#define MAX_LISTENERS 8

/* ---- bstream / cbstream ------------------------------------------------ */

struct bstream {
    pthread_mutex_t lock;
    unsigned char buf[BUFFER];
    int pos, count;
    long long source; /* offset of the next byte the source gives */
    long long mark;   /* the marked offset, or -1 */
    int mark_limit;
    int closed;
};

static struct bstream streams[MAX_OBJECTS];
static int stream_count;
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;

static struct bstream *stream(int h) {
    pthread_mutex_lock(&streams_lock);
    struct bstream *s = h >= 0 && h < stream_count ? &streams[h] : 0;
    pthread_mutex_unlock(&streams_lock);
    return s;
}

static int stream_new(void) {
    pthread_mutex_lock(&streams_lock);
    int h = stream_count < MAX_OBJECTS ? stream_count++ : -1;
    if (h >= 0) {
        pthread_mutex_init(&streams[h].lock, 0);
        streams[h].pos = streams[h].count = 0;
        streams[h].source = 0;
        streams[h].mark = -1;
        streams[h].mark_limit = 0;
        streams[h].closed = 0;
    }
    pthread_mutex_unlock(&streams_lock);
    return h;
}

/* With the lock held: the buffer holds at least one unread byte. */
static void fill(struct bstream *s) {
    if (s->pos < s->count) return;
    for (int i = 0; i < BUFFER; i++) s->buf[i] = (unsigned char)((s->source + i) % 256);
    s->source += BUFFER;
    s->pos = 0;
    s->count = BUFFER;
}

/* With the lock held: the offset of the next byte read(). */
static long long offset(const struct bstream *s) { return s->source - (s->count - s->pos); }

static int stream_read(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    if (s->closed) {
        pthread_mutex_unlock(&s->lock);
        return -1;
    }
    fill(s);
    weft_assert(s->pos < s->count, "read past the buffered bytes");
    long long at = offset(s);
    int byte = s->buf[s->pos++];
    pthread_mutex_unlock(&s->lock);
    weft_assert(byte == at % 256, "read a byte from another offset");
    return byte;
}

/* Reads up to n (at most BUFFER) bytes: those buffered, or a new buffer's
 * when none is; how many. */
static int stream_read_block(int h, int n) {
    struct bstream *s = stream(h);
    if (!s || n < 0) return -1;
    pthread_mutex_lock(&s->lock);
    if (s->closed) {
        pthread_mutex_unlock(&s->lock);
        return -1;
    }
    int got = 0;
    if (n > 0) {
        fill(s);
        int buffered = s->count - s->pos;
        got = n < buffered ? n : buffered;
        for (int i = 0; i < got; i++) {
            long long at = offset(s);
            weft_assert(s->buf[s->pos] == at % 256, "read a byte from another offset");
            s->pos++;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return got;
}

static int stream_skip(int h, int n, int atomic) {
    struct bstream *s = stream(h);
    if (!s || n < 0) return -1;
    pthread_mutex_lock(&s->lock);
    if (s->closed) {
        pthread_mutex_unlock(&s->lock);
        return -1;
    }
    int available = s->count - s->pos;
    if (!atomic) {
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_lock(&s->lock);
    }
    int skipped = n < available ? n : available;
    s->pos += skipped;
    pthread_mutex_unlock(&s->lock);
    return skipped;
}

static int stream_available(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    int available = s->closed ? 0 : s->count - s->pos;
    pthread_mutex_unlock(&s->lock);
    weft_assert(available >= 0, "more bytes consumed than buffered");
    return available;
}

/* Marks the current offset; reset() may return to it while at most
 * `limit` bytes were read past it. */
static int stream_mark(int h, int limit) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    s->mark = offset(s);
    s->mark_limit = limit < 0 ? 0 : limit;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Returns to the marked offset (the buffer is dropped and refilled from
 * the source there); the offset, or -1 without a valid mark. */
static int stream_reset(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    long long to = -1;
    if (!s->closed && s->mark >= 0 && offset(s) - s->mark <= s->mark_limit) {
        to = s->mark;
        s->source = to;
        s->pos = s->count = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return (int)to;
}

static int stream_close(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    int was_open = !s->closed;
    s->closed = 1;
    pthread_mutex_unlock(&s->lock);
    return was_open;
}

static int stream_offset(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    long long at = offset(s);
    pthread_mutex_unlock(&s->lock);
    return (int)at;
}

EXPORT("bstream_new") int bstream_new(void) { return stream_new(); }
EXPORT("bstream_read") int bstream_read(int h) { return stream_read(h); }
EXPORT("bstream_skip") int bstream_skip(int h, int n) { return stream_skip(h, n, 0); }
EXPORT("bstream_available") int bstream_available(int h) { return stream_available(h); }
EXPORT("bstream_offset") int bstream_offset(int h) { return stream_offset(h); }
EXPORT("bstream_read_block") int bstream_read_block(int h, int n) { return stream_read_block(h, n); }
EXPORT("bstream_mark") int bstream_mark(int h, int limit) { return stream_mark(h, limit); }
EXPORT("bstream_reset") int bstream_reset(int h) { return stream_reset(h); }
EXPORT("bstream_mark_supported") int bstream_mark_supported(int h) { return stream(h) ? 1 : -1; }
EXPORT("bstream_close") int bstream_close(int h) { return stream_close(h); }

EXPORT("cbstream_new") int cbstream_new(void) { return stream_new(); }
EXPORT("cbstream_read") int cbstream_read(int h) { return stream_read(h); }
EXPORT("cbstream_skip") int cbstream_skip(int h, int n) { return stream_skip(h, n, 1); }
EXPORT("cbstream_available") int cbstream_available(int h) { return stream_available(h); }
EXPORT("cbstream_offset") int cbstream_offset(int h) { return stream_offset(h); }
EXPORT("cbstream_read_block") int cbstream_read_block(int h, int n) { return stream_read_block(h, n); }
EXPORT("cbstream_mark") int cbstream_mark(int h, int limit) { return stream_mark(h, limit); }
EXPORT("cbstream_reset") int cbstream_reset(int h) { return stream_reset(h); }
EXPORT("cbstream_mark_supported") int cbstream_mark_supported(int h) { return stream(h) ? 1 : -1; }
EXPORT("cbstream_close") int cbstream_close(int h) { return stream_close(h); }

/* ---- series / cseries -------------------------------------------------- */

#define MAX_VALUES 16

struct series {
    pthread_mutex_t lock;           /* the values */
    pthread_mutex_t listeners_lock; /* the listeners */
    long long total;
    int values[MAX_VALUES];
    int count;
    long long heard[MAX_LISTENERS]; /* each listener's running total */
    int listening[MAX_LISTENERS];   /* whether it still listens */
    int listeners;                  /* ids given out */
};

static struct series all_series[MAX_OBJECTS];
static int series_made;
static pthread_mutex_t series_registry = PTHREAD_MUTEX_INITIALIZER;

static struct series *series_at(int h) {
    pthread_mutex_lock(&series_registry);
    struct series *s = h >= 0 && h < series_made ? &all_series[h] : 0;
    pthread_mutex_unlock(&series_registry);
    return s;
}

static int series_make(void) {
    pthread_mutex_lock(&series_registry);
    int h = series_made < MAX_OBJECTS ? series_made++ : -1;
    if (h >= 0) {
        struct series *s = &all_series[h];
        pthread_mutex_init(&s->lock, 0);
        pthread_mutex_init(&s->listeners_lock, 0);
        s->total = 0;
        s->count = s->listeners = 0;
    }
    pthread_mutex_unlock(&series_registry);
    return h;
}

/* With the listeners' lock held: tells every listener of a change. */
static void tell(struct series *s, long long change) {
    for (int i = 0; i < s->listeners; i++)
        if (s->listening[i]) s->heard[i] += change;
}

/* Appends v; the number of values, or -1 when the series is full. */
static int ts_add(int h, int v, int atomic) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    if (s->count == MAX_VALUES) {
        pthread_mutex_unlock(&s->lock);
        return -1;
    }
    s->values[s->count++] = v;
    s->total += v;
    int count = s->count;
    if (!atomic) pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->listeners_lock);
    tell(s, v);
    pthread_mutex_unlock(&s->listeners_lock);
    if (atomic) pthread_mutex_unlock(&s->lock);
    return count;
}

/* A new listener, which starts knowing the series' total. */
static int ts_listen(int h, int atomic) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    long long start = s->total;
    if (!atomic) pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->listeners_lock);
    int id = s->listeners < MAX_LISTENERS ? s->listeners++ : -1;
    if (id >= 0) {
        s->heard[id] = start;
        s->listening[id] = 1;
    }
    pthread_mutex_unlock(&s->listeners_lock);
    if (atomic) pthread_mutex_unlock(&s->lock);
    return id;
}

/* With the listeners' lock held: whether `id` is a listener still
 * listening. */
static int listens(const struct series *s, int id) {
    return id >= 0 && id < s->listeners && s->listening[id];
}

/* Stops listener `id`; 1 if it was listening. */
static int ts_unlisten(int h, int id) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->listeners_lock);
    int was = listens(s, id);
    if (was) s->listening[id] = 0;
    pthread_mutex_unlock(&s->listeners_lock);
    return was;
}

/* What listener `id` heard: its total, or -1 if it does not listen. */
static int ts_heard(int h, int id) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->listeners_lock);
    int heard = listens(s, id) ? (int)s->heard[id] : -1;
    pthread_mutex_unlock(&s->listeners_lock);
    return heard;
}

/* Removes the last value (or, with `all`, every value) and tells the
 * listeners; what was removed. */
static int ts_remove(int h, int all) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    pthread_mutex_lock(&s->listeners_lock);
    long long removed = 0;
    while (s->count > 0) {
        removed += s->values[--s->count];
        if (!all) break;
    }
    s->total -= removed;
    tell(s, -removed);
    pthread_mutex_unlock(&s->listeners_lock);
    pthread_mutex_unlock(&s->lock);
    return (int)removed;
}

/* The number of values (`what` 0), the value at `i` (1), the least (2) or
 * the greatest (3); 0 for a value the series does not have. */
static int ts_query(int h, int what, int i) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    int result = 0;
    if (what == 0) {
        result = s->count;
    } else if (what == 1) {
        result = i >= 0 && i < s->count ? s->values[i] : 0;
    } else {
        for (int k = 0; k < s->count; k++) {
            int v = s->values[k];
            if (k == 0 || (what == 2 ? v < result : v > result)) result = v;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return result;
}

/* Checks that every listener heard exactly the series' values. */
static int ts_check(int h) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    pthread_mutex_lock(&s->listeners_lock);
    int agree = 1;
    for (int i = 0; i < s->listeners; i++) agree &= !s->listening[i] || s->heard[i] == s->total;
    long long total = s->total;
    pthread_mutex_unlock(&s->listeners_lock);
    pthread_mutex_unlock(&s->lock);
    weft_assert(agree, "a listener's total differs from the series' total");
    return (int)total;
}

#define SERIES_METHODS(P, ATOMIC)                                                           \
    EXPORT(#P "_new") int P##_new(void) { return series_make(); }                           \
    EXPORT(#P "_add") int P##_add(int h, int v) { return ts_add(h, v, ATOMIC); }        \
    EXPORT(#P "_listen") int P##_listen(int h) { return ts_listen(h, ATOMIC); }         \
    EXPORT(#P "_check") int P##_check(int h) { return ts_check(h); }                    \
    EXPORT(#P "_unlisten") int P##_unlisten(int h, int id) { return ts_unlisten(h, id); } \
    EXPORT(#P "_heard") int P##_heard(int h, int id) { return ts_heard(h, id); }        \
    EXPORT(#P "_delete_last") int P##_delete_last(int h) { return ts_remove(h, 0); }    \
    EXPORT(#P "_clear") int P##_clear(int h) { return ts_remove(h, 1); }                \
    EXPORT(#P "_count") int P##_count(int h) { return ts_query(h, 0, 0); }              \
    EXPORT(#P "_value_at") int P##_value_at(int h, int i) { return ts_query(h, 1, i); } \
    EXPORT(#P "_min") int P##_min(int h) { return ts_query(h, 2, 0); }                  \
    EXPORT(#P "_max") int P##_max(int h) { return ts_query(h, 3, 0); }

SERIES_METHODS(series, 0)
SERIES_METHODS(cseries, 1)

int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
